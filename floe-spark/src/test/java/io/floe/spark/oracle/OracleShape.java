package io.floe.spark.oracle;

/** The shapes of definitions the oracle generates, and whether Floe refreshes them incrementally. */
enum OracleShape {
  LINEAR(true),
  AGGREGATE(true),
  JOIN(true),
  UNION_ALL(true),
  SELF_UNION_ALL(true),
  SELF_JOIN(true),
  DISTINCT(true),
  SET_OPERATION(true),
  WINDOW(true),
  WINDOW_UNKEYED(false),
  HAVING(true),
  OUTER_JOIN(true),
  OUTER_JOIN_UNKEYED(false),
  OUTER_JOIN_DELTA(true),
  JOINED_AGGREGATES(true),
  ROLLUP(true),
  GLOBAL_AGGREGATE(true),
  GLOBAL_AGGREGATE_RECOMPUTED(false),
  SUBQUERY(true),
  SUBQUERY_UNKEYED(false),
  /** Incremental unless the NOT IN subquery's emptiness or NULLs changed ({@link OracleDefinition#notIn}). */
  SUBQUERY_NOT_IN(true),
  HIDDEN_KEY(true),
  UNSELECTED_GROUP_KEY(true);

  private final boolean incremental;

  OracleShape(boolean incremental) {
    this.incremental = incremental;
  }

  /** True when a refresh with source changes must be INCREMENTAL, false when it must be FULL. */
  boolean incremental() {
    return incremental;
  }
}
