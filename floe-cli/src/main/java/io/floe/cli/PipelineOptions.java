package io.floe.cli;

import java.nio.file.Path;
import java.nio.file.Paths;
import picocli.CommandLine.Parameters;

/** The pipeline project folder shared by {@code floe run} and {@code floe dry-run}. */
final class PipelineOptions {
  @Parameters(
      index = "0",
      arity = "0..1",
      paramLabel = "DIR",
      description = "Pipeline project folder holding floe.yml or spark-pipeline.yml (default: the current folder).")
  Path folder;

  Path folder() {
    return folder != null ? folder : Paths.get("");
  }
}
