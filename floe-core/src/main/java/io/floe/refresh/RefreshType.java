package io.floe.refresh;

/** How a refresh brought a materialized view up to date. */
public enum RefreshType {
  /** Only the sources' changes were processed. */
  INCREMENTAL,
  /** The whole definition was recomputed. */
  FULL,
  /** No source changed since the last refresh; nothing was committed. */
  NO_CHANGE
}
