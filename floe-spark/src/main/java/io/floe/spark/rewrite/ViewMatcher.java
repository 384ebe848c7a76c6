package io.floe.spark.rewrite;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;

/**
 * Decides whether an MV's definition answers a query block, and builds the plan over the MV's
 * storage read that does: the same tables, the query's filters implying the MV's (the rest
 * applied as a {@link Compensation}), and the query's groups equal to or coarser than the MV's
 * ({@link AggregateRollup}). A plan is built only when every output can be computed.
 */
final class ViewMatcher {
  private ViewMatcher() {}

  /** A plan equivalent to the query block, or the reason the view cannot give one. */
  record Outcome(Optional<LogicalPlan> plan, String how) {
    static Outcome no(String reason) {
      return new Outcome(Optional.empty(), reason);
    }
  }

  /** The structural checks that need no storage read; empty when the view may answer. */
  static Optional<String> precheck(QueryBlock query, QueryBlock view) {
    if (!query.leaves().equals(view.leaves())) {
      return Optional.of("it reads other tables than this part of the query");
    }
    if (view.isAggregate() && !query.isAggregate()) {
      return Optional.of("it aggregates and the query does not");
    }
    for (Expression m : view.conjuncts()) {
      if (!PredicateImplication.implied(m, query.conjuncts())) {
        return Optional.of("the query's filters do not imply the view's filter " + QueryBlock.shown(m));
      }
    }
    return Optional.empty();
  }

  /** Builds the answer from {@code read}, the MV's storage rows described by {@code view}. */
  static Outcome answer(QueryBlock query, ViewColumns view, LogicalPlan read, String timeZone) {
    Compensation.Applied filtered = Compensation.between(query, view.definition()).apply(view, read);
    if (filtered.plan().isEmpty()) {
      return Outcome.no(filtered.reason());
    }
    LogicalPlan rows = filtered.plan().get();
    List<Attribute> outputs = query.outputAttributes();
    if (!query.isAggregate() || !view.definition().isAggregate()) {
      // The view keeps rows: compute the query's columns (and aggregates) from them.
      List<Expression> grouping = new ArrayList<>();
      for (Expression g : query.grouping()) {
        Optional<Expression> x = view.express(g);
        if (x.isEmpty()) {
          return Outcome.no("the query groups by " + QueryBlock.shown(g) + ", which the view's columns cannot compute");
        }
        grouping.add(x.get());
      }
      List<NamedExpression> named = new ArrayList<>();
      for (int i = 0; i < outputs.size(); i++) {
        Optional<Expression> x = view.express(query.outputs().get(i));
        if (x.isEmpty()) {
          return Outcome.no("the query's column " + QueryBlock.shown(query.outputs().get(i)) + " needs a column the view does not keep");
        }
        named.add(alias(x.get(), outputs.get(i), timeZone));
      }
      LogicalPlan plan =
          query.isAggregate()
              ? new Aggregate(Scala.seq(grouping), Scala.seq(named), rows, Scala.none())
              : new Project(Scala.seq(named), rows);
      return new Outcome(Optional.of(plan), query.isAggregate() ? "aggregated from the view's rows" : "rows of the view");
    }
    List<Expression> grouping = new ArrayList<>();
    for (Expression g : query.grouping()) {
      Optional<Expression> x = view.express(g);
      if (x.isEmpty()) {
        return Outcome.no("the query groups by " + QueryBlock.shown(g) + ", which is not a grouping column of the view (finer groups)");
      }
      grouping.add(x.get());
    }
    if (sameGroups(query, view)) {
      Optional<List<NamedExpression>> direct = direct(query, view, timeZone);
      if (direct.isPresent()) {
        return new Outcome(Optional.of(new Project(Scala.seq(direct.get()), rows)), "same groups, columns read as stored");
      }
    }
    AggregateRollup rollup = new AggregateRollup(view, timeZone);
    List<NamedExpression> named = new ArrayList<>();
    for (int i = 0; i < outputs.size(); i++) {
      String[] reason = {""};
      Optional<Expression> x = rolledUp(query.outputs().get(i), view, rollup, reason);
      if (x.isEmpty()) {
        return Outcome.no(reason[0]);
      }
      named.add(alias(x.get(), outputs.get(i), timeZone));
    }
    return new Outcome(
        Optional.of(new Aggregate(Scala.seq(grouping), Scala.seq(named), rows, Scala.none())),
        "rolled up from the view's groups");
  }

