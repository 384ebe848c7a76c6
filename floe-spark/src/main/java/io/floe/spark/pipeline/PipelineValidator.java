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

  public PipelineValidator(SparkSession spark) {
    this.spark = spark;
  }

  /** All problems of {@code graph}; empty when the pipeline can run. */
  public List<PipelineProblem> validate(PipelineGraph graph) {
    List<PipelineProblem> problems = new ArrayList<>(graph.problems());
    if (graph.edges().findCycle().isPresent()) {
      return problems;
    }
    Set<String> failed = new HashSet<>();
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
      try {
        LogicalPlan parsed = pinning.parse(dataset.definition().query());
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
