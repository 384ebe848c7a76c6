package io.floe.spark.ivm;

/** What an output column of an aggregate definition is, for maintaining it from a change. */
public enum ColumnRole {
  /** A grouping column: part of the storage row's key. */
  KEY,
  /** COUNT(*) or COUNT(constant): maintained by adding and subtracting counts. */
  COUNT_ROWS,
  /** COUNT(expr): maintained by adding and subtracting counts of non-null inputs. */
  COUNT_VALUES,
  /** SUM(expr): maintained with a hidden count of non-null inputs, so an emptied sum is NULL. */
  SUM,
  /**
   * MIN(expr): the least of the stored value and the inserted ones, unless a deleted value could
   * have been the minimum (it is not above the stored one), when the group is recomputed.
   */
  MIN,
  /** MAX(expr): as {@link #MIN}, the other way round. */
  MAX,
  /**
   * COUNT(DISTINCT expr): the size of a hidden map from each value in the group to its number of
   * source rows, maintained by adding and subtracting those counts ({@link DistinctState}).
   */
  COUNT_DISTINCT,
  /**
   * AVG(expr) of a numeric expr: Spark's own AVG evaluated over a hidden running sum (in AVG's sum
   * type) and the SUM-like hidden count of non-null inputs, both maintained by adding and
   * subtracting ({@link AverageState}).
   */
  AVG,
  /** Anything else (other DISTINCT aggregates, expressions): the affected groups are recomputed. */
  RECOMPUTE
}
