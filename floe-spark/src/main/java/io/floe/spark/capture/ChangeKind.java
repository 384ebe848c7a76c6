package io.floe.spark.capture;

/** What kind of rows a captured change can contain, so a caller can pick cheaper delta rules. */
public enum ChangeKind {
  /**
   * No data changed: no snapshot in between, only compaction, no data file live at either
   * snapshot differs (e.g. a file appended and deleted in between), or the rows read cancel out
   * (updates that left every column read as it was). The Z-set is empty.
   */
  NONE,
  /** Rows were only added: every weight is positive. */
  APPEND_ONLY,
  /** Rows were deleted or updated as well: weights can be negative. */
  ROW_LEVEL
}
