package io.floe.spark.pipeline;

import io.floe.FloeException;
import io.floe.pipeline.PipelineProject;
import io.floe.refresh.RefreshResult;
import io.floe.spark.command.CreateMaterializedViewCommand;
import io.floe.spark.command.ReplacedView;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshStatus;
import io.floe.refresh.RefreshTrigger;
import io.floe.spark.ingest.FileIngestion;
import io.floe.spark.ingest.IngestResult;
import io.floe.spark.ingest.StreamFlow;
import io.floe.spark.ingest.StreamingTable;
import io.floe.spark.ingest.StreamingRefreshResult;
import io.floe.spark.ingest.StreamingTableDefinition;
import io.floe.spark.ingest.TableIngestion;
import io.floe.sql.CreateTableFedStreamingTable;
import io.floe.sql.QualifiedName;
import org.apache.iceberg.catalog.TableIdentifier;
import io.floe.spark.refresh.GraphRefresh;
import io.floe.spark.refresh.GraphRefreshResult;
import io.floe.spark.refresh.RefreshListener;
import java.util.Locale;
import io.floe.sql.CreateMaterializedView;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.classic.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a pipeline project: creates the datasets that are missing, replaces those whose definition
 * changed (a new view version over the same storage table, refreshed in full, so readers below it
 * still refresh incrementally), reports datasets the project no longer defines (dropping them only
 * when asked), then refreshes the selected datasets in dependency order. A dataset that fails
 * leaves what succeeded committed and skips the datasets that read it.
 *
 * <pre>{@code
 * PipelineRun.of(spark, project).refresh(List.of("gold")).fullRefresh(List.of("silver")).listener(print).run();
 * }</pre>
 */
public final class PipelineRun {
  /** View property naming the pipeline that created a materialized view. */
  public static final String PIPELINE = "floe.pipeline";
  /** View property with the digest of the pipeline statement that defined it. */
  public static final String DEFINITION_HASH = "floe.pipeline.definition-hash";

  private static final Logger LOG = LoggerFactory.getLogger(PipelineRun.class);

  private final SparkSession spark;
  private final PipelineProject project;
  /** The graph of the run under way. */
  private PipelineGraph graph;
  /** Views this run replaced whose first refresh has not committed yet, by dataset name. */
  private final Map<String, ReplacedView> pendingReplacements = new LinkedHashMap<>();
  private List<String> refreshOnly = List.of();
  private List<String> fullRefresh = List.of();
  private boolean fullRefreshAll;
  private boolean prune;
  private Consumer<PipelineEvent> listener = event -> {};

  private PipelineRun(SparkSession spark, PipelineProject project) {
    this.spark = spark;
    this.project = project;
  }

  public static PipelineRun of(SparkSession spark, PipelineProject project) {
    return new PipelineRun(Objects.requireNonNull(spark, "spark"), Objects.requireNonNull(project, "project"));
  }

  /** Refreshes only these datasets (names as in the project, qualified or not); default all. */
  public PipelineRun refresh(List<String> names) {
    this.refreshOnly = List.copyOf(names);
    return this;
  }

  /** Refreshes these datasets in full (they are refreshed even when not selected otherwise). */
  public PipelineRun fullRefresh(List<String> names) {
    this.fullRefresh = List.copyOf(names);
    return this;
  }

  public PipelineRun fullRefreshAll(boolean all) {
    this.fullRefreshAll = all;
    return this;
  }

  /** Drops the materialized views this pipeline created and no longer defines. */
  public PipelineRun prune(boolean prune) {
    this.prune = prune;
    return this;
  }

