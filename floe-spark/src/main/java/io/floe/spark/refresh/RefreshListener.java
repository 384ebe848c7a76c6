package io.floe.spark.refresh;

import io.floe.refresh.RefreshOutcome;

/**
 * Follows a graph refresh as it goes. {@link #started} runs on the thread about to refresh the
 * view, {@link #finished} on the thread that started the graph refresh; keep both quick.
 */
public interface RefreshListener {
  /** A refresh of {@code materializedView} is about to start. */
  default void started(String materializedView) {}

  /** A view is done: refreshed, failed or skipped. */
  default void finished(RefreshOutcome outcome) {}
}
