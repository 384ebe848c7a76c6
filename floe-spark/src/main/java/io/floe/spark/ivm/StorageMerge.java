package io.floe.spark.ivm;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.expressions.Expression;
import io.floe.spark.IntegralIn;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import scala.runtime.AbstractPartialFunction;

/**
 * The MERGE statement that applies a computed change to a storage table, with {@code %s} where
 * the target table goes, and the row keys the change touches when they are few enough to list.
 *
 * <p>The listed keys are a condition on the target alone, applied to the storage scan before the
 * join. They are not written into the statement's text: a list of thousands of literals costs
 * Spark about half a second to parse and analyze (two seconds the first time), which a small
 * refresh of a large view would spend on every run. The text holds a call of {@value #LISTED_KEYS}
 * on the key column instead, and the parsed statement gets the keys as one set, tested by {@link
 * IntegralIn}: the keys are hashes, by which no storage file is pruned, and Catalyst's own set test
 * costs about as much per stored row as reading the key.
 */
record StorageMerge(String sql, Optional<Set<Long>> listedKeys) {
  /** The placeholder function whose call the listed keys replace. */
  static final String LISTED_KEYS = "__floe_listed_keys";

  StorageMerge {
    listedKeys = listedKeys.map(Set::copyOf);
  }

  /** A statement without listed keys. */
  static StorageMerge of(String sql) {
    return new StorageMerge(sql, Optional.empty());
  }

  /** A statement whose text calls {@value #LISTED_KEYS} on the key column, to be given {@code keys}. */
  static StorageMerge listing(String sql, Set<Long> keys) {
    return new StorageMerge(sql, Optional.of(keys));
  }

  /** The condition to put in the statement's text for the listed keys of {@code keyColumn}. */
  static String listedKeysCondition(String keyColumn) {
    return LISTED_KEYS + "(" + keyColumn + ")";
  }

  /** Runs the statement against {@code target} (a quoted table name, possibly of a branch). */
  void run(SparkSession spark, String target) {
    String statement = String.format(sql, target);
    LogicalPlan parsed;
    try {
      parsed = spark.sessionState().sqlParser().parsePlan(statement);
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      // Floe wrote the statement: a parse failure is a defect here, not bad input.
      throw new IllegalStateException("Floe built a MERGE statement Spark cannot parse: " + e.getMessage(), e);
    }
    org.apache.spark.sql.classic.Dataset.ofRows(spark, withListedKeys(parsed));
  }

  /** {@code plan} with every call of {@value #LISTED_KEYS} replaced by a test against the keys. */
  LogicalPlan withListedKeys(LogicalPlan plan) {
    if (listedKeys.isEmpty()) {
      return plan;
    }
    return plan.transformAllExpressions(
        new AbstractPartialFunction<Expression, Expression>() {
          @Override
          public boolean isDefinedAt(Expression e) {
            return e instanceof UnresolvedFunction f
                && f.nameParts().size() == 1
                && f.nameParts().head().toLowerCase(Locale.ROOT).equals(LISTED_KEYS)
                && f.arguments().size() == 1;
          }

          @Override
          public Expression apply(Expression e) {
            return IntegralIn.of(((UnresolvedFunction) e).arguments().head(), listedKeys.get());
          }
        });
  }
}
