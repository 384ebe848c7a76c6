package io.floe.refresh;

import io.floe.mv.SourceState;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What one refresh of a materialized view did: its type and the reason for it, the sources it
 * started from and the pinned states it brought the view to, the rows it read and wrote, and the
 * storage snapshot it committed (none for {@link RefreshType#NO_CHANGE}), and how the rows fared against the
 * view's expectations.
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
    List<ExpectationResult> expectations) {

  /** A result without expectation counts, for a view that declares none. */
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
    this(materializedView, type, reason, sourcesBefore, sourcesAfter, rowsReadBySource, rowsWritten, rowsRemoved,
        startedAtMs, durationMs, storageSnapshotId, List.of());
  }

  public RefreshResult {
    Objects.requireNonNull(materializedView, "materializedView");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(reason, "reason");
    sourcesBefore = List.copyOf(sourcesBefore);
    sourcesAfter = List.copyOf(sourcesAfter);
    rowsReadBySource = Map.copyOf(rowsReadBySource);
    expectations = List.copyOf(expectations);
  }

  /** The same result with the counts of the view's expectations. */
  public RefreshResult withExpectations(List<ExpectationResult> counts) {
    return new RefreshResult(materializedView, type, reason, sourcesBefore, sourcesAfter, rowsReadBySource,
        rowsWritten, rowsRemoved, startedAtMs, durationMs, storageSnapshotId, counts);
  }

  public Optional<Long> storageSnapshot() {
    return Optional.ofNullable(storageSnapshotId);
  }

  /** Rows read from all sources together. */
  public long rowsRead() {
    return rowsReadBySource.values().stream().mapToLong(Long::longValue).sum();
  }
}