  public PipelineRun listener(Consumer<PipelineEvent> listener) {
    this.listener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /**
   * Runs the pipeline.
   *
   * @throws FloeException listing every problem when the pipeline does not validate; nothing is
   *     created or refreshed then
   */
  public PipelineRunResult run() {
    long start = System.currentTimeMillis();
    PipelineGraph graph = PipelineGraph.build(spark, project);
    this.graph = graph;
    SessionSettings runSettings = SessionSettings.apply(spark, graph.settings());
    try {
      List<PipelineProblem> problems = new PipelineValidator(spark).validate(graph);
      if (!problems.isEmpty()) {
        throw new FloeException(
            "Pipeline " + project.spec().name() + " has " + problems.size() + " problem" + (problems.size() == 1 ? "" : "s")
                + ":\n  " + String.join("\n  ", problems.stream().map(PipelineProblem::toString).toList()));
      }
      Set<String> full = fullRefreshAll ? new LinkedHashSet<>(graph.datasets().keySet()) : select(graph, fullRefresh);
      if (!fullRefreshAll) {
        refuseFullRefreshOfFileTables(full);
      }
      Set<String> selected =
          refreshOnly.isEmpty() ? new LinkedHashSet<>(graph.datasets().keySet()) : select(graph, refreshOnly);
      selected.addAll(full);
      Map<String, DatasetOutcome> outcomes = new LinkedHashMap<>();
      graph.datasets().keySet().forEach(name -> emit(name, PipelineEvent.State.PENDING, ""));
      MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
      RefreshRun refreshRun = RefreshRun.start(RefreshTrigger.PIPELINE);
      Map<String, PipelineEvent.State> applied = new LinkedHashMap<>();
      createNamespaces(graph);
      for (PipelineDataset dataset : graph.inOrder()) {
        Optional<String> blocked = blockedBy(dataset, outcomes);
        if (blocked.isPresent()) {
          skip(outcomes, dataset.name(), blocked.get());
          continue;
        }
        try {
          if (dataset.kind() == PipelineDataset.Kind.STREAMING_TABLE) {
            ingest(dataset, selected.contains(dataset.name()), outcomes);
          } else if (dataset.kind() == PipelineDataset.Kind.TABLE_FED_STREAMING_TABLE) {
            if (dataset.sources().stream().anyMatch(applied::containsKey)) {
              // It joins a view of this run: that view refreshes first.
              refreshViews(catalog, graph, applied, selected, full, refreshRun, outcomes);
              applied.clear();
              blocked = blockedBy(dataset, outcomes);
              if (blocked.isPresent()) {
                skip(outcomes, dataset.name(), blocked.get());
                continue;
              }
            }
            stream(catalog, graph, dataset, selected.contains(dataset.name()), full.contains(dataset.name()), outcomes);
          } else {
            applied.put(dataset.name(), apply(catalog, dataset));
          }
        } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
          RuntimeException failure = FloeException.unchecked(e);
          LOG.error("Pipeline {}: dataset {} failed", project.spec().name(), dataset.name(), failure);
          Optional.ofNullable(pendingReplacements.remove(dataset.name())).ifPresent(replaced -> replaced.restore(failure));
          outcomes.put(dataset.name(), new DatasetOutcome(dataset.name(), PipelineEvent.State.FAILED, Optional.empty(), failure.getMessage()));
          emit(dataset.name(), PipelineEvent.State.FAILED, failure.getMessage());
        }
      }
      refreshViews(catalog, graph, applied, selected, full, refreshRun, outcomes);
      removed(catalog, graph, outcomes);
      return new PipelineRunResult(project.spec().name(), new ArrayList<>(outcomes.values()), System.currentTimeMillis() - start);
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      // A run that stopped before a replaced view's refresh committed puts the view back as it
      // was; what cannot be put back is told with the failure.
      RuntimeException failure = FloeException.unchecked(e);
      pendingReplacements.values().forEach(replaced -> replaced.restore(failure));
      pendingReplacements.clear();
      throw failure;
    } finally {
      runSettings.close();
    }
  }

