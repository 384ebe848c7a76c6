package io.floe.refresh;

import io.floe.mv.SourceState;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * One row of the refresh history: one refresh of one materialized view, whatever started it and
 * however it ended. Fields that do not apply to the status (the refresh type of a failure, the
 * rows of a skip) are null.
 *
 * @param refreshId unique per refresh
 * @param refreshType null unless the refresh succeeded
 * @param error the failure's message, null unless it failed
 * @param expectations the counts of the view's expectations, empty when it declares none or the
 *     refresh did not succeed
 */
public record RefreshRecord(
    String runId,
    String refreshId,
    String materializedView,
    RefreshTrigger trigger,
    long startedAtMs,
    long endedAtMs,
    RefreshType refreshType,
    String reason,
    RefreshStatus status,
    String error,
    int attempts,
    List<SourceState> sourcesBefore,
    List<SourceState> sourcesAfter,
    Long rowsRead,
    Long rowsWritten,
    Long rowsRemoved,
    Long storageSnapshotId,
    List<ExpectationResult> expectations) {

  public RefreshRecord {
    Objects.requireNonNull(runId, "runId");
    Objects.requireNonNull(refreshId, "refreshId");
    Objects.requireNonNull(materializedView, "materializedView");
    Objects.requireNonNull(trigger, "trigger");
    Objects.requireNonNull(status, "status");
    sourcesBefore = sourcesBefore == null ? null : List.copyOf(sourcesBefore);
    sourcesAfter = sourcesAfter == null ? null : List.copyOf(sourcesAfter);
    expectations = expectations == null ? List.of() : List.copyOf(expectations);
  }

  public long durationMs() {
    return endedAtMs - startedAtMs;
  }

  /**
   * The record of a refresh that brought the view up to date, begun (first attempt) at {@code
   * startedAtMs} and ended at {@code endedAtMs}.
   */
  public static RefreshRecord succeeded(RefreshRun run, RefreshResult result, long startedAtMs, long endedAtMs) {
    return new RefreshRecord(
        run.runId(),
        UUID.randomUUID().toString(),
        result.materializedView(),
        run.trigger(),
        startedAtMs,
        endedAtMs,
        result.type(),
        result.reason(),
        RefreshStatus.SUCCEEDED,
        null,
        result.attempts(),
        result.sourcesBefore(),
        result.sourcesAfter(),
        result.rowsRead(),
        result.rowsWritten(),
        result.rowsRemoved(),
        result.storageSnapshotId(),
        result.expectations());
  }

  /** The record of a refresh that failed after {@code attempts} attempts. */
  public static RefreshRecord failed(
      RefreshRun run, String materializedView, long startedAtMs, long endedAtMs, int attempts, String error) {
    return new RefreshRecord(
        run.runId(), UUID.randomUUID().toString(), materializedView, run.trigger(), startedAtMs, endedAtMs,
        null, null, RefreshStatus.FAILED, error, attempts, null, null, null, null, null, null, List.of());
  }

  /** The record of a refresh not attempted, with the reason. */
  public static RefreshRecord skipped(RefreshRun run, String materializedView, long atMs, String reason) {
    return new RefreshRecord(
        run.runId(), UUID.randomUUID().toString(), materializedView, run.trigger(), atMs, atMs,
        null, reason, RefreshStatus.SKIPPED, null, 0, null, null, null, null, null, null, List.of());
  }
}
