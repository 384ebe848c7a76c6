package io.floe.refresh;

import java.util.Objects;
import java.util.UUID;

/**
 * The run a refresh belongs to: every refresh of one statement, schedule tick or pipeline update
 * shares its run id in the refresh history.
 */
public record RefreshRun(String runId, RefreshTrigger trigger) {
  /** Local property (Spark) naming the trigger of the refreshes started on a thread. */
  public static final String TRIGGER_PROPERTY = "floe.refresh.trigger";

  /** Local property (Spark) carrying the run id of the refreshes started on a thread. */
  public static final String RUN_ID_PROPERTY = "floe.refresh.run-id";

  public RefreshRun {
    Objects.requireNonNull(runId, "runId");
    Objects.requireNonNull(trigger, "trigger");
  }

  /** A new run with a fresh id. */
  public static RefreshRun start(RefreshTrigger trigger) {
    return new RefreshRun(UUID.randomUUID().toString(), trigger);
  }

  /**
   * The run described by the two properties' values: {@code null} trigger means manual, a {@code
   * null} run id a fresh one.
   */
  public static RefreshRun of(String trigger, String runId) {
    RefreshTrigger parsed = trigger == null || trigger.isBlank() ? RefreshTrigger.MANUAL : RefreshTrigger.parse(trigger);
    return runId == null || runId.isBlank() ? start(parsed) : new RefreshRun(runId, parsed);
  }
}