  /** Creates or replaces the dataset's materialized view as needed; returns what it did. */
  private PipelineEvent.State apply(MaterializedViewCatalog catalog, PipelineDataset dataset) {
    ResolvedName name = resolve(catalog, dataset);
    Optional<MaterializedView> existing = catalog.load(name);
    if (existing.isPresent()) {
      String owner = existing.get().properties().get(PIPELINE);
      if (!project.spec().name().equals(owner)) {
        throw new FloeException(
            "Cannot define " + name + " in pipeline " + project.spec().name() + ": it already exists and "
                + (owner == null ? "was not created by a pipeline" : "belongs to pipeline " + owner)
                + "; drop it or rename the dataset");
      }
      if (dataset.definitionHash().equals(existing.get().properties().get(DEFINITION_HASH))) {
        return PipelineEvent.State.UNCHANGED;
      }
    }
    emit(dataset.name(), PipelineEvent.State.CREATING, existing.isPresent() ? "definition changed" : "");
    CreateMaterializedView create = dataset.materializedView();
    CreateMaterializedView statement =
        new CreateMaterializedView(
            create.name(), existing.isPresent(), false, create.managed(), create.columns(), create.expectations(),
            create.comment(), create.partitionedBy(), create.tableProperties(), create.schedule(),
            create.refreshPolicy(), false, create.query(), create.originalText());
    // Defined without data: the run refreshes its views together. A replaced view stays
    // restorable until its refresh commits (refreshViews commits or restores it).
    inContext(dataset, () -> new CreateMaterializedViewCommand(statement).defineWithoutData(spark)
        .ifPresent(replaced -> pendingReplacements.put(dataset.name(), replaced)));
    catalog.loadExisting(name, "tag")
        .view()
        .updateProperties()
        .set(PIPELINE, project.spec().name())
        .set(DEFINITION_HASH, dataset.definitionHash())
        .commit();
    PipelineEvent.State state = existing.isPresent() ? PipelineEvent.State.REPLACED : PipelineEvent.State.CREATED;
    emit(dataset.name(), state, "");
    return state;
  }

  /**
   * Refreshes the selected views, and every view whose definition is new, as one graph: one pin of
   * the sources for all of them, independent branches in parallel, readers of a failure skipped.
   */
  private void refreshViews(
      MaterializedViewCatalog catalog,
      PipelineGraph graph,
      Map<String, PipelineEvent.State> applied,
      Set<String> selected,
      Set<String> full,
      RefreshRun refreshRun,
      Map<String, DatasetOutcome> outcomes) {
    List<MaterializedView> targets = new ArrayList<>();
    for (Map.Entry<String, PipelineEvent.State> entry : applied.entrySet()) {
      String name = entry.getKey();
      if (selected.contains(name) || entry.getValue() != PipelineEvent.State.UNCHANGED) {
        PipelineDataset dataset = graph.datasets().get(name);
        targets.add(catalog.loadExisting(resolve(catalog, dataset), "refresh"));
      } else {
        outcomes.put(name, new DatasetOutcome(name, entry.getValue(), Optional.empty(), "not selected for refresh"));
        emit(name, entry.getValue(), "not selected for refresh");
      }
    }
    if (targets.isEmpty()) {
      return;
    }
    GraphRefreshResult result =
        GraphRefresh.of(spark)
            .targets(targets)
            .downstream(false)
            // A replaced view recomputes in full, as CREATE OR REPLACE does.
            .fullRefreshOf(java.util.stream.Stream.concat(full.stream(), applied.entrySet().stream()
                    .filter(e -> e.getValue() == PipelineEvent.State.REPLACED).map(Map.Entry::getKey))
                .collect(java.util.stream.Collectors.toSet()))
            .run(refreshRun)
            .listener(new RefreshListener() {
              @Override
              public void started(String materializedView) {
                emit(materializedView, PipelineEvent.State.REFRESHING, "");
              }

              @Override
              public void finished(RefreshOutcome outcome) {
                // Committed: the replaced storage can go now, whatever happens to the rest of the run.
                if (outcome.status() == RefreshStatus.SUCCEEDED) {
                  Optional.ofNullable(pendingReplacements.remove(outcome.materializedView())).ifPresent(ReplacedView::commit);
                }
              }
            })
            .refresh();
    for (RefreshOutcome outcome : result.outcomes()) {
      String name = outcome.materializedView();
      PipelineEvent.State before = applied.getOrDefault(name, PipelineEvent.State.UNCHANGED);
      ReplacedView replaced = pendingReplacements.remove(name);
      if (replaced != null && outcome.status() != RefreshStatus.SUCCEEDED) {
        // A replacement whose first refresh failed, or was skipped, keeps what the view was.
        FloeException failure = new FloeException(
            CreateMaterializedViewCommand.replacementFailed(resolve(catalog, graph.datasets().get(name)), outcome.message()));
        replaced.restore(failure);
        String detail = failure.getMessage()
            + Arrays.stream(failure.getSuppressed()).map(e -> "; and it could not be put back: " + e.getMessage()).collect(java.util.stream.Collectors.joining());
        outcomes.put(name, new DatasetOutcome(name, outcome.status() == RefreshStatus.FAILED ? PipelineEvent.State.FAILED
            : PipelineEvent.State.SKIPPED, Optional.empty(), detail));
        emit(name, outcomes.get(name).state(), detail);
        continue;
      }
      DatasetOutcome done;
      if (outcome.status() == RefreshStatus.SUCCEEDED) {
        RefreshResult refresh = outcome.result();
        String detail = refresh.type() + " in " + refresh.durationMs() + " ms, " + refresh.rowsRead() + " rows read, "
            + refresh.rowsWritten() + " written, " + refresh.rowsRemoved() + " removed"
            + (refresh.expectations().isEmpty()
                ? ""
                : "; expectations: " + String.join("; ", refresh.expectations().stream().map(e -> e.describe()).toList()));
        done = new DatasetOutcome(name, PipelineEvent.State.REFRESHED, Optional.of(refresh),
            before == PipelineEvent.State.UNCHANGED ? detail : before.name().toLowerCase(Locale.ROOT) + "; " + detail);
      } else {
        PipelineEvent.State state =
            outcome.status() == RefreshStatus.FAILED ? PipelineEvent.State.FAILED : PipelineEvent.State.SKIPPED;
        done = new DatasetOutcome(name, state, Optional.empty(), outcome.message());
      }
      outcomes.put(name, done);
      emit(name, done.state(), done.detail());
    }
  }

