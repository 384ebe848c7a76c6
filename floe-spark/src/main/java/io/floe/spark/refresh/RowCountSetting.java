package io.floe.spark.refresh;

import io.floe.FloeException;
import org.apache.spark.sql.SparkSession;

/** A session setting that holds a number of rows. */
public final class RowCountSetting {
  private RowCountSetting() {}

  /**
   * The value of {@code key} in the session, {@code defaultValue} when unset; a value that is not a
   * whole number of at least {@code least} fails, naming the setting and the value.
   */
  public static long of(SparkSession spark, String key, long defaultValue, long least) {
    String value = spark.conf().get(key, Long.toString(defaultValue));
    long rows;
    try {
      rows = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      rows = least - 1;
    }
    if (rows < least) {
      throw new FloeException("Setting " + key + " must be a number of rows, " + least + " or more, not '" + value + "'");
    }
    return rows;
  }
}