  /** True when the query groups exactly as the view does, every grouping expression a view column. */
  private static boolean sameGroups(QueryBlock query, ViewColumns view) {
    List<Expression> q = query.grouping();
    List<Expression> m = view.definition().grouping();
    return view.everyGroupingSelected()
        && q.stream().allMatch(g -> m.stream().anyMatch(g::semanticEquals))
        && m.stream().allMatch(g -> q.stream().anyMatch(g::semanticEquals));
  }

  /** Every output read from the view's columns as they are, when the groups are the same. */
  private static Optional<List<NamedExpression>> direct(QueryBlock query, ViewColumns view, String timeZone) {
    List<NamedExpression> named = new ArrayList<>();
    for (int i = 0; i < query.outputs().size(); i++) {
      Optional<Expression> x = directly(query.outputs().get(i), view);
      if (x.isEmpty()) {
        return Optional.empty();
      }
      named.add(alias(x.get(), query.outputAttributes().get(i), timeZone));
    }
    return Optional.of(named);
  }

  private static Optional<Expression> directly(Expression e, ViewColumns view) {
    if (e instanceof AggregateExpression) {
      AggregateExpression aggregate = (AggregateExpression) e;
      Optional<ViewColumns.Column> column = view.aggregateColumn(aggregate);
      if (column.isPresent()) {
        return Optional.of(column.get().attribute());
      }
      boolean countRows =
          aggregate.aggregateFunction() instanceof Count
              && !aggregate.isDistinct()
              && aggregate.filter().isEmpty()
              && Scala.list(aggregate.aggregateFunction().children()).stream()
                  .allMatch(a -> a instanceof Literal && ((Literal) a).value() != null);
      return countRows ? view.rowCount().map(a -> (Expression) a) : Optional.empty();
    }
    Optional<Expression> key = view.express(e);
    if (key.isPresent() || e.children().isEmpty()) {
      return key;
    }
    List<Expression> children = new ArrayList<>();
    for (Expression child : Scala.list(e.children())) {
      Optional<Expression> x = directly(child, view);
      if (x.isEmpty()) {
        return Optional.empty();
      }
      children.add(x.get());
    }
    return Optional.of(e.withNewChildren(Scala.seq(children)));
  }

  private static Optional<Expression> rolledUp(Expression e, ViewColumns view, AggregateRollup rollup, String[] reason) {
    if (e instanceof AggregateExpression) {
      AggregateRollup.Rolled rolled = rollup.rollup((AggregateExpression) e);
      reason[0] = rolled.reason();
      return rolled.expression();
    }
    Optional<Expression> key = view.express(e);
    if (key.isPresent()) {
      return key;
    }
    if (e.children().isEmpty()) {
      reason[0] = "the query's column " + QueryBlock.shown(e) + " is not a grouping column of the view";
      return Optional.empty();
    }
    List<Expression> children = new ArrayList<>();
    for (Expression child : Scala.list(e.children())) {
      Optional<Expression> x = rolledUp(child, view, rollup, reason);
      if (x.isEmpty()) {
        if (reason[0].isEmpty()) {
          reason[0] = "the query's column " + QueryBlock.shown(e) + " cannot be computed from the view";
        }
        return Optional.empty();
      }
      children.add(x.get());
    }
    return Optional.of(e.withNewChildren(Scala.seq(children)));
  }

  /** {@code value} under the query's own output attribute, so the plan above still resolves. */
  private static NamedExpression alias(Expression value, Attribute original, String timeZone) {
    Expression typed =
        value.dataType().sameType(original.dataType()) ? value : new Cast(value, original.dataType(), Scala.some(timeZone));
    return new Alias(typed, original.name(), original.exprId(), original.qualifier(), Scala.none(), Scala.seq());
  }
}
