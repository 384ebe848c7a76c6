package io.floe.spark.pipeline;

import io.floe.pipeline.PipelineStatement;
import io.floe.spark.ingest.StreamFlow;
import java.util.List;
import java.util.Objects;

/**
 * A flow a pipeline defines: {@code CREATE FLOW}, or the {@code AS} query of a streaming table fed by tables
 * (its implicit flow, named after the table).
 *
 * @param flow the flow as a streaming table records it (no checkpoint)
 * @param target the fully qualified name of the streaming table it appends to
 * @param source the fully qualified name of the table it streams
 * @param staticSources the fully qualified names of the tables it reads without STREAM
 * @param statement the defining statement
 * @param explicit true for {@code CREATE FLOW}, false for a streaming table's own query
 */
public record PipelineFlow(
    StreamFlow flow,
    String target,
    String source,
    List<String> staticSources,
    PipelineStatement statement,
    boolean explicit) {

  public PipelineFlow {
    Objects.requireNonNull(flow, "flow");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(source, "source");
    staticSources = List.copyOf(staticSources);
    Objects.requireNonNull(statement, "statement");
  }

  /** The flow's name. */
  public String name() {
    return flow.name();
  }
}