  /** Creates the namespaces the pipeline writes to that do not exist yet, as a pipeline run does. */
  private void createNamespaces(PipelineGraph graph) {
    Set<String> done = new LinkedHashSet<>();
    for (PipelineDataset dataset : graph.datasets().values()) {
      String name = dataset.name();
      String namespace = new QualifiedName(QualifiedName.parse(name).namespace()).toString();
      if (!done.add(namespace)) {
        continue;
      }
      spark.sql("CREATE NAMESPACE IF NOT EXISTS " + namespace).collect();
    }
  }

  /** Creates the streaming table when missing and loads its new files (when selected). */
  private void ingest(PipelineDataset dataset, boolean selected, Map<String, DatasetOutcome> outcomes) {
    if (!selected) {
      outcomes.put(dataset.name(), new DatasetOutcome(dataset.name(), PipelineEvent.State.UNCHANGED, Optional.empty(), "not selected for refresh"));
      emit(dataset.name(), PipelineEvent.State.UNCHANGED, "not selected for refresh");
      return;
    }
    ResolvedName name = new MaterializedViewCatalog(spark).resolve(
        dataset.streamingTable().name().parts(), dataset.defaultCatalog(), dataset.defaultNamespace());
    if (name.catalog().tableExists(name.identifier())) {
      // One created before streaming tables over files were tagged has no owner yet: this run adopts it.
      String owner = name.catalog().loadTable(name.identifier()).properties().get(PIPELINE);
      if (owner != null && !project.spec().name().equals(owner)) {
        throw new FloeException(
            "Cannot define " + name + " in pipeline " + project.spec().name() + ": a table of that name exists and"
                + " belongs to pipeline " + owner + "; drop it or rename the dataset");
      }
    }
    emit(dataset.name(), PipelineEvent.State.REFRESHING, "loading new files");
    Optional<IngestResult>[] result = new Optional[1];
    inContext(dataset, () -> result[0] = new FileIngestion(spark).create(dataset.streamingTable()));
    org.apache.iceberg.Table table = name.catalog().loadTable(name.identifier());
    if (!project.spec().name().equals(table.properties().get(PIPELINE))) {
      table.updateProperties().set(PIPELINE, project.spec().name()).commit();
    }
    String detail =
        result[0].map(r -> "loaded " + r.filesLoaded() + " new file" + (r.filesLoaded() == 1 ? "" : "s") + ", "
                + r.rowsLoaded() + " rows (" + r.rowsRescued() + " rescued) in " + r.durationMs() + " ms"
                + (r.warnings().isEmpty() ? "" : "; warnings: " + String.join("; ", r.warnings())))
            .orElse("up to date");
    outcomes.put(dataset.name(), new DatasetOutcome(dataset.name(), PipelineEvent.State.REFRESHED, Optional.empty(), detail));
    emit(dataset.name(), PipelineEvent.State.REFRESHED, detail);
  }

