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
  /** Anything else (AVG, MIN, MAX, COUNT(DISTINCT), expressions): the affected groups are recomputed. */
  RECOMPUTE
}
