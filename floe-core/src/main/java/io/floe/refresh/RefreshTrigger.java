package io.floe.refresh;

import java.util.Locale;

/** What started a refresh; recorded in the refresh history. */
public enum RefreshTrigger {
  /** A user's statement: REFRESH, or CREATE's initial refresh. */
  MANUAL,
  /** A refresh schedule came due. */
  SCHEDULE,
  /** A source changed and the view refreshes on change. */
  CHANGE,
  /** A pipeline run. */
  PIPELINE;

  /**
   * The trigger named {@code name}, in any case.
   *
   * @throws IllegalArgumentException naming the accepted values when {@code name} is none of them
   */
  public static RefreshTrigger parse(String name) {
    if (name != null) {
      for (RefreshTrigger trigger : values()) {
        if (trigger.name().equals(name.trim().toUpperCase(Locale.ROOT))) {
          return trigger;
        }
      }
    }
    throw new IllegalArgumentException(
        "Unknown refresh trigger '" + name + "'; expected manual, schedule, change or pipeline");
  }
}
