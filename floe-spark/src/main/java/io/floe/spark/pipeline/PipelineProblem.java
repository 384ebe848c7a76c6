package io.floe.spark.pipeline;

import java.util.Objects;

/**
 * One thing wrong with a pipeline, found without reading or writing data.
 *
 * @param location {@code file:line} of the statement at fault, or the settings file
 * @param dataset the dataset concerned, or empty text when the problem is not one dataset's
 * @param message what is wrong
 */
public record PipelineProblem(String location, String dataset, String message) {

  public PipelineProblem {
    Objects.requireNonNull(location, "location");
    Objects.requireNonNull(dataset, "dataset");
    Objects.requireNonNull(message, "message");
  }

  @Override
  public String toString() {
    return location + ": " + (dataset.isEmpty() ? "" : dataset + ": ") + message;
  }
}
