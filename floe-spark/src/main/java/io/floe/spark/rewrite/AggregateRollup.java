package io.floe.spark.rewrite;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ArrayDistinct;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Flatten;
import org.apache.spark.sql.catalyst.expressions.MapKeys;
import org.apache.spark.sql.catalyst.expressions.Size;
import org.apache.spark.sql.catalyst.expressions.aggregate.CollectList;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Divide;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Literal$;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import io.floe.spark.ivm.AverageState;
import io.floe.spark.ivm.ValueCounts;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;

/**
 * Computes a query's aggregate from the groups of an aggregate MV whose groups are finer than the
 * query's: SUM as the sum of the groups' sums, COUNT as the sum of their counts (a view's COUNT
 * column or the GROUPS layout's hidden counters), MIN and MAX of the groups' MIN and MAX, AVG as
 * the rolled-up sum over the rolled-up count of non-null values, and duplicate-insensitive
 * aggregates (DISTINCT ones, MIN, MAX) of grouping columns directly, and COUNT(DISTINCT x) from the
 * view's COUNT(DISTINCT x) as the distinct values of its groups' hidden value counts. Anything else cannot be
 * rolled up and the view is rejected with the reason.
 */
final class AggregateRollup {
  private final ViewColumns view;
  private final String timeZone;

  AggregateRollup(ViewColumns view, String timeZone) {
    this.view = view;
    this.timeZone = timeZone;
  }

  /** The rolled-up aggregate, or a message saying why it cannot be computed from the view. */
  Rolled rollup(AggregateExpression aggregate) {
    AggregateFunction function = aggregate.aggregateFunction();
    String shown = QueryBlock.shown(aggregate);
    if (aggregate.filter().isDefined()) {
      return Rolled.no(shown + " has a FILTER clause, which is not rolled up");
    }
    if (aggregate.isDistinct() || function instanceof Min || function instanceof Max) {
      Optional<List<Expression>> keys = expressAll(Scala.list(function.children()));
      if (keys.isPresent()) {
        AggregateFunction over = (AggregateFunction) function.withNewChildren(Scala.seq(keys.get()));
        return Rolled.to(over.toAggregateExpression(aggregate.isDistinct(), Scala.none()));
      }
      if (aggregate.isDistinct()) {
        return distinctValues(aggregate)
            .map(Rolled::to)
            .orElse(Rolled.no(shown + " needs its argument to be a grouping column of the view, or the view's own COUNT(DISTINCT) of it"));
      }
    }
    Optional<ViewColumns.Column> same = view.aggregateColumn(aggregate);
    if (function instanceof Min || function instanceof Max) {
      return same.map(c -> Rolled.to(((AggregateFunction) function.withNewChildren(Scala.seq(c.attribute()))).toAggregateExpression()))
          .orElse(Rolled.no(shown + " is not a column of the view"));
    }
    if (function instanceof Sum) {
      return same.map(c -> Rolled.to(cast(sum(c.attribute()), aggregate.dataType())))
          .orElse(Rolled.no(shown + " is not a column of the view"));
    }
    if (function instanceof Count) {
      return countOf(aggregate, same).map(Rolled::to).orElse(Rolled.no(shown + " has no count in the view to roll up"));
    }
    if (function instanceof Average) {
      return average(aggregate);
    }
    return Rolled.no(shown + " cannot be rolled up from coarser groups");
  }

  /** A rolled-up expression, or the reason there is none. */
  record Rolled(Optional<Expression> expression, String reason) {
    static Rolled to(Expression e) {
      return new Rolled(Optional.of(e), "");
    }

    static Rolled no(String reason) {
      return new Rolled(Optional.empty(), reason);
    }
  }

  /**
   * COUNT(DISTINCT x) over coarser groups from the view's COUNT(DISTINCT x) column: the number of
   * distinct values of the groups' hidden value counts, each holding every value of x in its group.
   */
  private Optional<Expression> distinctValues(AggregateExpression aggregate) {
    if (!(aggregate.aggregateFunction() instanceof Count) || aggregate.aggregateFunction().children().size() != 1) {
      return Optional.empty();
    }
    return view.aggregateColumn(aggregate)
        .flatMap(view::distinctState)
        .map(state -> {
          // Packed counts; a storage table written before they were packed holds a map.
          Expression map =
              state.dataType() instanceof BinaryType
                  ? new ValueCounts.Unpack(state, aggregate.aggregateFunction().children().head().dataType())
                  : state;
          Expression keys = new CollectList(new MapKeys(map), 0, 0).toAggregateExpression();
          return cast(new Size(new ArrayDistinct(new Flatten(keys)), false), aggregate.dataType());
        });
  }

