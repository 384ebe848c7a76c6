package io.floe.spark.mv;

import io.floe.FloeException;
import io.floe.spark.Scala;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.ArraySort;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Size;
import org.apache.spark.sql.catalyst.expressions.SortArray;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.expressions.WindowExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.ListAgg;
import org.apache.spark.sql.catalyst.expressions.aggregate.Mode;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.MetadataAttribute$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * Refuses definitions whose rows are not a function of the source data: non-deterministic
 * functions, and ORDER BY, LIMIT and their kin, which a table cannot keep.
 */
public final class DefinitionValidator {
  /** Plan nodes a definition may not contain, by the clause a user wrote. */
  private static final Map<String, String> REFUSED_NODES =
      Map.of(
          "Sort", "ORDER BY / SORT BY",
          "GlobalLimit", "LIMIT",
          "LocalLimit", "LIMIT",
          "Offset", "OFFSET",
          "Tail", "TAIL",
          "RepartitionByExpression", "DISTRIBUTE BY / CLUSTER BY",
          "Sample", "TABLESAMPLE");

  /** Deterministic to Catalyst, but different for every refresh or every user. */
  private static final Set<String> TIME_AND_SESSION_FUNCTIONS =
      Set.of(
          "CurrentTimestamp",
          "CurrentDate",
          "CurrentTime",
          "LocalTimestamp",
          "Now",
          "CurrentTimeZone",
          "CurrentUser",
          "CurrentDatabase",
          "CurrentCatalog",
          "CurrentBatchTimestamp");

  private DefinitionValidator() {}

