package io.floe.spark.pipeline;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * Settings applied to a session for a while: {@link #apply} sets them, {@link #close} puts back
 * what each key had before (unsetting the keys that had no value).
 */
final class SessionSettings implements AutoCloseable {
  private final SparkSession spark;
  private final Map<String, String> previous;

  private SessionSettings(SparkSession spark, Map<String, String> previous) {
    this.spark = spark;
    this.previous = previous;
  }

  /**
   * Sets {@code settings} on {@code spark} until the result is closed. A setting Spark refuses (a
   * static key, a value of the wrong kind) puts back those already set and is thrown.
   */
  static SessionSettings apply(SparkSession spark, Map<String, String> settings) {
    Map<String, String> previous = new LinkedHashMap<>();
    SessionSettings applied = new SessionSettings(spark, previous);
    try {
      settings.forEach((key, value) -> {
        // Only a value the session set is put back; a key it left at its default is unset again
        // (reading it would give the default, and setting that would make it look set).
        previous.putIfAbsent(key, explicitlySet(spark, key) ? spark.conf().get(key) : null);
        spark.conf().set(key, value);
      });
    } catch (RuntimeException e) {
      applied.close();
      throw e;
    }
    return applied;
  }

  private static boolean explicitlySet(SparkSession spark, String key) {
    if (spark instanceof org.apache.spark.sql.classic.SparkSession classic) {
      return classic.sessionState().conf().contains(key);
    }
    return spark.conf().getOption(key).isDefined();
  }

  @Override
  public void close() {
    previous.forEach((key, value) -> {
      if (value == null) {
        spark.conf().unset(key);
      } else {
        spark.conf().set(key, value);
      }
    });
  }
}
