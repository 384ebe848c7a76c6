package io.floe.mv;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a materialized view's storage snapshot was computed from: the view version, when the
 * refresh started, and the state of every source. Stored as JSON in the {@code refresh-state}
 * summary property of the storage snapshot, as the Iceberg materialized view proposal describes.
 */
public record RefreshState(
    int viewVersionId, long refreshStartTimestampMs, List<SourceState> sourceStates) {

  /** The summary property of a storage snapshot that holds the JSON form. */
  public static final String SUMMARY_KEY = "refresh-state";

  public RefreshState {
    sourceStates = List.copyOf(Objects.requireNonNull(sourceStates, "sourceStates"));
  }

  /** The recorded state of the source with this identity, if it was a source. */
  public Optional<SourceState> sourceLike(SourceState current) {
    return sourceStates.stream().filter(s -> s.sameObjectAs(current)).findFirst();
  }
}