  /**
   * Creates a streaming table fed by tables when missing, records a changed definition (its flows' queries;
   * flows the project no longer defines are reported, and dropped with prune), then runs the flows the project
   * defines, incrementally or in full.
   */
  private void stream(
      MaterializedViewCatalog catalog, PipelineGraph graph, PipelineDataset dataset, boolean selected, boolean fullRefresh,
      Map<String, DatasetOutcome> outcomes) {
    ResolvedName name = resolve(catalog, dataset);
    TableIngestion ingestion = new TableIngestion(spark);
    boolean exists = name.catalog().tableExists(name.identifier());
    Map<String, String> properties = exists ? name.catalog().loadTable(name.identifier()).properties() : Map.of();
    if (exists) {
      String owner = properties.get(PIPELINE);
      if (!project.spec().name().equals(owner)) {
        throw new FloeException(
            "Cannot define " + name + " in pipeline " + project.spec().name() + ": a table of that name exists and "
                + (owner == null ? "was not created by a pipeline" : "belongs to pipeline " + owner)
                + "; drop it or rename the dataset");
      }
    }
    List<PipelineFlow> flows = graph.flowsInto(dataset.name());
    Set<String> defined = new LinkedHashSet<>(flows.stream().map(PipelineFlow::name).toList());
    List<String> removedFlows = StreamFlow.names(properties).stream().filter(f -> !defined.contains(f)).toList();
    PipelineEvent.State state = PipelineEvent.State.UNCHANGED;
    if (!exists || !dataset.definitionHash().equals(properties.get(DEFINITION_HASH)) || (prune && !removedFlows.isEmpty())) {
      emit(dataset.name(), PipelineEvent.State.CREATING, exists ? "definition changed" : "");
      CreateTableFedStreamingTable create = dataset.tableFedStreamingTable();
      Map<String, String> tableProperties = new LinkedHashMap<>(create.tableProperties());
      tableProperties.put(PIPELINE, project.spec().name());
      tableProperties.put(DEFINITION_HASH, dataset.definitionHash());
      inContext(dataset, () -> ingestion.define(
          name,
          new StreamingTableDefinition(create.columns(), create.comment(), tableProperties,
              flows.stream().map(PipelineFlow::flow).toList()),
          prune));
      state = exists ? PipelineEvent.State.REPLACED : PipelineEvent.State.CREATED;
      emit(dataset.name(), state, "");
    }
    for (String flow : removedFlows) {
      String flowName = dataset.name() + "." + flow;
      DatasetOutcome outcome = prune
          ? new DatasetOutcome(flowName, PipelineEvent.State.DROPPED, Optional.empty(), "flow no longer defined; dropped")
          : new DatasetOutcome(flowName, PipelineEvent.State.REMOVED, Optional.empty(),
              "flow no longer defined; kept but not run (run with --prune to drop it)");
      outcomes.put(flowName, outcome);
      emit(flowName, outcome.state(), outcome.detail());
    }
    if (!selected && state == PipelineEvent.State.UNCHANGED) {
      outcomes.put(dataset.name(), new DatasetOutcome(dataset.name(), state, Optional.empty(), "not selected for refresh"));
      emit(dataset.name(), state, "not selected for refresh");
      return;
    }
    emit(dataset.name(), PipelineEvent.State.REFRESHING, fullRefresh ? "full refresh" : "reading new source rows");
    StreamingRefreshResult[] result = new StreamingRefreshResult[1];
    inContext(dataset, () -> result[0] = ingestion.refresh(name, fullRefresh, Optional.of(defined)));
    StreamingRefreshResult refresh = result[0];
    String detail = refresh.type() + " in " + refresh.durationMs() + " ms, " + refresh.rowsRead() + " rows read, "
        + refresh.rowsWritten() + " written"
        + (refresh.warnings().isEmpty() ? "" : "; warnings: " + String.join("; ", refresh.warnings()));
    if (state != PipelineEvent.State.UNCHANGED) {
      detail = state.name().toLowerCase(Locale.ROOT) + "; " + detail;
    }
    outcomes.put(dataset.name(), new DatasetOutcome(dataset.name(), PipelineEvent.State.REFRESHED, Optional.empty(), detail));
    emit(dataset.name(), PipelineEvent.State.REFRESHED, detail);
  }

