package io.floe.mv;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a materialized view's stored data equals what its definition gives over the sources'
 * current states and, if not, why: which source moved, or that the definition changed.
 *
 * <p>A view is fresh when its last refresh was made under the current view version and every
 * recorded source state equals the catalog's current state; an MV source must also be fresh
 * itself.
 */
public record Freshness(boolean fresh, List<String> staleReasons) {

  public Freshness {
    staleReasons = List.copyOf(staleReasons);
  }

  /** Looks up the current state of sources and the freshness of upstream MVs. */
  public interface Sources {
    /** The source's current state in the catalog, or empty when it no longer exists. */
    Optional<SourceState> current(SourceState recorded);

    /** The freshness of the materialized view that a view source names. */
    Freshness upstream(SourceState viewSource);
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
      source.describeChangeTo(current.get()).ifPresent(change -> reasons.add("source " + change));
      if (source.type() == SourceState.Type.VIEW) {
        Freshness upstream = sources.upstream(source);
        if (!upstream.fresh()) {
          reasons.add(
              "upstream " + source.qualifiedName() + " is stale: " + String.join("; ", upstream.staleReasons()));
        }
      }
    }
    return reasons.isEmpty() ? ofFresh() : new Freshness(false, reasons);
  }

  /** {@code FRESH}, or {@code STALE: reason; reason}. */
  public String describe() {
    return fresh ? "FRESH" : "STALE: " + String.join("; ", staleReasons);
  }
}
