package io.floe.spark.rewrite;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * The filter that turns an MV's rows into the rows a query keeps: the query's conjuncts the MV
 * did not already apply, computed from the MV's columns (its grouping columns when it
 * aggregates, so that whole groups are kept or dropped).
 */
final class Compensation {
  private final List<Expression> residual;

  private Compensation(List<Expression> residual) {
    this.residual = residual;
  }

  /** The query's conjuncts that the MV's definition does not contain. */
  static Compensation between(QueryBlock query, QueryBlock view) {
    List<Expression> residual = new ArrayList<>();
    for (Expression q : query.conjuncts()) {
      if (view.conjuncts().stream().noneMatch(m -> m.semanticEquals(q))) {
        residual.add(q);
      }
    }
    return new Compensation(residual);
  }

  boolean isEmpty() {
    return residual.isEmpty();
  }

  /**
   * {@code rows} filtered by the residual conjuncts, or a message naming the first conjunct the
   * view's columns cannot compute.
   */
  Applied apply(ViewColumns view, LogicalPlan rows) {
    QueryBlock definition = view.definition();
    if (!residual.isEmpty() && definition.isAggregate() && definition.grouping().isEmpty()) {
      // One row aggregates all of the view's input: a filter of that input, even one that reads
      // no column (WHERE false, an outer query's column), changes the aggregates, not the row count.
      return new Applied(Optional.empty(), "the query's filter " + QueryBlock.shown(residual.get(0))
          + " applies before aggregating, and the view keeps one row for all of its input");
    }
    Expression condition = null;
    for (Expression conjunct : residual) {
      Optional<Expression> expressed = view.express(conjunct);
      if (expressed.isEmpty()) {
        return new Applied(Optional.empty(), "the query's filter " + QueryBlock.shown(conjunct) + " needs a column the view does not keep"
            + (view.definition().isAggregate() ? " as a grouping column" : ""));
      }
      condition = condition == null ? expressed.get() : new And(condition, expressed.get());
    }
    return new Applied(Optional.of(condition == null ? rows : new Filter(condition, rows)), "");
  }

  /** The filtered rows, or why there are none. */
  record Applied(Optional<LogicalPlan> plan, String reason) {}
}