  private static ResolvedName resolve(MaterializedViewCatalog catalog, PipelineDataset dataset) {
    QualifiedName declared = dataset.kind() == PipelineDataset.Kind.TABLE_FED_STREAMING_TABLE
        ? dataset.tableFedStreamingTable().name() : dataset.materializedView().name();
    return catalog.resolve(declared.parts(), dataset.defaultCatalog(), dataset.defaultNamespace());
  }

  /** Reports (and with prune, drops) this pipeline's materialized views the project no longer defines. */
  private void removed(MaterializedViewCatalog catalog, PipelineGraph graph, Map<String, DatasetOutcome> outcomes) {
    // Only the namespaces the pipeline writes to: a pipeline of the same name elsewhere is another
    // pipeline. Those are its datasets' namespaces and its own (floe.yml's, else the session's),
    // where its datasets go by default: one whose datasets were all removed is still searched.
    Map<String, ResolvedName> namespaces = new LinkedHashMap<>();
    List<ResolvedName> places = new ArrayList<>();
    for (PipelineDataset dataset : graph.datasets().values()) {
      places.add(catalog.resolve(QualifiedName.parse(dataset.name()).parts(), dataset.defaultCatalog(), dataset.defaultNamespace()));
    }
    CatalogManager catalogs = spark.sessionState().catalogManager();
    places.add(catalog.resolve(
        List.of("dataset"),
        project.spec().catalog().orElse(catalogs.currentCatalog().name()),
        project.spec().namespace().map(ns -> QualifiedName.parse(ns).parts()).orElse(Arrays.asList(catalogs.currentNamespace()))));
    for (ResolvedName name : places) {
      if (!(name.catalog() instanceof org.apache.iceberg.catalog.SupportsNamespaces ns)
          || ns.namespaceExists(name.identifier().namespace())) {
        namespaces.putIfAbsent(name.catalogName() + "." + name.identifier().namespace(), name);
      }
    }
    for (ResolvedName place : namespaces.values()) {
      removedStreamingTables(place, graph, outcomes);
    }
    for (ResolvedName place : namespaces.values()) {
      for (MaterializedView mv : catalog.list(place.catalogName(), place.identifier().namespace())) {
        String name = mv.name().toString();
        if (!project.spec().name().equals(mv.properties().get(PIPELINE)) || graph.datasets().containsKey(name)) {
          continue;
        }
        keepOrDrop(name, "DROP MATERIALIZED VIEW " + mv.name().quoted(), outcomes);
      }
    }
  }

  /** Reports (and with prune, drops) this pipeline's streaming tables (fed by tables or files) that the project no longer defines. */
  private void removedStreamingTables(ResolvedName place, PipelineGraph graph, Map<String, DatasetOutcome> outcomes) {
    for (TableIdentifier identifier : place.catalog().listTables(place.identifier().namespace())) {
      ResolvedName table = place.withIdentifier(identifier);
      String name = table.toString();
      if (graph.datasets().containsKey(name) || outcomes.containsKey(name)) {
        continue;
      }
      Map<String, String> properties;
      try {
        properties = place.catalog().loadTable(identifier).properties();
      } catch (RuntimeException e) {
        LOG.warn("Pipeline {}: cannot read table {} while looking for removed datasets", project.spec().name(), name, e);
        continue;
      }
      boolean streamingTable = StreamFlow.isTableFed(properties) || properties.containsKey(StreamingTable.SOURCE_PATH);
      if (!streamingTable || !project.spec().name().equals(properties.get(PIPELINE))) {
        continue;
      }
      keepOrDrop(name, "DROP TABLE " + table.quoted(), outcomes);
    }
  }

  /** A dataset the project no longer defines: reported and kept, or with prune dropped by {@code drop}. */
  private void keepOrDrop(String name, String drop, Map<String, DatasetOutcome> outcomes) {
    if (!prune) {
      outcomes.put(name, new DatasetOutcome(name, PipelineEvent.State.REMOVED, Optional.empty(), "no longer defined; kept (run with --prune to drop it)"));
      emit(name, PipelineEvent.State.REMOVED, outcomes.get(name).detail());
      return;
    }
    try {
      spark.sql(drop).collect();
      outcomes.put(name, new DatasetOutcome(name, PipelineEvent.State.DROPPED, Optional.empty(), "no longer defined; dropped"));
      emit(name, PipelineEvent.State.DROPPED, outcomes.get(name).detail());
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      LOG.error("Pipeline {}: cannot drop {}", project.spec().name(), name, e);
      outcomes.put(name, new DatasetOutcome(name, PipelineEvent.State.FAILED, Optional.empty(), "cannot drop: " + e.getMessage()));
      emit(name, PipelineEvent.State.FAILED, outcomes.get(name).detail());
    }
  }

