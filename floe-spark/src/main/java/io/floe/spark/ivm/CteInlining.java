package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import scala.runtime.AbstractPartialFunction;

/**
 * A parsed query with its common table expressions inlined: each reference to one replaced by its
 * body under its name, as Spark's analyzer inlines them. A body referenced twice is then read
 * twice, each read of its tables a reference of its own, which is what a delta rule needing a term
 * per read (an outer join's) can work with. Recursive common table expressions are not inlined.
 */
final class CteInlining {
  /** Thrown inside the walk for a query that cannot be inlined. */
  private static final class NotInlined extends RuntimeException {
    NotInlined() {
      super(null, null, false, false);
    }
  }

  private CteInlining() {}

  /** {@code parsed} with every common table expression inlined; empty when one is recursive. */
  static Optional<LogicalPlan> inline(LogicalPlan parsed) {
    try {
      return Optional.of(inline(parsed, Map.of()));
    } catch (NotInlined e) {
      return Optional.empty();
    }
  }

  private static LogicalPlan inline(LogicalPlan plan, Map<String, LogicalPlan> scope) {
    if (plan instanceof UnresolvedWith with) {
      if (with.allowRecursion()) {
        throw new NotInlined();
      }
      Map<String, LogicalPlan> inner = new HashMap<>(scope);
      for (scala.Tuple3<String, SubqueryAlias, scala.Option<Object>> cte : Scala.list(with.cteRelations())) {
        // A body sees the expressions defined before it, not itself.
        inner.put(cte._1().toLowerCase(Locale.ROOT), inline(cte._2(), inner));
      }
      return inline(with.child(), inner);
    }
    if (plan instanceof UnresolvedRelation relation && relation.multipartIdentifier().size() == 1) {
      LogicalPlan body = scope.get(relation.multipartIdentifier().head().toLowerCase(Locale.ROOT));
      if (body != null) {
        return body;
      }
    }
    List<LogicalPlan> children = Scala.list(plan.children()).stream().map(child -> inline(child, scope)).toList();
    LogicalPlan withChildren = children.isEmpty() ? plan : plan.withNewChildren(Scala.seq(children));
    return withChildren.transformExpressions(
        new AbstractPartialFunction<Expression, Expression>() {
          @Override
          public boolean isDefinedAt(Expression e) {
            return e instanceof SubqueryExpression;
          }

          @Override
          public Expression apply(Expression e) {
            SubqueryExpression subquery = (SubqueryExpression) e;
            return subquery.withNewPlan(inline(subquery.plan(), scope));
          }
        });
  }
}