  private Optional<Expression> countOf(AggregateExpression aggregate, Optional<ViewColumns.Column> same) {
    if (same.isPresent()) {
      return Optional.of(total(same.get().attribute()));
    }
    List<Expression> arguments = Scala.list(aggregate.aggregateFunction().children());
    boolean rows =
        arguments.stream().allMatch(a -> a.foldable() && a instanceof Literal && ((Literal) a).value() != null);
    if (rows) {
      return view.rowCount().map(this::total);
    }
    if (arguments.size() == 1) {
      return nonNullCount(arguments.get(0)).map(this::total);
    }
    return Optional.empty();
  }

  /** A view column counting the non-null values of {@code argument}: a COUNT column or a SUM's hidden count. */
  private Optional<Expression> nonNullCount(Expression argument) {
    Optional<ViewColumns.Column> count =
        view.aggregateColumn(new Count(Scala.seq(argument)).toAggregateExpression());
    if (count.isPresent()) {
      return Optional.of(count.get().attribute());
    }
    return view.aggregateColumn(new Sum(argument).toAggregateExpression())
        .flatMap(view::nonNullCount)
        .map(a -> (Expression) a);
  }

  private Rolled average(AggregateExpression aggregate) {
    Expression argument = aggregate.aggregateFunction().children().head();
    Optional<ViewColumns.Column> sum = view.aggregateColumn(new Sum(argument).toAggregateExpression());
    Optional<Expression> count = nonNullCount(argument);
    if (sum.isEmpty() || count.isEmpty()) {
      return ownAverage(aggregate)
          .map(Rolled::to)
          .orElse(Rolled.no(QueryBlock.shown(aggregate) + " needs SUM and COUNT of its argument in the view, or the view's own AVG of it"));
    }
    Expression total = total(count.get());
    if (argument.dataType() instanceof DecimalType decimal) {
      return Rolled.to(decimalAverage(aggregate, decimal, sum.get(), total));
    }
    Expression quotient =
        new Divide(cast(sum(sum.get().attribute()), DataTypes.DoubleType), cast(total, DataTypes.DoubleType));
    Expression guarded =
        new If(new EqualTo(total, Literal$.MODULE$.apply(0L)), Literal$.MODULE$.create(null, DataTypes.DoubleType), quotient);
    return Rolled.to(cast(guarded, aggregate.dataType()));
  }

  /**
   * AVG over coarser groups from the view's own AVG column: Spark's AVG evaluated over the groups'
   * hidden running sums and non-null counts, added up.
   */
  private Optional<Expression> ownAverage(AggregateExpression aggregate) {
    if (!(aggregate.aggregateFunction() instanceof Average average)) {
      return Optional.empty();
    }
    Optional<ViewColumns.Column> column = view.aggregateColumn(aggregate);
    Optional<Attribute> runningSum = column.flatMap(view::runningSum);
    Optional<Attribute> count = column.flatMap(view::nonNullCount);
    if (runningSum.isEmpty() || count.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(cast(AverageState.evaluate(average, sum(runningSum.get()), total(count.get())), aggregate.dataType()));
  }

  /**
   * AVG of a DECIMAL divides exactly as Spark's own AVG does, so that it rounds the same: the sum
   * in AVG's buffer type DECIMAL(p + 10, s) (the type of the view's SUM column, so summing its
   * groups loses nothing), divided by the count as DECIMAL(20, 0), cast to AVG's DECIMAL(p + 4, s + 4).
   */
  private Expression decimalAverage(
      AggregateExpression aggregate, DecimalType argument, ViewColumns.Column sum, Expression total) {
    DataType sumType = new DecimalType(Math.min(DecimalType.MAX_PRECISION(), argument.precision() + 10), argument.scale());
    Expression quotient = new Divide(cast(sum(sum.attribute()), sumType), cast(total, new DecimalType(20, 0)));
    Expression guarded =
        new If(new EqualTo(total, Literal$.MODULE$.apply(0L)), Literal$.MODULE$.create(null, quotient.dataType()), quotient);
    return cast(guarded, aggregate.dataType());
  }

  private Optional<List<Expression>> expressAll(List<Expression> expressions) {
    List<Expression> expressed = new ArrayList<>();
    for (Expression e : expressions) {
      Optional<Expression> x = view.express(e);
      if (x.isEmpty()) {
        return Optional.empty();
      }
      expressed.add(x.get());
    }
    return Optional.of(expressed);
  }

  private static Expression sum(Expression e) {
    return new Sum(e).toAggregateExpression();
  }

  /** The sum of counts, 0 over no groups. */
  private Expression total(Expression count) {
    return new Coalesce(Scala.seq(cast(sum(count), DataTypes.LongType), Literal$.MODULE$.apply(0L)));
  }

  private Expression cast(Expression e, DataType type) {
    return e.dataType().sameType(type) ? e : new Cast(e, type, Scala.some(timeZone));
  }
}