  private Optional<String> blockedBy(PipelineDataset dataset, Map<String, DatasetOutcome> outcomes) {
    for (String source : dataset.sources()) {
      DatasetOutcome upstream = outcomes.get(source);
      if (upstream != null && (upstream.state() == PipelineEvent.State.FAILED || upstream.state() == PipelineEvent.State.SKIPPED)) {
        return Optional.of("upstream " + source + (upstream.state() == PipelineEvent.State.FAILED ? " failed" : " was skipped"));
      }
    }
    return Optional.empty();
  }

  private void skip(Map<String, DatasetOutcome> outcomes, String name, String reason) {
    outcomes.put(name, new DatasetOutcome(name, PipelineEvent.State.SKIPPED, Optional.empty(), reason));
    emit(name, PipelineEvent.State.SKIPPED, reason);
  }

  /**
   * A streaming table over files loads each file once; there is no full refresh to run, so naming
   * one is refused before anything runs rather than answered with a run that reloads nothing.
   * ({@code --full-refresh-all} refreshes everything else in full and loads their new files.)
   */
  private void refuseFullRefreshOfFileTables(Set<String> full) {
    List<String> fileTables = full.stream()
        .filter(name -> graph.datasets().get(name).kind() == PipelineDataset.Kind.STREAMING_TABLE)
        .toList();
    if (!fileTables.isEmpty()) {
      throw new FloeException("Cannot fully refresh " + String.join(", ", fileTables)
          + ": a streaming table over files loads each file once and has no full refresh; to load every file again,"
          + " drop the table (DROP TABLE name) and run the pipeline");
    }
  }

  private static Set<String> select(PipelineGraph graph, List<String> names) {
    Set<String> selected = new LinkedHashSet<>();
    if (names.isEmpty()) {
      return selected;
    }
    for (String name : names) {
      selected.add(
          graph.find(name)
              .orElseThrow(() -> new FloeException("Dataset " + name + " is not defined in this pipeline; it defines " + graph.datasets().keySet()))
              .name());
    }
    return selected;
  }

  private void inContext(PipelineDataset dataset, Runnable action) {
    // The SETs before the dataset in its file apply while it is defined and loaded; an MV records
    // them, and its refreshes run under them later.
    try (SessionSettings applied = SessionSettings.apply(spark, graph.settingsOf(dataset))) {
      inCatalogContext(dataset, action);
    }
  }

  private void inCatalogContext(PipelineDataset dataset, Runnable action) {
    CatalogManager catalogs = spark.sessionState().catalogManager();
    String previousCatalog = catalogs.currentCatalog().name();
    String[] previousNamespace = catalogs.currentNamespace();
    try {
      catalogs.setCurrentCatalog(dataset.defaultCatalog());
      catalogs.setCurrentNamespace(dataset.defaultNamespace().toArray(new String[0]));
      action.run();
    } finally {
      catalogs.setCurrentCatalog(previousCatalog);
      // The namespace the session was in may be gone (dropped meanwhile); then the catalog's default stays.
      if (previousNamespace.length > 0
          && catalogs.currentCatalog() instanceof org.apache.spark.sql.connector.catalog.SupportsNamespaces namespaces
          && namespaces.namespaceExists(previousNamespace)) {
        catalogs.setCurrentNamespace(previousNamespace);
      }
    }
  }

  private void emit(String dataset, PipelineEvent.State state, String detail) {
    listener.accept(new PipelineEvent(dataset, state, detail == null ? "" : detail));
  }

  /** What a run did with one dataset. */
  public record DatasetOutcome(String dataset, PipelineEvent.State state, Optional<RefreshResult> refresh, String detail) {
    public DatasetOutcome {
      Objects.requireNonNull(dataset, "dataset");
      Objects.requireNonNull(state, "state");
      Objects.requireNonNull(refresh, "refresh");
      detail = detail == null ? "" : detail;
    }
  }
}
