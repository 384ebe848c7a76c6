package io.floe.spark.refresh;

import io.floe.FloeException;
import org.apache.spark.sql.SparkSession;

/** A session setting that holds a count: of rows, or of bytes. */
public final class CountSetting {
  private CountSetting() {}

  /**
   * The number of rows {@code key} holds in the session, {@code defaultValue} when unset; a value
   * that is not a whole number of at least {@code least} fails, naming the setting and the value.
   */
  public static long rows(SparkSession spark, String key, long defaultValue, long least) {
    return of(spark, key, defaultValue, least, "rows");
  }

  /** The number of bytes {@code key} holds in the session, checked as {@link #rows} checks rows. */
  public static long bytes(SparkSession spark, String key, long defaultValue, long least) {
    return of(spark, key, defaultValue, least, "bytes");
  }

  private static long of(SparkSession spark, String key, long defaultValue, long least, String unit) {
    String value = spark.conf().get(key, Long.toString(defaultValue));
    long count;
    try {
      count = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      count = least - 1;
    }
    if (count < least) {
      throw new FloeException("Setting " + key + " must be a number of " + unit + ", " + least + " or more, not '" + value + "'");
    }
    return count;
  }
}
