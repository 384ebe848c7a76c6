package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.bool_or;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InSubquery;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * What a view filtered by {@code x NOT IN (subquery)} depends on beyond the subquery rows matching
 * each row's x: whether the subquery is empty, and whether it holds a NULL. A row whose x matches
 * no subquery row is kept when the subquery is empty, dropped when x is NULL or the subquery holds
 * a NULL, and kept otherwise. While that state is the same at the snapshot a refresh starts from
 * and the one it reaches, the view is maintained by the key x ({@link KeyedShape#guardedNotIn});
 * when it changes, every row may change, and the refresh is a full one.
 */
public final class NotInGuard {
  /** The state of a {@code NOT IN} subquery's rows that every row of the view depends on. */
  enum State {
    EMPTY("empty"),
    WITHOUT_NULL("without a NULL"),
    WITH_NULL("holding a NULL");

    private final String description;

    State(String description) {
      this.description = description;
    }

    @Override
    public String toString() {
      return description;
    }
  }

  private NotInGuard() {}

  /** Whether a definition, parsed or analyzed, filters by {@code NOT IN}. */
  public static boolean filtersByNotIn(LogicalPlan definition) {
    return !subqueries(definition).isEmpty();
  }

  /**
   * The subqueries of the {@code NOT IN} filters of {@code definition}, those inside other
   * subqueries and common table expressions included: a parsed definition (with its common table expressions inlined, to read
   * each subquery on its own) or an analyzed one.
   */
  static List<LogicalPlan> subqueries(LogicalPlan definition) {
    List<LogicalPlan> found = new ArrayList<>();
    collect(definition, found);
    return found;
  }

  private static void collect(LogicalPlan plan, List<LogicalPlan> found) {
    plan.foreach(
        node -> {
          // A common table expression's body, which a parsed WITH holds beside its children.
          for (Object inner : Scala.list(node.innerChildren())) {
            if (inner instanceof LogicalPlan body) {
              collect(body, found);
            }
          }
          for (Expression expression : Scala.list(node.expressions())) {
            expression.foreach(
                e -> {
                  if (e instanceof Not not && not.child() instanceof InSubquery in) {
                    found.add(in.query().plan());
                  }
                  if (e instanceof SubqueryExpression subquery) {
                    collect(subquery.plan(), found);
                  }
                  return scala.runtime.BoxedUnit.UNIT;
                });
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  /** The state of a subquery's rows, from its first column (the one {@code NOT IN} compares). */
  static State state(Dataset<Row> rows) {
    Row counted =
        rows.agg(count(lit(1)), coalesce(bool_or(col(StorageLayout.quote(rows.columns()[0])).isNull()), lit(false))).first();
    if (counted.getLong(0) == 0) {
      return State.EMPTY;
    }
    return counted.getBoolean(1) ? State.WITH_NULL : State.WITHOUT_NULL;
  }

  /** Why a refresh from {@code before} to {@code after} of the subquery over {@code tables} is a full one, if it is. */
  static Optional<String> changed(State before, State after, List<String> tables) {
    if (before == after) {
      return Optional.empty();
    }
    return Optional.of(
        "the NOT IN subquery over " + String.join(", ", tables) + " went from " + before + " to " + after
            + ", which decides whether each row of the view is kept");
  }
}
