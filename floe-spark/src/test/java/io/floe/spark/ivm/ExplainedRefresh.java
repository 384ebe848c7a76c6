package io.floe.spark.ivm;

import org.apache.spark.sql.SparkSession;

/** Lines of {@code EXPLAIN REFRESH MATERIALIZED VIEW} output, for the refresh tests. */
final class ExplainedRefresh {
  private ExplainedRefresh() {}

  /** The detail of the first line whose item starts with {@code item} ("source ", "strategy"). */
  static String detail(SparkSession spark, String mv, String item) {
    return spark.sql("EXPLAIN REFRESH MATERIALIZED VIEW " + mv).collectAsList().stream()
        .filter(r -> r.getString(0).startsWith(item))
        .map(r -> r.getString(1))
        .findFirst()
        .orElseThrow(() -> new AssertionError("EXPLAIN REFRESH of " + mv + " has no line " + item));
  }
}
