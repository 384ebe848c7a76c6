package io.floe.spark.analysis;

import io.floe.FloeException;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import io.floe.ErrorMessages;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.spark.sql.catalyst.analysis.GetColumnByOrdinal;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;
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
 * the name the query used, so qualified column references keep working. A time-travel read of a
 * view ({@code VERSION AS OF}, {@code TIMESTAMP AS OF}) reads its storage table as of that version
 * or time alike.
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
            return node instanceof UnresolvedRelation
                || isExpandedView(node)
                || (node instanceof RelationTimeTravel travel && travel.relation() instanceof UnresolvedRelation);
          }

          @Override
          public LogicalPlan apply(LogicalPlan node) {
            if (node instanceof RelationTimeTravel travel) {
              if (travel.timestamp().isDefined() && !travel.timestamp().get().resolved()) {
                return node;
              }
              return storageRead((UnresolvedRelation) travel.relation(), mv -> Optional.of(snapshotAsOf(mv, travel)))
                  .orElse(node);
            }
            if (node instanceof UnresolvedRelation relation) {
              return storageRead(relation, mv -> Optional.empty()).orElse(node);
            }
            SubqueryAlias alias = (SubqueryAlias) node;
            List<String> parts = new ArrayList<>(Scala.list(alias.identifier().qualifier()));
            parts.add(alias.identifier().name());
            return materializedView(parts).map(mv -> storageRead(parts, mv, Optional.empty())).orElse(node);
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

  /**
   * The storage snapshot a time-travel read of {@code mv} reads: the one with the given id, the
   * one a tag or branch of that name points to, or the last one committed at or before the given
   * time, as for a table.
   */
  private long snapshotAsOf(MaterializedView mv, RelationTimeTravel travel) {
    Table storage = mv.storageTable();
    if (travel.version().isDefined()) {
      String version = travel.version().get();
      SnapshotRef ref = storage.refs().get(version);
      if (ref != null) {
        return ref.snapshotId();
      }
      if (version.matches("-?\\d+") && storage.snapshot(Long.parseLong(version)) != null) {
        return Long.parseLong(version);
      }
      throw new FloeException(
          "Cannot read materialized view " + mv + " as of version " + version
              + ": its storage table has no snapshot, tag or branch of that name");
    }
    Expression timestamp = travel.timestamp().get();
    Object micros =
        new Cast(timestamp, DataTypes.TimestampType, Option.apply(spark.sessionState().conf().sessionLocalTimeZone()))
            .eval(null);
    if (micros == null) {
      throw new FloeException("Cannot read materialized view " + mv + " as of a NULL timestamp");
    }
    long millis = Math.floorDiv((Long) micros, 1000L);
    try {
      return SnapshotUtil.snapshotIdAsOfTime(storage, millis);
    } catch (IllegalArgumentException e) {
      throw new FloeException(
          "Cannot read materialized view " + mv + " as of " + timestamp.sql()
              + ": its storage table has no snapshot that old (" + ErrorMessages.firstLine(e.getMessage()) + ")", e);
    }
  }

  private Optional<MaterializedView> materializedView(List<String> parts) {
    try {
      MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
      return catalog.load(catalog.resolve(parts, null, null));
    } catch (FloeException notAnIcebergName) {
      return Optional.empty();
    }
  }

  /**
   * The read of the materialized view {@code relation} names (not a temporary view) at the
   * snapshot {@code snapshot} gives for it (its current one when empty); empty when it names none.
   */
  private Optional<LogicalPlan> storageRead(
      UnresolvedRelation relation, java.util.function.Function<MaterializedView, Optional<Long>> snapshot) {
    if (spark.sessionState().catalog().isTempView(relation.multipartIdentifier())) {
      return Optional.empty();
    }
    List<String> parts = Scala.list(relation.multipartIdentifier());
    return materializedView(parts).map(mv -> storageRead(parts, mv, snapshot.apply(mv)));
  }

  /** The storage table under the view's name, showing the view's rows and columns only. */
  private LogicalPlan storageRead(List<String> nameAsWritten, MaterializedView mv, Optional<Long> snapshot) {
    return new SourcePinning(spark).materializedViewRead(nameAsWritten, mv, snapshot);
  }
}
