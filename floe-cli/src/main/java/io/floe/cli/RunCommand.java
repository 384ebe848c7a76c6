package io.floe.cli;

import io.floe.cli.output.PipelineProgress;
import io.floe.pipeline.PipelineProject;
import io.floe.spark.pipeline.PipelineRun;
import io.floe.spark.pipeline.PipelineRunResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe run [DIR]}: brings a pipeline project's datasets into being and up to date. */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Run a pipeline project: create, update and refresh its datasets.",
    description = {
      "Run a pipeline project: create missing datasets, apply changed definitions, report",
      "datasets no longer defined (drop them with --prune), and refresh the graph in",
      "dependency order. Exits 1 when a dataset failed or was skipped."
    })
final class RunCommand implements Callable<Integer> {
  @Mixin LakehouseOptions lakehouse = new LakehouseOptions();
  @Mixin PipelineOptions pipeline = new PipelineOptions();
  @Spec CommandSpec spec;

  @Option(names = "--refresh", split = ",", paramLabel = "DATASET", description = "Refresh only these datasets (comma-separated).")
  List<String> refresh = new ArrayList<>();

  @Option(names = "--full-refresh", split = ",", paramLabel = "DATASET", description = "Refresh these datasets in full.")
  List<String> fullRefresh = new ArrayList<>();

  @Option(names = "--full-refresh-all", description = "Refresh every dataset in full.")
  boolean fullRefreshAll;

  @Option(names = "--no-server", description = "Start Spark here even when a floe server runs on the warehouse.")
  boolean noServer;

  @Option(names = "--prune", description = "Drop the materialized views this pipeline created and no longer defines.")
  boolean prune;

  @Override
  public Integer call() {
    if (fullRefreshAll && !fullRefresh.isEmpty()) {
      spec.commandLine().getErr().println("Error: give either --full-refresh or --full-refresh-all, not both");
      return 2;
    }
    PipelineProject project = PipelineProject.load(pipeline.folder());
    java.nio.file.Path warehouse = lakehouse.warehouse(LakehouseOptions.floeHome().resolve("warehouse"));
    // A running server's warm Spark spares this command Spark's start-up.
    java.util.Optional<io.floe.server.ServerInfo> server = lakehouse.server(warehouse, noServer, spec.commandLine().getErr());
    if (server.isPresent()) {
      PrintWriter out = spec.commandLine().getOut();
      out.printf("Running pipeline %s on floe server %s%n", project.spec().name(), server.get().describe());
      out.flush();
      try (PipelineProgress progress = PipelineProgress.log(out, project.spec().name())) {
        PipelineRunResult result =
            new RemotePipelineRun(server.get()).run(pipeline.folder(), refresh, fullRefresh, fullRefreshAll, prune);
        progress.finish(result);
        return result.succeeded() ? 0 : 1;
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new io.floe.FloeException("Interrupted while the pipeline ran on the server", e);
      }
    }
    return runEmbedded(project, warehouse);
  }

  /** Kept apart from {@link #call} so a run through the server never loads Spark's classes. */
  private int runEmbedded(PipelineProject project, java.nio.file.Path warehouse) {
    SparkSession spark = LakehouseSession.start(lakehouse, warehouse);
    PrintWriter out = spec.commandLine().getOut();
    try (PipelineProgress progress = PipelineProgress.open(out, project.spec().name())) {
      PipelineRunResult result =
          PipelineRun.of((org.apache.spark.sql.classic.SparkSession) spark, project)
              .refresh(refresh)
              .fullRefresh(fullRefresh)
              .fullRefreshAll(fullRefreshAll)
              .prune(prune)
              .listener(progress::update)
              .run();
      progress.finish(result);
      return result.succeeded() ? 0 : 1;
    }
  }
}
