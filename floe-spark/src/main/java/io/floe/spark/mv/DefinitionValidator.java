package io.floe.spark.mv;

import io.floe.FloeException;
import io.floe.spark.Scala;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.expressions.Attribute;
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
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  /**
   * Checks the analyzed definition for non-deterministic functions, and for a table's metadata
   * columns ({@code _file}, {@code _pos}, ...): they tell where a row is stored, which a compaction
   * changes without changing any row, so no refresh can follow them.
   */
  public static void checkDeterministic(String mvName, LogicalPlan analyzed) {
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
            checkExpression(mvName, expression, null);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
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
    Expression around = expression instanceof org.apache.spark.sql.catalyst.expressions.Alias ? enclosing : expression;
    for (Expression child : Scala.list(expression.children())) {
      checkExpression(mvName, child, around);
    }
  }
}
