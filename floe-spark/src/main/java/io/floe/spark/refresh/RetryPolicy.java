package io.floe.spark.refresh;

import io.floe.FloeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.RuntimeIOException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.spark.sql.SparkSession;

/**
 * When a failed refresh is tried again: only failures that another attempt can cure (a commit
 * race lost to a concurrent writer, an I/O error), up to {@code maxAttempts} attempts, waiting
 * {@code backoffMs}, then twice as long before each further attempt. Anything else (a definition
 * that no longer analyzes, a dropped source, an error raised by the data) fails at once.
 */
public record RetryPolicy(int maxAttempts, long backoffMs) {
  /** Session key: attempts per refresh, the first included. */
  public static final String MAX_ATTEMPTS = "floe.refresh.max-attempts";

  /** Session key: milliseconds before the second attempt; doubled before each further one. */
  public static final String BACKOFF_MS = "floe.refresh.retry-backoff-ms";

  private static final long MAX_DELAY_MS = 60_000;

  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new FloeException(MAX_ATTEMPTS + " must be at least 1 but is " + maxAttempts);
    }
    if (backoffMs < 0) {
      throw new FloeException(BACKOFF_MS + " must not be negative but is " + backoffMs);
    }
  }

  /** The policy the session's settings give: 3 attempts, 500 ms backoff unless set. */
  public static RetryPolicy of(SparkSession spark) {
    return new RetryPolicy(
        intSetting(spark, MAX_ATTEMPTS, 3), (long) intSetting(spark, BACKOFF_MS, 500));
  }

  static int intSetting(SparkSession spark, String key, int defaultValue) {
    String value = spark.conf().get(key, Integer.toString(defaultValue));
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new FloeException("Setting " + key + " must be a whole number but is '" + value + "'", e);
    }
  }

  /** Milliseconds to wait before attempt {@code attempt} (2 or more). */
  public long delayBefore(int attempt) {
    long delay = backoffMs;
    for (int i = 2; i < attempt && delay < MAX_DELAY_MS; i++) {
      delay *= 2;
    }
    return Math.min(delay, MAX_DELAY_MS);
  }

  /** The cause that makes {@code failure} worth another attempt, if there is one. */
  public static Optional<Throwable> retryableCause(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ValidationException
          || t instanceof CommitFailedException
          || t instanceof CommitStateUnknownException
          || t instanceof IOException
          || t instanceof UncheckedIOException
          || t instanceof RuntimeIOException) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
