package io.floe.refresh;

import java.util.Locale;

/** What started a refresh. */
public enum RefreshTrigger {
  /** A user's REFRESH statement. */
  MANUAL,
  /** A materialized view's {@code SCHEDULE REFRESH EVERY ...}. */
  SCHEDULE,
  /** A materialized view's {@code SCHEDULE REFRESH ON CHANGE}: a source moved. */
  CHANGE,
  /** A pipeline run. */
  PIPELINE;

  /**
   * The trigger named {@code name}, in any case ({@code schedule}, {@code CHANGE}).
   *
   * @throws IllegalArgumentException naming the text and the accepted names
   */
  public static RefreshTrigger parse(String name) {
    try {
      return valueOf(name.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new IllegalArgumentException(
          "Unknown refresh trigger '" + name + "': expected manual, schedule, change or pipeline", e);
    }
  }
}
