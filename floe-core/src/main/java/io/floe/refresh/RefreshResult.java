package io.floe.refresh;

import io.floe.mv.SourceState;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What one refresh of a materialized view did: its type and the reason for it, the sources it
 * started from and the pinned states it brought the view to, the rows it read and wrote, the
 * storage snapshot it committed (none for {@link RefreshType#NO_CHANGE}), and how the rows fared
 * against the view's expectations.
 *
 * @param attempts how many attempts the refresh took (more than one after a retried failure)
 * @param warnings problems that did not undo the refresh, such as a refresh history that could not
 *     be appended to; a caller should show them
 * @param expectations the counts of each expectation the view declares, in declaration order
 */
public record RefreshResult(
    String materializedView,
    RefreshType type,
    String reason,
    List<SourceState> sourcesBefore,
    List<SourceState> sourcesAfter,
    Map<String, Long> rowsReadBySource,
    long rowsWritten,
    long rowsRemoved,
    long startedAtMs,
    long durationMs,
    Long storageSnapshotId,
    int attempts,
    List<String> warnings,
    List<ExpectationResult> expectations) {

  public RefreshResult {
    Objects.requireNonNull(materializedView, "materializedView");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(reason, "reason");
    sourcesBefore = List.copyOf(sourcesBefore);
    sourcesAfter = List.copyOf(sourcesAfter);
    rowsReadBySource = Map.copyOf(rowsReadBySource);
    warnings = List.copyOf(warnings);
    expectations = List.copyOf(expectations);
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1 but was " + attempts);
    }
  }

  /** A result of a first attempt, without warnings or expectation counts. */
  public RefreshResult(
      String materializedView,
      RefreshType type,
      String reason,
      List<SourceState> sourcesBefore,
      List<SourceState> sourcesAfter,
      Map<String, Long> rowsReadBySource,
      long rowsWritten,
      long rowsRemoved,
      long startedAtMs,
      long durationMs,
      Long storageSnapshotId) {
    this(
        materializedView, type, reason, sourcesBefore, sourcesAfter, rowsReadBySource, rowsWritten,
        rowsRemoved, startedAtMs, durationMs, storageSnapshotId, 1, List.of(), List.of());
  }

  /** This result, reached after {@code attempts} attempts. */
  public RefreshResult withAttempts(int attempts) {
    return new RefreshResult(
        materializedView, type, reason, sourcesBefore, sourcesAfter, rowsReadBySource, rowsWritten,
        rowsRemoved, startedAtMs, durationMs, storageSnapshotId, attempts, warnings, expectations);
  }

  /** This result with one more warning. */
  public RefreshResult withWarning(String warning) {
    List<String> all = new java.util.ArrayList<>(warnings);
    all.add(warning);
    return new RefreshResult(
        materializedView, type, reason, sourcesBefore, sourcesAfter, rowsReadBySource, rowsWritten,
        rowsRemoved, startedAtMs, durationMs, storageSnapshotId, attempts, all, expectations);
  }

  /** The same result with the counts of the view's expectations. */
  public RefreshResult withExpectations(List<ExpectationResult> counts) {
    return new RefreshResult(
        materializedView, type, reason, sourcesBefore, sourcesAfter, rowsReadBySource, rowsWritten,
        rowsRemoved, startedAtMs, durationMs, storageSnapshotId, attempts, warnings, counts);
  }

  public Optional<Long> storageSnapshot() {
    return Optional.ofNullable(storageSnapshotId);
  }

  /** Rows read from all sources together. */
  public long rowsRead() {
    return rowsReadBySource.values().stream().mapToLong(Long::longValue).sum();
  }
}
