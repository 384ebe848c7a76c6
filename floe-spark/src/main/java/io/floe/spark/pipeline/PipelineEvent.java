package io.floe.spark.pipeline;

import java.util.Objects;

/**
 * A dataset's state changing while a pipeline runs.
 *
 * @param dataset the dataset's fully qualified name
 * @param state its new state
 * @param detail what happened, for people (a refresh's type and rows, an error), or empty text
 */
public record PipelineEvent(String dataset, State state, String detail) {

  /** The states a dataset goes through in a run. */
  public enum State {
    PENDING,
    CREATING,
    CREATED,
    REPLACED,
    UNCHANGED,
    REFRESHING,
    REFRESHED,
    FAILED,
    SKIPPED,
    REMOVED,
    DROPPED;

    /** Whether the dataset is done for this run. */
    public boolean isFinal() {
      return this == REFRESHED || this == FAILED || this == SKIPPED || this == REMOVED || this == DROPPED;
    }
  }

  public PipelineEvent {
    Objects.requireNonNull(dataset, "dataset");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(detail, "detail");
  }
}
