package io.floe.spark.rewrite;

import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.SparkSession;

/**
 * The session settings of query rewrite. Glue's key switches it on; Floe's keys tune it.
 *
 * <ul>
 *   <li>{@value #ENABLED} (Glue's key, default {@code false}): answer queries over base tables
 *       from materialized views when that gives the same result.
 *   <li>{@value #STALENESS_TOLERANCE} (default {@code 0}): a duration such as {@code 10min}; an MV
 *       whose sources moved since its last refresh may still answer a query that reads the
 *       sources' current state when that refresh started no longer ago than this.
 *   <li>{@value #REPORT} (default {@code false}): record which MV answered each query and why the
 *       others were rejected, for {@link RewriteReport#last}.
 * </ul>
 */
public final class RewriteSettings {
  public static final String ENABLED = "spark.sql.optimizer.answerQueriesWithMVs.enabled";
  public static final String STALENESS_TOLERANCE = "floe.rewrite.staleness-tolerance";
  public static final String REPORT = "floe.rewrite.report";

  private RewriteSettings() {}

  public static boolean enabled(SparkSession spark) {
    return Boolean.parseBoolean(spark.conf().get(ENABLED, "false").trim());
  }

  public static boolean reporting(SparkSession spark) {
    return Boolean.parseBoolean(spark.conf().get(REPORT, "false").trim());
  }

  /** The staleness tolerance in milliseconds; 0 when a stale MV is never used. */
  public static long stalenessToleranceMillis(SparkSession spark) {
    return stalenessToleranceMillis(spark.conf().get(STALENESS_TOLERANCE, "0"));
  }

  /**
   * The staleness tolerance {@code value} gives, in milliseconds; {@code SET} checks a value with
   * it, so that a bad one is refused there instead of turning every rewrite off.
   */
  public static long stalenessToleranceMillis(String given) {
    String value = given.trim();
    try {
      return JavaUtils.timeStringAsMs(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "Invalid " + STALENESS_TOLERANCE + " '" + value + "': give a duration such as 30s, 10min or 2h", e);
    }
  }
}
