package io.floe.spark.pipeline;

import io.floe.spark.mv.DefinitionValidator;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import io.floe.spark.Scala;

/**
 * Checks a pipeline without reading or writing data: the statement problems of its graph, a cycle,
 * and each dataset's definition analysed against the catalog, with the pipeline's own datasets
 * standing in for tables that do not exist yet. Every problem is reported, not just the first; a
 * dataset whose upstream has problems is reported as blocked rather than analysed.
 */
public final class PipelineValidator {
  private final SparkSession spark;
  private final Set<String> unchecked = new java.util.LinkedHashSet<>();

  public PipelineValidator(SparkSession spark) {
    this.spark = spark;
  }

  /**
   * The datasets the last validation could not analyse because they read a streaming table that
   * does not exist yet (its columns come from its files on the first run).
   */
  public Set<String> unchecked() {
    return Set.copyOf(unchecked);
  }

  private boolean exists(PipelineDataset dataset) {
    io.floe.spark.mv.ResolvedName name =
        new io.floe.spark.mv.MaterializedViewCatalog(spark)
            .resolve(dataset.streamingTable().name().parts(), dataset.defaultCatalog(), dataset.defaultNamespace());
    return name.catalog().tableExists(name.identifier());
  }

  private java.util.Optional<PipelineProblem> checkFolder(PipelineDataset dataset) {
    String path = dataset.streamingTable().source().path();
    if (!path.contains(":") && !java.nio.file.Files.exists(java.nio.file.Paths.get(path))) {
      return java.util.Optional.of(
          new PipelineProblem(dataset.statement().location(), dataset.name(), "folder " + path + " does not exist"));
    }
    return java.util.Optional.empty();
  }

  /** All problems of {@code graph}; empty when the pipeline can run. */
  public List<PipelineProblem> validate(PipelineGraph graph) {
    List<PipelineProblem> problems = new ArrayList<>(graph.problems());
    if (graph.edges().findCycle().isPresent()) {
      return problems;
    }
    Set<String> failed = new HashSet<>();
    unchecked.clear();
    Set<String> inCatalog = new HashSet<>();
    graph.problems().forEach(p -> failed.add(p.dataset()));
    Map<String, LogicalPlan> analyzed = new HashMap<>();
    SourcePinning pinning = new SourcePinning(spark);
    for (PipelineDataset dataset : graph.inOrder()) {
      List<String> blockedBy = dataset.sources().stream().filter(failed::contains).toList();
      if (!blockedBy.isEmpty()) {
        failed.add(dataset.name());
        problems.add(
            new PipelineProblem(
                dataset.statement().location(),
                dataset.name(),
                "not checked: it reads " + String.join(", ", blockedBy) + ", which has problems"));
        continue;
      }
      if (dataset.kind() == PipelineDataset.Kind.STREAMING_TABLE) {
        checkFolder(dataset).ifPresent(problem -> {
          failed.add(dataset.name());
          problems.add(problem);
        });
        if (exists(dataset)) {
          inCatalog.add(dataset.name());
        }
        continue;
      }
      List<String> notYetCreated =
          dataset.sources().stream()
              .filter(source -> graph.datasets().containsKey(source))
              .filter(source -> !analyzed.containsKey(source) && !inCatalog.contains(source))
              .toList();
      if (!notYetCreated.isEmpty()) {
        // A streaming table's columns come from its files; until its first run there is nothing
        // to analyse against, and reading the files is what a dry run must not do.
        unchecked.add(dataset.name());
        continue;
      }
      try {
        LogicalPlan parsed = pinning.parse(dataset.materializedView().query());
        DefinitionValidator.checkClauses(dataset.name(), parsed);
        LogicalPlan plan =
            pinning.substitute(
                parsed,
                dataset.defaultCatalog(),
                dataset.defaultNamespace(),
                (parts, name) -> {
                  LogicalPlan upstream = analyzed.get(name.toString());
                  if (upstream == null) {
                    return new UnresolvedRelation(Scala.seq(name.parts()), CaseInsensitiveStringMap.empty(), false);
                  }
                  return new SubqueryAlias(
                      new AliasIdentifier(parts.get(parts.size() - 1), Scala.seq(parts.subList(0, parts.size() - 1))),
                      upstream);
                });
        LogicalPlan result = Dataset.ofRows(spark, plan).queryExecution().analyzed();
        DefinitionValidator.checkDeterministic(dataset.name(), result);
        analyzed.put(dataset.name(), result);
      } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
        failed.add(dataset.name());
        problems.add(new PipelineProblem(dataset.statement().location(), dataset.name(), firstLine(e.getMessage())));
      }
    }
    return problems;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unknown error";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
