package io.floe.mv;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a materialized view's stored data equals what its definition gives over the sources'
 * current states and, if not, why: which source moved, or that the definition changed.
 *
 * <p>A view is fresh when its last refresh was made under the current view version and every
 * recorded source state holds the same rows as the catalog's current state; an MV source must also
 * be fresh itself. A source whose commits since the refresh changed no row (compactions) leaves the
 * view fresh, with a note in {@link #unrecordedCommits()}: the next refresh records the source's new
 * snapshot without changing the view, so that expiring the old one cannot force a full refresh.
 */
public record Freshness(boolean fresh, List<String> staleReasons, List<String> unrecordedCommits) {

  public Freshness {
    staleReasons = List.copyOf(staleReasons);
    unrecordedCommits = List.copyOf(unrecordedCommits);
  }

  public Freshness(boolean fresh, List<String> staleReasons) {
    this(fresh, staleReasons, List.of());
  }

  /** Looks up the current state of sources and the freshness of upstream MVs. */
  public interface Sources {
    /** The source's current state in the catalog, or empty when it no longer exists. */
    Optional<SourceState> current(SourceState recorded);

    /** The freshness of the materialized view that a view source names. */
    Freshness upstream(SourceState viewSource);

    /**
     * Whether a table source holds the same rows at its recorded and its current snapshot (the
     * commits between them only rewrote files). Without this knowledge, no.
     */
    default boolean sameRows(SourceState recorded, SourceState current) {
      return false;
    }

    /**
     * Whether a table source's current snapshot descends from its recorded one (new commits on the
     * same history), rather than being an older one or on another branch of it (a rollback).
     * Without this knowledge, yes.
     */
    default boolean descendsFromRecorded(SourceState recorded, SourceState current) {
      return true;
    }
  }

  public static Freshness ofFresh() {
    return new Freshness(true, List.of());
  }

  public static Freshness stale(String reason) {
    return new Freshness(false, List.of(reason));
  }

  /**
   * Compares the recorded refresh state with the catalog now.
   *
   * @param currentViewVersionId the view's current version
   * @param recorded the refresh state of the storage table's current snapshot; empty when the view
   *     has never been refreshed
   */
  public static Freshness evaluate(
      int currentViewVersionId, Optional<RefreshState> recorded, Sources sources) {
    if (recorded.isEmpty()) {
      return stale("never refreshed");
    }
    RefreshState state = recorded.get();
    List<String> reasons = new ArrayList<>();
    List<String> unrecorded = new ArrayList<>();
    if (state.viewVersionId() != currentViewVersionId) {
      reasons.add(
          "definition changed since the last refresh (view version "
              + state.viewVersionId()
              + " → "
              + currentViewVersionId
              + ")");
    }
    for (SourceState source : state.sourceStates()) {
      Optional<SourceState> current = sources.current(source);
      if (current.isEmpty()) {
        reasons.add("source " + source.qualifiedName() + " was dropped");
        continue;
      }
      Optional<String> change = source.describeChangeTo(current.get());
      if (change.isPresent() && source.onlySnapshotDiffers(current.get()) && sources.sameRows(source, current.get())) {
        unrecorded.add(
            "source " + source.qualifiedName() + " was compacted since the last refresh (snapshot "
                + source.snapshotId().orElse(null) + " → " + current.get().snapshotId().orElse(null) + "), no row changed");
      } else if (change.isPresent() && source.onlySnapshotDiffers(current.get())
          && !sources.descendsFromRecorded(source, current.get())) {
        reasons.add("source " + source.qualifiedName() + " was rolled back or its history rewritten (snapshot "
            + source.snapshotId().orElse(null) + " → " + current.get().snapshotId().orElse(null)
            + ", not a descendant of the one last refreshed from)");
      } else {
        change.ifPresent(c -> reasons.add("source " + c));
      }
      if (source.type() == SourceState.Type.VIEW) {
        Freshness upstream = sources.upstream(source);
        if (!upstream.fresh()) {
          reasons.add(
              "upstream " + source.qualifiedName() + " is stale: " + String.join("; ", upstream.staleReasons()));
        }
      }
    }
    return new Freshness(reasons.isEmpty(), reasons, unrecorded);
  }

  /**
   * {@code FRESH}, {@code FRESH (note; note)} when sources were compacted since the refresh, or
   * {@code STALE: reason; reason}.
   */
  public String describe() {
    if (!fresh) {
      return "STALE: " + String.join("; ", staleReasons);
    }
    return unrecordedCommits.isEmpty() ? "FRESH" : "FRESH (" + String.join("; ", unrecordedCommits) + ")";
  }
}
