package io.floe.refresh;

/** How a refresh ended; recorded in the refresh history. */
public enum RefreshStatus {
  /** The view is up to date: a refresh committed, or nothing needed committing. */
  SUCCEEDED,
  /** The refresh failed; nothing was committed. */
  FAILED,
  /** Not attempted because a view it reads failed in the same run. */
  SKIPPED
}
