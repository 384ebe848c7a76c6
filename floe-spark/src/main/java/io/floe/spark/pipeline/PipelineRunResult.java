package io.floe.spark.pipeline;

import java.util.List;

/**
 * What a pipeline run did with each dataset, in the order it handled them.
 *
 * @param pipeline the pipeline's name
 * @param datasets one outcome per dataset, removed ones included
 * @param durationMs the run's wall time
 */
public record PipelineRunResult(String pipeline, List<PipelineRun.DatasetOutcome> datasets, long durationMs) {

  public PipelineRunResult {
    datasets = List.copyOf(datasets);
  }

  /** Whether every dataset was brought up to date (removed ones kept are not failures). */
  public boolean succeeded() {
    return datasets.stream()
        .noneMatch(d -> d.state() == PipelineEvent.State.FAILED || d.state() == PipelineEvent.State.SKIPPED);
  }
}
