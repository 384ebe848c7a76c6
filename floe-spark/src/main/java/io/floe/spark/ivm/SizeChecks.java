package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.sum;

import io.floe.spark.refresh.CountSetting;
import io.floe.spark.refresh.Source;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The checks that a change is small enough to refresh incrementally (Glue's delta threshold
 * check): a small change spread over large files, a change that recomputes most groups, or an
 * outer join's rule over a few stored groups, costs more than a full refresh. They apply from
 * {@link #SCAN_FLOOR} source rows and are off with {@link #DELTA_THRESHOLD_CHECK}.
 */
public final class SizeChecks {
  /** Glue's switch for the check that a change is small enough to refresh incrementally. */
  public static final String DELTA_THRESHOLD_CHECK = "spark.sql.optimizer.incrementalMVRefresh.deltaThresholdCheckEnabled";

  /**
   * The fewest rows a change may be read from before the checks apply ({@value
   * #DEFAULT_SCAN_FLOOR} by default): below it both refreshes are cheap.
   */
  public static final String SCAN_FLOOR = "floe.refresh.incremental.min-rows-checked";

  private static final long DEFAULT_SCAN_FLOOR = 1_000_000L;

  private final SparkSession spark;

  public SizeChecks(SparkSession spark) {
    this.spark = spark;
  }

  /**
   * Whether the checks can turn a refresh over {@code sources} into a full one: they are on and
   * the sources hold {@link #SCAN_FLOOR} rows or more, for {@code EXPLAIN REFRESH}.
   */
  public boolean applyTo(List<Source> sources) {
    return on() && sources.stream().mapToLong(Source::totalRecords).sum() >= scanFloor();
  }

  /** Whether the checks are on (Glue's {@link #DELTA_THRESHOLD_CHECK}, on by default). */
  boolean on() {
    return Boolean.parseBoolean(spark.conf().get(DELTA_THRESHOLD_CHECK, "true"));
  }

  /** The fewest source rows from which the checks apply. */
  long scanFloor() {
    return CountSetting.rows(spark, SCAN_FLOOR, DEFAULT_SCAN_FLOOR, 0);
  }

  /**
   * Live rows of a storage snapshot, from its summary: the rows in its data files less those its
   * position deletes remove (the storage is merge-on-read); unknown counts as unlimited.
   */
  static long storedRecords(Snapshot snapshot) {
    String records = snapshot.summary() == null ? null : snapshot.summary().get("total-records");
    if (records == null) {
      return Long.MAX_VALUE;
    }
    String deleted = snapshot.summary().get("total-position-deletes");
    return Math.max(0, Long.parseLong(records) - (deleted == null ? 0 : Long.parseLong(deleted)));
  }
}
