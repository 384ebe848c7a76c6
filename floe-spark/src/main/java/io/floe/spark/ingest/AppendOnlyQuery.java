package io.floe.spark.ingest;

import io.floe.FloeException;
import io.floe.spark.Scala;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * Refuses streaming queries whose result over a batch of new source rows is not simply appended to what
 * earlier batches produced: aggregates, DISTINCT, window functions, LIMIT and ORDER BY, set operations,
 * non-deterministic functions, and outer or anti joins that keep static rows for new streamed ones.
 */
public final class AppendOnlyQuery {
  /** Analyzed plan nodes that need more than the new rows, by the construct a user wrote. */
  private static final Map<String, String> REFUSED_NODES =
      Map.ofEntries(
          Map.entry("Aggregate", "an aggregate (GROUP BY or an aggregate function)"),
          Map.entry("Distinct", "DISTINCT"),
          Map.entry("Deduplicate", "DISTINCT"),
          Map.entry("Window", "a window function"),
          Map.entry("GlobalLimit", "LIMIT"),
          Map.entry("LocalLimit", "LIMIT"),
          Map.entry("Offset", "OFFSET"),
          Map.entry("Tail", "TAIL"),
          Map.entry("Sort", "ORDER BY / SORT BY"),
          Map.entry("Sample", "TABLESAMPLE"),
          Map.entry("Union", "UNION"),
          Map.entry("Except", "EXCEPT"),
          Map.entry("Intersect", "INTERSECT"));

  /** Deterministic to Catalyst, but different for every run. */
  private static final Set<String> TIME_FUNCTIONS =
      Set.of("CurrentTimestamp", "CurrentDate", "CurrentTime", "LocalTimestamp", "Now", "CurrentBatchTimestamp");

  private static final String WHY =
      "; a streaming table appends what its query computes over each batch of newly appended source rows, so only"
          + " filters, projections and joins with static tables keep it right. Compute this in a materialized view"
          + " that reads the streaming table";

  private AppendOnlyQuery() {}

  /**
   * Checks a streaming query.
   *
   * @param owner how the error starts, such as {@code Cannot create streaming table lake.db.silver}
   * @param parsed the query as parsed, with its STREAM read marked
   * @param analyzed the query analyzed, each table it reads an empty relation of its columns (see
   *     {@link StreamedQuery#asLeaf}), so that only its own operators are checked
   */
  public static void check(String owner, LogicalPlan parsed, LogicalPlan analyzed) {
    checkJoins(owner, parsed);
    // The query's own operators; what its subqueries compute over static tables is not streamed.
    analyzed.foreach(
        node -> {
          String construct = REFUSED_NODES.get(node.getClass().getSimpleName());
          if (construct != null) {
            throw new FloeException(owner + ": its query uses " + construct + WHY);
          }
          for (Expression expression : Scala.list(node.expressions())) {
            checkDeterministic(owner, expression);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  /** The streamed side of an outer, semi or anti join must be the side whose rows the join keeps. */
  private static void checkJoins(String owner, LogicalPlan parsed) {
    parsed.foreachWithSubqueries(
        node -> {
          if (node instanceof Join join) {
            String type = join.joinType().sql();
            boolean streamLeft = streams(join.left());
            boolean streamRight = streams(join.right());
            boolean leftKept = type.startsWith("LEFT");
            boolean refused =
                type.equals("FULL OUTER")
                    || (leftKept && streamRight)
                    || (type.equals("RIGHT OUTER") && streamLeft);
            if (refused) {
              throw new FloeException(
                  owner + ": its query streams the " + (streamLeft ? "left" : "right") + " side of a " + type
                      + " JOIN, which also yields static rows that no new streamed row produced" + WHY
                      + ", or stream the side whose rows the join keeps");
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  private static boolean streams(LogicalPlan plan) {
    return plan.exists(node -> node instanceof UnresolvedRelation relation && relation.isStreaming());
  }

  private static void checkDeterministic(String owner, Expression expression) {
    String kind = expression.getClass().getSimpleName();
    boolean leafNonDeterministic =
        !expression.deterministic() && Scala.list(expression.children()).stream().allMatch(Expression::deterministic);
    if (TIME_FUNCTIONS.contains(kind) || leafNonDeterministic) {
      throw new FloeException(
          owner + ": its query calls the non-deterministic function " + expression.prettyName() + "(); a streaming "
              + "table must give the same rows for the same source rows, also when it is refreshed in full");
    }
    for (Expression child : Scala.list(expression.children())) {
      checkDeterministic(owner, child);
    }
  }
}
