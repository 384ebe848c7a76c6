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

  /** Sets {@code settings} on {@code spark} until the result is closed. */
  static SessionSettings apply(SparkSession spark, Map<String, String> settings) {
    Map<String, String> previous = new LinkedHashMap<>();
    settings.forEach((key, value) -> {
      previous.putIfAbsent(key, spark.conf().getOption(key).getOrElse(() -> null));
      spark.conf().set(key, value);
    });
    return new SessionSettings(spark, previous);
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
