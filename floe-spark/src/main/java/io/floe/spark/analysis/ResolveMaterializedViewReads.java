package io.floe.spark.analysis;

import io.floe.FloeException;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.analysis.GetColumnByOrdinal;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.UpCast;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import scala.runtime.AbstractPartialFunction;

/**
 * Makes a read of a materialized view read its storage table instead of computing the view's SQL.
 *
 * <p>Either this rule sees the reference first, as an unresolved relation, or Iceberg's view
 * resolution has already expanded it into {@code SubqueryAlias(name, Project(UpCast(ordinal)...,
 * definition))}; both are replaced by the storage table projected to the view's columns, under
 * the name the query used, so qualified column references keep working.
 */
public final class ResolveMaterializedViewReads extends Rule<LogicalPlan> {
  private final SparkSession spark;

  public ResolveMaterializedViewReads(org.apache.spark.sql.SparkSession spark) {
    this.spark = (SparkSession) spark;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return plan.resolveOperators(
        new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
          @Override
          public boolean isDefinedAt(LogicalPlan node) {
            return node instanceof UnresolvedRelation || isExpandedView(node);
          }

          @Override
          public LogicalPlan apply(LogicalPlan node) {
            if (node instanceof UnresolvedRelation) {
              UnresolvedRelation relation = (UnresolvedRelation) node;
              List<String> parts = Scala.list(relation.multipartIdentifier());
              if (spark.sessionState().catalog().isTempView(relation.multipartIdentifier())) {
                return node;
              }
              return materializedView(parts).map(mv -> storageRead(parts, mv)).orElse(node);
            }
            SubqueryAlias alias = (SubqueryAlias) node;
            List<String> parts = new ArrayList<>(Scala.list(alias.identifier().qualifier()));
            parts.add(alias.identifier().name());
            return materializedView(parts).map(mv -> storageRead(parts, mv)).orElse(node);
          }
        });
  }

  /** Iceberg's expansion of a view reference, before it is resolved. */
  private static boolean isExpandedView(LogicalPlan node) {
    if (!(node instanceof SubqueryAlias) || node.resolved()) {
      return false;
    }
    LogicalPlan child = ((SubqueryAlias) node).child();
    if (!(child instanceof Project)) {
      return false;
    }
    List<NamedExpression> projections = Scala.list(((Project) child).projectList());
    return !projections.isEmpty()
        && projections.stream()
            .allMatch(
                e ->
                    e instanceof Alias
                        && ((Alias) e).child() instanceof UpCast
                        && ((UpCast) ((Alias) e).child()).child() instanceof GetColumnByOrdinal);
  }

  private Optional<MaterializedView> materializedView(List<String> parts) {
    try {
      MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
      return catalog.load(catalog.resolve(parts, null, null));
    } catch (FloeException notAnIcebergName) {
      return Optional.empty();
    }
  }

  /** The storage table under the view's name, showing the view's rows and columns only. */
  private LogicalPlan storageRead(List<String> nameAsWritten, MaterializedView mv) {
    return new SourcePinning(spark).materializedViewRead(nameAsWritten, mv, Optional.empty());
  }
}