  /** Checks the parsed definition for clauses a materialized view cannot keep. */
  public static void checkClauses(String mvName, LogicalPlan parsed) {
    parsed.foreachWithSubqueries(
        node -> {
          String clause = REFUSED_NODES.get(node.getClass().getSimpleName());
          if (clause != null) {
            throw refused(mvName, clause + " is not allowed in a definition; a materialized view is an unordered set of"
                + " rows, so order or limit when you query it");
          }
          if (node instanceof RelationTimeTravel travel && travel.version().isDefined() && !travel.version().get().matches("\\d+")) {
            throw refused(mvName, "it reads " + travel.relation().simpleString(100) + " VERSION AS OF '"
                + travel.version().get() + "', a branch or tag, which can move without the view's refreshes seeing it;"
                + " read the table itself, or one snapshot (VERSION AS OF its id)");
          }
          if (node instanceof RelationTimeTravel travel && travel.timestamp().isDefined()) {
            checkTimestamp(mvName, travel, travel.timestamp().get());
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  /** Functions of the clock, as the parser leaves them (by name, any case). */
  private static final Set<String> CLOCK_NAMES =
      Set.of("current_timestamp", "now", "current_date", "curdate", "localtimestamp", "current_time", "unix_timestamp");

  /**
   * Refuses {@code TIMESTAMP AS OF} a time that moves with the clock, or that is still to come: the
   * snapshot either names changes as time passes, with no commit for a refresh to see. A time in
   * the past names one snapshot for good, and is allowed.
   */
  private static void checkTimestamp(String mvName, RelationTimeTravel travel, Expression timestamp) {
    String read = "it reads " + travel.relation().simpleString(100) + " TIMESTAMP AS OF " + timestamp.sql();
    boolean clock =
        timestamp.exists(
            (scala.Function1<Expression, Object>)
                e ->
                    TIME_AND_SESSION_FUNCTIONS.contains(e.getClass().getSimpleName())
                        || (e instanceof UnresolvedFunction f
                            && CLOCK_NAMES.contains(f.nameParts().last().toLowerCase(Locale.ROOT))
                            // unix_timestamp(t) converts t; only unix_timestamp() reads the clock.
                            && !(f.nameParts().last().equalsIgnoreCase("unix_timestamp") && !f.arguments().isEmpty()))
                        || (e instanceof UnresolvedAttribute a
                            && CLOCK_NAMES.contains(a.name().toLowerCase(Locale.ROOT))));
    if (clock) {
      throw refused(mvName, read + ", a time that moves with the clock, so the snapshot it names changes without a"
          + " commit the view's refreshes could see; read the table itself, or a fixed time in the past");
    }
    Object micros;
    try {
      micros =
          new Cast(timestamp, DataTypes.TimestampType, scala.Option.apply(SQLConf.get().sessionLocalTimeZone()))
              .eval(InternalRow.empty());
    } catch (RuntimeException e) {
      // Not a constant this check can evaluate: Spark's own resolution of the clause decides.
      return;
    }
    if (micros instanceof Long at && at > ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())) {
      throw refused(mvName, read + ", a time still to come, so the snapshot it names changes with each commit"
          + " until then without the view's refreshes seeing it; read the table itself, or a time in the past");
    }
  }

  /**
   * Checks the analyzed definition for non-deterministic functions, and for a table's metadata
   * columns ({@code _file}, {@code _pos}, ...): they tell where a row is stored, which a compaction
   * changes without changing any row, so no refresh can follow them.
   */
  public static void checkDeterministic(String mvName, LogicalPlan analyzed) {
    Map<ExprId, AggregateExpression> collected = new HashMap<>();
    analyzed.foreachWithSubqueries(
        node -> {
          for (Attribute attribute : Scala.list(node.references().toSeq())) {
            if (MetadataAttribute$.MODULE$.isValid(attribute.metadata())) {
              throw refused(mvName, "it reads the metadata column " + attribute.name()
                  + ", which tells where a row is stored and changes when its table is compacted, not when its"
                  + " rows do; a materialized view can read a table's columns only");
            }
          }
          for (Expression expression : Scala.list(node.expressions())) {
            if (expression instanceof Alias alias
                && alias.child() instanceof AggregateExpression aggregate
                && COLLECTED_IN_ORDER.contains(aggregate.aggregateFunction().getClass().getSimpleName())) {
              // HAVING size(collect_set(x)) > 1: the analyzer computes the array as a column of the
              // aggregate and applies size() in a filter above it; its uses decide.
              collected.put(alias.exprId(), aggregate);
              Scala.list(aggregate.children()).forEach(child -> checkExpression(mvName, child, aggregate));
            } else {
              checkExpression(mvName, expression, null);
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    if (collected.isEmpty()) {
      return;
    }
    // The view's columns, and a subquery's, are the array as it was collected.
    checkOutput(mvName, analyzed, collected);
    analyzed.foreachWithSubqueries(
        node -> {
          for (Expression expression : Scala.list(node.expressions())) {
            checkUses(mvName, expression, null, collected);
            expression.foreach(
                e -> {
                  if (e instanceof SubqueryExpression subquery) {
                    checkOutput(mvName, subquery.plan(), collected);
                  }
                  return scala.runtime.BoxedUnit.UNIT;
                });
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  private static void checkOutput(String mvName, LogicalPlan plan, Map<ExprId, AggregateExpression> collected) {
    for (Attribute attribute : Scala.list(plan.output())) {
      if (collected.containsKey(attribute.exprId())) {
        checkOrderDependent(mvName, collected.get(attribute.exprId()), null);
      }
    }
  }

  /**
   * Refuses a use of a collected array ({@code collected}, by the column the aggregate computes it
   * into) that is not sorted or sized by the call around it ({@code enclosing}).
   */
  private static void checkUses(
      String mvName, Expression expression, Expression enclosing, Map<ExprId, AggregateExpression> collected) {
    if (expression instanceof Attribute attribute && collected.containsKey(attribute.exprId())) {
      checkOrderDependent(mvName, collected.get(attribute.exprId()), enclosing);
      return;
    }
    for (Expression child : Scala.list(expression.children())) {
      checkUses(mvName, child, expression, collected);
    }
  }

  /** Aggregates that pick a value by the order rows are read in; Catalyst calls them deterministic. */
  private static final Set<String> PICKED_BY_ORDER = Set.of("First", "Last", "AnyValue");

  /** Aggregates that collect values into an array in the order rows are read in. */
  private static final Set<String> COLLECTED_IN_ORDER = Set.of("CollectList", "CollectSet");

  /**
   * Refuses an aggregate whose value depends on the order its group's rows are read in, which
   * changes with the files a write or a compaction leaves, so two computations from the same
   * source data differ. Over a window ordered by {@code ORDER BY} they follow that order, and an
   * array collected into {@code array_sort} or {@code sort_array} is put in order, and its size is
   * the same in any order: those are allowed.
   */
  private static void checkOrderDependent(String mvName, AggregateExpression aggregate, Expression enclosing) {
    String function = aggregate.aggregateFunction().getClass().getSimpleName();
    boolean picked = PICKED_BY_ORDER.contains(function);
    boolean collected = COLLECTED_IN_ORDER.contains(function);
    boolean unorderedList = aggregate.aggregateFunction() instanceof ListAgg list && list.orderExpressions().isEmpty();
    boolean anyMode = aggregate.aggregateFunction() instanceof Mode mode && mode.reverseOpt().isEmpty();
    if (!picked && !collected && !unorderedList && !anyMode) {
      return;
    }
    if (enclosing instanceof WindowExpression window && !window.windowSpec().orderSpec().isEmpty()) {
      return;
    }
    String name = aggregate.aggregateFunction().prettyName();
    if (unorderedList) {
      throw refused(mvName, "its definition calls " + name + "() without WITHIN GROUP (ORDER BY ...), which joins the"
          + " values in the order rows are read, which changes with the files writes and compactions leave; a"
          + " materialized view must give the same rows for the same source data: give the order, as in "
          + name + "(x, ',') WITHIN GROUP (ORDER BY x)");
    }
    if (anyMode) {
      throw refused(mvName, "its definition calls mode(), which returns any one of equally frequent values, the one"
          + " the order rows are read in gives; a materialized view must give the same rows for the same source"
          + " data: use mode(x, true) or mode() WITHIN GROUP (ORDER BY x), which return the smallest");
    }
    if (collected && (enclosing instanceof SortArray || enclosing instanceof ArraySort)
        || enclosing instanceof Size) {
      return;
    }
    String call = aggregate.aggregateFunction().prettyName() + "()";
    throw refused(mvName, picked
        ? "its definition calls " + call + ", whose value is that of whichever row is read first, which changes"
            + " with the files writes and compactions leave; a materialized view must give the same rows for the same"
            + " source data: use min(), max(), or max_by(value, ordering) to say which row"
        : "its definition calls " + call + ", whose array lists the values in the order rows are read, which changes"
            + " with the files writes and compactions leave; a materialized view must give the same rows for the same"
            + " source data: sort it, as in array_sort(" + call.replace("()", "(...)") + ")");
  }

  private static FloeException refused(String mvName, String problem) {
    return new FloeException("Cannot create materialized view " + mvName + ": " + problem);
  }

  /**
   * Refuses {@code expression} or a call in it that is not deterministic. {@code enclosing} is the
   * nearest call around it, named too: the analyzer writes some calls as others ({@code
   * unix_timestamp()} reads {@code current_timestamp()}), so the call found may not be the one written.
   */
  private static void checkExpression(String mvName, Expression expression, Expression enclosing) {
    String kind = expression.getClass().getSimpleName();
    boolean timeOrSession = TIME_AND_SESSION_FUNCTIONS.contains(kind);
    boolean leafNonDeterministic =
        !expression.deterministic()
            && Scala.list(expression.children()).stream().allMatch(Expression::deterministic);
    if (timeOrSession || leafNonDeterministic) {
      throw refused(mvName,
          "its definition calls the non-deterministic function "
              + expression.prettyName()
              + "()"
              + (enclosing == null ? "" : " (in " + enclosing.sql() + ")")
              + "; a materialized view must give the same rows for the same source data");
    }
    if (expression instanceof AggregateExpression aggregate) {
      checkOrderDependent(mvName, aggregate, enclosing);
    }
    Expression around = expression instanceof org.apache.spark.sql.catalyst.expressions.Alias ? enclosing : expression;
    for (Expression child : Scala.list(expression.children())) {
      checkExpression(mvName, child, around);
    }
  }
}
