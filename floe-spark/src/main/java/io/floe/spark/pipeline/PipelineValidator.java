package io.floe.spark.pipeline;

import io.floe.ErrorMessages;
import io.floe.graph.DependencyGraph;
import io.floe.spark.Plans;
import io.floe.spark.ingest.AppendOnlyQuery;
import io.floe.spark.ingest.StreamFlow;
import io.floe.spark.ingest.StreamedQuery;
import io.floe.spark.mv.DefinitionValidator;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.QualifiedName;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
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
    QualifiedName declared = dataset.kind() == PipelineDataset.Kind.STREAMING_TABLE
        ? dataset.streamingTable().name() : dataset.tableFedStreamingTable().name();
    ResolvedName name =
        new MaterializedViewCatalog(spark).resolve(declared.parts(), dataset.defaultCatalog(), dataset.defaultNamespace());
    return name.catalog().tableExists(name.identifier());
  }

  /**
   * A problem when the catalog holds the dataset's name as another kind of object than the project
   * now defines (a materialized view that became a streaming table, or the reverse): the run would
   * fail on it, and changing the kind drops the rows, so it is the user's call.
   */
  private java.util.Optional<PipelineProblem> checkKind(PipelineDataset dataset) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    ResolvedName name = catalog.resolve(QualifiedName.parse(dataset.name()).parts(), dataset.defaultCatalog(), dataset.defaultNamespace());
    boolean definesView = dataset.kind() == PipelineDataset.Kind.MATERIALIZED_VIEW;
    boolean isView = catalog.load(name).isPresent();
    String problem;
    if (definesView && !isView && name.catalog().tableExists(name.identifier())) {
      problem = name + " exists as a table, and the project now defines it as a materialized view; drop it first"
          + " (DROP TABLE " + name.quoted() + ", which drops its rows), or rename the dataset";
    } else if (!definesView && isView) {
      problem = name + " exists as a materialized view, and the project now defines it as a streaming table; drop"
          + " it first (DROP MATERIALIZED VIEW " + name.quoted() + ", which drops its rows), or rename the dataset";
    } else {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(new PipelineProblem(dataset.statement().location(), dataset.name(), problem));
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
    // As a run does: the project's configuration throughout, and each dataset under the SETs
    // before it in its file, since settings such as ANSI mode or case sensitivity change analysis.
    try (SessionSettings applied = SessionSettings.apply(spark, graph.settings())) {
      return validateUnderSettings(graph);
    }
  }

  private List<PipelineProblem> validateUnderSettings(PipelineGraph graph) {
    List<PipelineProblem> problems = new ArrayList<>(graph.problems());
    Set<String> failed = new HashSet<>();
    unchecked.clear();
    Set<String> inCatalog = new HashSet<>();
    graph.problems().forEach(p -> failed.add(p.dataset()));
    Map<String, LogicalPlan> analyzed = new HashMap<>();
    SourcePinning pinning = new SourcePinning(spark);
    // A cycle is the graph's problem; the datasets outside it are checked all the same, so that one
    // dry run reports everything there is to fix.
    List<PipelineDataset> checkable = graph.inOrderOutsideCycles();
    graph.edges().findCycle().ifPresent(cycle -> readersOfCycle(graph, cycle, checkable, problems));
    for (PipelineDataset dataset : checkable) {
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
      try (SessionSettings applied = SessionSettings.apply(spark, graph.settingsOf(dataset))) {
        check(graph, dataset, problems, failed, inCatalog, analyzed, pinning);
      } catch (RuntimeException e) { // a SET Spark refuses: the dataset's problem
        failed.add(dataset.name());
        problems.add(new PipelineProblem(
            dataset.statement().location(), dataset.name(), ErrorMessages.firstLine(e.getMessage(), "unknown error")));
      }
    }
    return problems;
  }

  /** A problem for each dataset that reads {@code cycle} without being on it: it cannot be checked. */
  private static void readersOfCycle(
      PipelineGraph graph, List<String> cycle, List<PipelineDataset> checkable, List<PipelineProblem> problems) {
    Set<String> outside = new HashSet<>();
    checkable.forEach(d -> outside.add(d.name()));
    for (PipelineDataset dataset : graph.datasets().values()) {
      if (!outside.contains(dataset.name()) && !cycle.contains(dataset.name())) {
        problems.add(new PipelineProblem(dataset.statement().location(), dataset.name(),
            "not checked: it reads the cycle " + DependencyGraph.describePath(cycle)));
      }
    }
  }

  /** Checks one dataset whose sources passed, adding what it finds to {@code problems} and {@code failed}. */
  private void check(
      PipelineGraph graph,
      PipelineDataset dataset,
      List<PipelineProblem> problems,
      Set<String> failed,
      Set<String> inCatalog,
      Map<String, LogicalPlan> analyzed,
      SourcePinning pinning) {
    java.util.Optional<PipelineProblem> otherKind = checkKind(dataset);
    if (otherKind.isPresent()) {
      failed.add(dataset.name());
      problems.add(otherKind.get());
      return;
    }
    if (dataset.kind() == PipelineDataset.Kind.TABLE_FED_STREAMING_TABLE) {
      if (exists(dataset)) {
        inCatalog.add(dataset.name());
      }
      List<PipelineProblem> found = checkFlows(graph, dataset, analyzed, inCatalog);
      if (!found.isEmpty()) {
        failed.add(dataset.name());
        problems.addAll(found);
      } else if (!inCatalog.contains(dataset.name()) && !analyzed.containsKey(dataset.name())
          && !dataset.tableFedStreamingTable().columns().isEmpty()) {
        // Not created yet and no flow checked: its declared columns stand for it in its readers' checks.
        try {
          analyzed.put(dataset.name(), declaredColumns(dataset));
        } catch (RuntimeException e) {
          failed.add(dataset.name());
          problems.add(new PipelineProblem(dataset.statement().location(), dataset.name(),
              "invalid column list: " + ErrorMessages.firstLine(e.getMessage(), "unknown error")));
        }
      }
      return;
    }
    if (dataset.kind() == PipelineDataset.Kind.STREAMING_TABLE) {
      checkFolder(dataset).ifPresent(problem -> {
        failed.add(dataset.name());
        problems.add(problem);
      });
      if (exists(dataset)) {
        inCatalog.add(dataset.name());
      }
      return;
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
      return;
    }
    try {
      LogicalPlan parsed = pinning.parse(dataset.materializedView().query());
      DefinitionValidator.checkClauses(dataset.name(), parsed);
      LogicalPlan plan =
          pinning.substitute(
              parsed, dataset.defaultCatalog(), dataset.defaultNamespace(), (parts, name) -> read(analyzed, parts, name));
      LogicalPlan result = Dataset.ofRows(spark, plan).queryExecution().analyzed();
      DefinitionValidator.checkDeterministic(dataset.name(), result);
      analyzed.put(dataset.name(), result);
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      failed.add(dataset.name());
      problems.add(new PipelineProblem(
          dataset.statement().location(), dataset.name(), ErrorMessages.firstLine(e.getMessage(), "unknown error")));
    }
  }

  /**
   * Checks the flows into a streaming table fed by tables: none streams a materialized view, and each query
   * analyzes and is append-only. The first flow that analyzes stands for the table in its readers' checks.
   */
  private List<PipelineProblem> checkFlows(
      PipelineGraph graph, PipelineDataset dataset, Map<String, LogicalPlan> analyzed, Set<String> inCatalog) {
    List<PipelineProblem> problems = new ArrayList<>();
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    Map<PipelineFlow, org.apache.spark.sql.types.StructType> produced = new java.util.LinkedHashMap<>();
    for (PipelineFlow flow : graph.flowsInto(dataset.name())) {
      String owner = flow.explicit() ? "flow " + flow.name() : "streaming table " + dataset.name();
      String location = flow.statement().location();
      PipelineDataset source = graph.datasets().get(flow.source());
      boolean streamsView = source != null
          ? source.kind() == PipelineDataset.Kind.MATERIALIZED_VIEW
          : catalog.load(catalog.resolve(List.of(flow.source().split("\\.")), "", List.of())).isPresent();
      if (streamsView) {
        problems.add(new PipelineProblem(location, dataset.name(), owner + " streams materialized view " + flow.source()
            + ", whose refreshes rewrite its rows rather than append them; read it without STREAM, or stream the"
            + " tables it reads"));
        continue;
      }
      List<String> notYetCreated = new ArrayList<>();
      notYetCreated.add(flow.source());
      notYetCreated.addAll(flow.staticSources());
      notYetCreated.removeIf(name -> !graph.datasets().containsKey(name) || analyzed.containsKey(name) || inCatalog.contains(name));
      if (!notYetCreated.isEmpty()) {
        unchecked.add(dataset.name());
        continue;
      }
      try {
        StreamedQuery query = StreamedQuery.of(spark, owner, flow.flow());
        LogicalPlan plan =
            query.substitute((parts, name, streamed) -> StreamedQuery.asLeaf(spark, parts, read(analyzed, parts, name)));
        LogicalPlan result = Dataset.ofRows(spark, plan).queryExecution().analyzed();
        AppendOnlyQuery.check(owner, query.parsed(), result);
        analyzed.putIfAbsent(dataset.name(), result);
        produced.put(flow, result.schema());
      } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
        problems.add(new PipelineProblem(location, dataset.name(), ErrorMessages.firstLine(e.getMessage(), "unknown error")));
      }
    }
    // A flow not checked (its source not created yet) gives no columns to count.
    if (problems.isEmpty() && produced.size() == graph.flowsInto(dataset.name()).size()) {
      problems.addAll(checkFlowColumns(dataset, produced));
    }
    return problems;
  }

  /** An empty relation with the declared columns of a streaming table fed by tables. */
  private LogicalPlan declaredColumns(PipelineDataset dataset) {
    StringBuilder ddl = new StringBuilder();
    for (io.floe.sql.TypedColumn column : dataset.tableFedStreamingTable().columns()) {
      ddl.append(ddl.length() == 0 ? "" : ", ").append('`').append(column.name().replace("`", "``")).append("` ")
          .append(column.type());
    }
    org.apache.spark.sql.types.StructType schema = org.apache.spark.sql.types.StructType.fromDDL(ddl.toString());
    return spark.createDataFrame(List.<org.apache.spark.sql.Row>of(), schema).queryExecution().analyzed();
  }

  /** A streaming table's columns now: the table's, or before it is created its declared ones (their names). */
  private org.apache.spark.sql.types.StructType currentColumns(PipelineDataset dataset) {
    if (exists(dataset)) {
      ResolvedName name = new MaterializedViewCatalog(spark).resolve(
          dataset.tableFedStreamingTable().name().parts(), dataset.defaultCatalog(), dataset.defaultNamespace());
      return org.apache.iceberg.spark.SparkSchemaUtil.convert(name.catalog().loadTable(name.identifier()).schema());
    }
    org.apache.spark.sql.types.StructType declared = new org.apache.spark.sql.types.StructType();
    for (io.floe.sql.TypedColumn column : dataset.tableFedStreamingTable().columns()) {
      declared = declared.add(column.name(), org.apache.spark.sql.types.DataTypes.NullType);
    }
    return declared;
  }

  /**
   * The flows by position whose queries give another number of columns than the table will have:
   * its columns (before it is created: its declared ones, if any), then those its flows by name
   * add, as defining them adds them.
   */
  private List<PipelineProblem> checkFlowColumns(
      PipelineDataset dataset, Map<PipelineFlow, org.apache.spark.sql.types.StructType> produced) {
    org.apache.spark.sql.types.StructType table = currentColumns(dataset);
    List<StreamFlow> flows = new ArrayList<>();
    Map<String, org.apache.spark.sql.types.StructType> schemas = new HashMap<>();
    produced.forEach((flow, schema) -> {
      flows.add(flow.flow());
      schemas.put(flow.flow().name(), schema);
    });
    org.apache.spark.sql.types.StructType columns = StreamFlow.tableColumns(table, flows, schemas);
    List<PipelineProblem> problems = new ArrayList<>();
    produced.forEach((flow, schema) -> flow.flow().columnCountProblem(schema, table, columns).ifPresent(problem -> {
      String owner = flow.explicit() ? "flow " + flow.name() : "streaming table " + dataset.name();
      problems.add(new PipelineProblem(flow.statement().location(), dataset.name(), owner + " " + problem));
    }));
    return problems;
  }

  /** A relation read in a check: an upstream dataset's analyzed plan under the name used, else the catalog's. */
  private static LogicalPlan read(Map<String, LogicalPlan> analyzed, List<String> parts, ResolvedName name) {
    LogicalPlan upstream = analyzed.get(name.toString());
    if (upstream == null) {
      return Plans.relation(name.parts());
    }
    return new SubqueryAlias(
        new AliasIdentifier(parts.get(parts.size() - 1), Scala.seq(parts.subList(0, parts.size() - 1))), upstream);
  }
}
