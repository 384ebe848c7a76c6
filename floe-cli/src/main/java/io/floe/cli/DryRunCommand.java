package io.floe.cli;

import io.floe.pipeline.PipelineProject;
import io.floe.spark.pipeline.PipelineDataset;
import io.floe.spark.pipeline.PipelineGraph;
import io.floe.spark.pipeline.PipelineProblem;
import io.floe.spark.pipeline.PipelineValidator;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code floe dry-run [DIR]}: validates a pipeline project without reading or writing data. */
@Command(
    name = "dry-run",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Check a pipeline project without reading or writing data.",
    description = {
      "Check a pipeline project without reading or writing data: syntax, unknown tables and",
      "columns, and cycles between datasets. Every problem is listed; exits 1 when there is one."
    })
final class DryRunCommand implements Callable<Integer> {
  @Mixin LakehouseOptions lakehouse = new LakehouseOptions();
  @Mixin PipelineOptions pipeline = new PipelineOptions();
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PipelineProject project = PipelineProject.load(pipeline.folder());
    SparkSession spark = LakehouseSession.start(lakehouse, lakehouse.warehouse(LakehouseOptions.floeHome().resolve("warehouse")));
    PipelineGraph graph = PipelineGraph.build((org.apache.spark.sql.classic.SparkSession) spark, project);
    PipelineValidator validator = new PipelineValidator((org.apache.spark.sql.classic.SparkSession) spark);
    List<PipelineProblem> problems = validator.validate(graph);
    java.util.Set<String> unchecked = validator.unchecked();
    PrintWriter out = spec.commandLine().getOut();
    out.printf("Pipeline %s: %d dataset%s in %d file%s%n", project.spec().name(), graph.datasets().size(),
        graph.datasets().size() == 1 ? "" : "s", project.files().size(), project.files().size() == 1 ? "" : "s");
    if (problems.isEmpty()) {
      out.println("Refresh order:");
      for (PipelineDataset dataset : graph.inOrder()) {
        out.printf("  %s  (%s)%s%s%n", dataset.name(), dataset.statement().location(),
            dataset.sources().isEmpty() ? "" : "  reads " + String.join(", ", dataset.sources()),
            unchecked.contains(dataset.name()) ? "  NOT CHECKED" : "");
      }
      if (unchecked.isEmpty()) {
        out.println("No problems found.");
      } else {
        // Their columns come from a streaming table over files that does not exist yet: reading
        // its files is what a dry run does not do.
        out.printf("No problems found in what could be checked; %d dataset%s NOT CHECKED, reading a streaming table"
                + " over files that does not exist yet (its first load gives its columns); floe run reports their"
                + " problems as it reaches them.%n",
            unchecked.size(), unchecked.size() == 1 ? " is" : "s are");
      }
      out.flush();
      return 0;
    }
    out.printf("%d problem%s:%n", problems.size(), problems.size() == 1 ? "" : "s");
    problems.forEach(problem -> out.println("  " + problem));
    out.flush();
    return 1;
  }
}
