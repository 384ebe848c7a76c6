package io.floe.spark.ingest;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.refresh.RefreshType;
import io.floe.spark.Plans;
import io.floe.spark.ivm.BranchCommit;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.spark.refresh.SourcePinning;
import io.floe.sql.CreateFlow;
import io.floe.sql.CreateTableFedStreamingTable;
import io.floe.sql.QualifiedName;
import io.floe.sql.TypedColumn;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streaming tables fed by tables: each refresh runs every flow of the table over the rows its streamed source
 * appended since the flow's checkpoint, and appends the results and advances the checkpoints in one commit.
 *
 * <p>The rows go to a private branch; {@link CheckpointCommit} then moves main to it and sets the checkpoints in
 * one compare-and-swap of the table's metadata. A refresh that fails before leaves the table and its
 * checkpoints as they were; one that loses a race to another commit starts over from the checkpoints, so a
 * source row is appended once. A source commit that updates or deletes rows fails the refresh (see
 * {@link AppendRange}); a full refresh replaces the rows with the flows' results over all source rows.
 */
public final class TableIngestion {
  private static final Logger LOG = LoggerFactory.getLogger(TableIngestion.class);
  private static final int MAX_ATTEMPTS = 4;
  private static final String BRANCH_PREFIX = "floe_stream_";

  private final SparkSession spark;
  private final MaterializedViewCatalog catalog;
  private Runnable beforePublish = () -> {};

  public TableIngestion(SparkSession spark) {
    this.spark = spark;
    this.catalog = new MaterializedViewCatalog(spark);
  }

  /** Runs {@code hook} after a refresh wrote its rows and before it publishes them (tests race it there). */
  TableIngestion beforePublish(Runnable hook) {
    this.beforePublish = hook;
    return this;
  }

  /**
   * {@code CREATE [OR REFRESH] STREAMING TABLE name [(columns)] ... [AS query]}: creates the table and runs its
   * query over its source's rows; with {@code OR REFRESH}, an existing one takes a changed query and refreshes.
   *
   * @return the first refresh, or empty for {@code IF NOT EXISTS} on an existing table
   */
  public Optional<StreamingRefreshResult> create(CreateTableFedStreamingTable statement) {
    ResolvedName name = catalog.resolve(statement.name());
    String owner = "Cannot create streaming table " + name;
    List<StreamFlow> flows = new ArrayList<>();
    statement.query().ifPresent(query -> flows.add(
        new StreamFlow(name.name(), query, true, currentCatalog(), currentNamespace(), Optional.empty())));
    if (name.isView()) {
      throw new FloeException(owner + ": a view with that name exists");
    }
    if (name.catalog().tableExists(name.identifier())) {
      if (statement.ifNotExists()) {
        return Optional.empty();
      }
      Table existing = name.catalog().loadTable(name.identifier());
      if (!StreamFlow.isTableFed(existing.properties())) {
        throw new FloeException(owner + ": a table with that name exists"
            + (StreamingTable.isStreamingTable(existing) ? " and loads files" : ""));
      }
      if (!statement.orRefresh()) {
        throw new FloeException(owner + ": it already exists; use CREATE OR REFRESH STREAMING TABLE or REFRESH "
            + "STREAMING TABLE");
      }
      define(name, new StreamingTableDefinition(statement.columns(), statement.comment(), statement.tableProperties(),
          flows), false, "create");
      return Optional.of(refresh(name, false, Optional.empty()));
    }
    define(name, new StreamingTableDefinition(statement.columns(), statement.comment(), statement.tableProperties(),
        flows), false, "create");
    try {
      return Optional.of(refresh(name, false, Optional.empty()));
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      // A failed CREATE leaves nothing behind, so it can simply be run again once fixed.
      name.catalog().dropTable(name.identifier(), true);
      catalog.invalidateSparkCache(name);
      throw e;
    }
  }

  /**
   * {@code CREATE FLOW name AS INSERT INTO target ...}: adds the flow to the target (or replaces its query, keeping
   * its checkpoint while it streams the same table) and refreshes the target.
   */
  public StreamingRefreshResult createFlow(CreateFlow statement) {
    ResolvedName target = catalog.resolve(statement.target());
    String owner = "Cannot create flow " + statement.name();
    if (!target.catalog().tableExists(target.identifier())) {
      throw new FloeException(owner + ": its target " + target + " does not exist; create it first with CREATE "
          + "STREAMING TABLE " + target.name());
    }
    Table table = target.catalog().loadTable(target.identifier());
    if (!StreamFlow.isTableFed(table.properties())) {
      throw new FloeException(owner + ": its target " + target + " is not a streaming table fed by tables; create "
          + "it with CREATE STREAMING TABLE " + target.name() + " (without AS read_files)");
    }
    List<StreamFlow> flows = new ArrayList<>(StreamFlow.all(table.properties()));
    StreamFlow flow = new StreamFlow(statement.name(), statement.query(), statement.byName(), currentCatalog(),
        currentNamespace(), Optional.empty());
    flows.removeIf(existing -> existing.name().equals(flow.name()));
    flows.add(flow);
    Map<String, String> propertiesBefore = Map.copyOf(table.properties());
    Schema schemaBefore = table.schema();
    define(target, new StreamingTableDefinition(List.of(), Optional.empty(), Map.of(), flows), false, "create");
    try {
      return refresh(target, false, Optional.empty());
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      // Its first run failed, so nothing was written: the table is put back as it was, without the
      // flow, or its every refresh would fail the same way and hold up the table's other flows.
      try {
        putBack(target, propertiesBefore, schemaBefore);
      } catch (RuntimeException restore) {
        e.addSuppressed(restore);
      }
      throw new FloeException(owner + " into " + target + ": its first run failed, so the flow was not added: "
          + ErrorMessages.firstLineOf(e), e);
    }
  }

  /** The table's flow properties and columns as they were before a flow that failed was added. */
  private void putBack(ResolvedName name, Map<String, String> properties, Schema schema) {
    Table table = name.catalog().loadTable(name.identifier());
    UpdateProperties update = table.updateProperties();
    properties.forEach((key, value) -> {
      if (!value.equals(table.properties().get(key))) {
        update.set(key, value);
      }
    });
    table.properties().keySet().stream().filter(key -> !properties.containsKey(key)).forEach(update::remove);
    update.commit();
    List<String> added = table.schema().columns().stream()
        .filter(column -> schema.findField(column.fieldId()) == null)
        .map(org.apache.iceberg.types.Types.NestedField::name)
        .toList();
    if (!added.isEmpty()) {
      UpdateSchema columns = table.updateSchema();
      added.forEach(columns::deleteColumn);
      columns.commit();
    }
    catalog.invalidateSparkCache(name);
  }

  /** {@code REFRESH STREAMING TABLE name [FULL]}. */
  public StreamingRefreshResult refresh(QualifiedName qualified, boolean full) {
    return refresh(catalog.resolve(qualified), full, Optional.empty());
  }

  /**
   * Refreshes a streaming table fed by tables: incrementally, or in full (its rows replaced by its flows'
   * results over all source rows, every checkpoint reset).
   *
   * @param onlyFlows the flows to run (a pipeline runs the flows it defines); empty for all
   */
  public StreamingRefreshResult refresh(ResolvedName name, boolean full, Optional<Set<String>> onlyFlows) {
    if (!name.catalog().tableExists(name.identifier())) {
      throw new FloeException("Cannot refresh streaming table " + name + ": it does not exist");
    }
    if (!isTableFed(name)) {
      throw new FloeException("Cannot refresh streaming table " + name + ": it is not fed by tables");
    }
    for (int attempt = 1; ; attempt++) {
      try {
        return refreshOnce(name, full, onlyFlows);
      } catch (CommitFailedException e) {
        if (attempt >= MAX_ATTEMPTS) {
          throw new FloeException(
              "Cannot refresh streaming table " + name + ": " + MAX_ATTEMPTS + " attempts in a row lost a commit race", e);
        }
        LOG.info("Refresh of streaming table {} lost a commit race (attempt {}), starting over: {}", name, attempt,
            e.getMessage());
      }
    }
  }

  /** Whether the table is a streaming table fed by tables. */
  public boolean isTableFed(ResolvedName name) {
    return name.catalog().tableExists(name.identifier())
        && StreamFlow.isTableFed(name.catalog().loadTable(name.identifier()).properties());
  }

  /**
   * Creates the table when it is missing; otherwise records a changed definition (flow queries, comment,
   * properties; the columns of an existing table stay). A flow keeps its checkpoint unless it now streams another
   * table. Every flow is checked first (see {@link #check}).
   *
   * @param dropOtherFlows remove the flows the table has that {@code definition} does not list
   * @return true when the table was created
   */
  public boolean define(ResolvedName name, StreamingTableDefinition definition, boolean dropOtherFlows) {
    return define(name, definition, dropOtherFlows, "define");
  }

  private boolean define(ResolvedName name, StreamingTableDefinition definition, boolean dropOtherFlows, String verb) {
    String owner = "Cannot " + verb + " streaming table " + name;
    Map<String, StructType> schemas = new LinkedHashMap<>();
    for (StreamFlow flow : definition.flows()) {
      schemas.put(flow.name(), check(owner(verb, name, flow), flow));
    }
    if (!name.catalog().tableExists(name.identifier())) {
      Map<String, String> properties = new LinkedHashMap<>();
      properties.put("format-version", "2");
      properties.putAll(definition.tableProperties());
      definition.comment().ifPresent(c -> properties.put("comment", c));
      properties.put(StreamFlow.FLOWS, String.join(",", definition.flows().stream().map(StreamFlow::name).toList()));
      definition.flows().forEach(flow -> properties.putAll(flow.definitionProperties()));
      StructType columns = definition.columns().isEmpty()
          ? StreamFlow.tableColumns(new StructType(), definition.flows(), schemas)
          : declaredColumns(owner, definition.columns());
      checkPositionalFlows(verb, name, definition.flows(), schemas, columns);
      Table table = name.catalog().createTable(
          name.identifier(), SparkSchemaUtil.convert(nullable(columns)), PartitionSpec.unpartitioned(), properties);
      // An empty first snapshot gives every refresh a base to branch from.
      table.newAppend().commit();
      catalog.invalidateSparkCache(name);
      return true;
    }
    Table table = name.catalog().loadTable(name.identifier());
    if (!StreamFlow.isTableFed(table.properties())) {
      throw new FloeException(owner + ": a table with that name exists and is not a streaming table fed by tables");
    }
    checkPositionalFlows(verb, name, definition.flows(), schemas, SparkSchemaUtil.convert(table.schema()));
    addFlowColumns(name, table, definition.flows(), schemas);
    Map<String, StreamFlow> existing = new LinkedHashMap<>();
    StreamFlow.all(table.properties()).forEach(flow -> existing.put(flow.name(), flow));
    List<String> names = new ArrayList<>();
    UpdateProperties update = table.updateProperties();
    boolean changed = false;
    for (StreamFlow flow : definition.flows()) {
      names.add(flow.name());
      StreamFlow before = existing.remove(flow.name());
      if (before != null && before.sameDefinition(flow)) {
        continue;
      }
      changed = true;
      flow.definitionProperties().forEach(update::set);
      if (before != null && before.checkpoint().isPresent() && !sameSource(name, before, flow)) {
        update.remove(StreamFlow.checkpointKey(flow.name()));
      }
    }
    for (StreamFlow other : existing.values()) {
      if (dropOtherFlows) {
        StreamFlow.keys(other.name()).forEach(update::remove);
        changed = true;
      } else {
        names.add(other.name());
      }
    }
    String list = String.join(",", names);
    if (!list.equals(table.properties().get(StreamFlow.FLOWS))) {
      update.set(StreamFlow.FLOWS, list);
      changed = true;
    }
    for (Map.Entry<String, String> property : definition.tableProperties().entrySet()) {
      if (!property.getValue().equals(table.properties().get(property.getKey()))) {
        update.set(property.getKey(), property.getValue());
        changed = true;
      }
    }
    if (definition.comment().isPresent() && !definition.comment().get().equals(table.properties().get("comment"))) {
      update.set("comment", definition.comment().get());
      changed = true;
    }
    if (changed) {
      update.commit();
      catalog.invalidateSparkCache(name);
    }
    return false;
  }

  /**
   * Checks a flow without reading data: it streams exactly one existing table that is not a materialized view,
   * and its query analyzes and keeps append-only semantics.
   *
   * @param owner how errors start, such as {@code Cannot create streaming table lake.db.silver}
   * @return the query's columns
   */
  public StructType check(String owner, StreamFlow flow) {
    StreamedQuery query = StreamedQuery.of(spark, owner, flow);
    refuseUnstreamable(owner, query.source());
    SourcePinning pinning = new SourcePinning(spark);
    LogicalPlan analyzed;
    try {
      LogicalPlan plan = query.substitute((parts, name, streamed) -> StreamedQuery.asLeaf(spark, parts, streamed
          ? Plans.relation(name.parts())
          : pinning.read(parts, pinning.pinSource(name))));
      analyzed = Dataset.ofRows(spark, plan).queryExecution().analyzed();
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      throw new FloeException(owner + ": " + ErrorMessages.firstLine(e.getMessage(), "unknown error"), e);
    }
    AppendOnlyQuery.check(owner, query.parsed(), analyzed);
    return analyzed.schema();
  }

  /** Refuses a stream of a materialized view or of something that is not an existing table. */
  void refuseUnstreamable(String owner, ResolvedName source) {
    if (catalog.load(source).isPresent()) {
      throw new FloeException(owner + ": it streams materialized view " + source + ", whose refreshes rewrite its "
          + "rows rather than append them; read it without STREAM, or stream the tables it reads");
    }
    if (!source.catalog().tableExists(source.identifier())) {
      throw new FloeException(owner + ": it streams " + source + ", which does not exist");
    }
  }

  private StreamingRefreshResult refreshOnce(ResolvedName name, boolean full, Optional<Set<String>> onlyFlows) {
    long start = System.currentTimeMillis();
    Table table = name.catalog().loadTable(name.identifier());
    catalog.invalidateSparkCache(name);
    String refresh = "Cannot refresh streaming table " + name;
    String hint = "REFRESH STREAMING TABLE " + name + " FULL, or in its pipeline floe run --full-refresh " + name.name();
    boolean skipAll = Boolean.parseBoolean(table.properties().getOrDefault(StreamFlow.SKIP_CHANGE_COMMITS, "false").trim());
    Snapshot base = table.currentSnapshot();
    if (base == null) {
      table.newAppend().commit();
      table.refresh();
      base = table.currentSnapshot();
    }
    Map<String, String> expected = new HashMap<>();
    Map<String, String> checkpoints = new LinkedHashMap<>();
    List<StreamingRefreshResult.FlowRead> reads = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Map<StreamFlow, Dataset<Row>> batches = new LinkedHashMap<>();
    long rowsRead = 0;
    for (StreamFlow flow : StreamFlow.all(table.properties())) {
      if (onlyFlows.isPresent() && !onlyFlows.get().contains(flow.name())) {
        continue;
      }
      String key = StreamFlow.checkpointKey(flow.name());
      expected.put(key, table.properties().get(key));
      String owner = refresh + ", flow " + flow.name();
      StreamedQuery query = StreamedQuery.of(spark, owner, flow);
      refuseUnstreamable(owner, query.source());
      Table source;
      try {
        source = query.source().catalog().loadTable(query.source().identifier());
      } catch (NoSuchTableException e) {
        throw new FloeException(owner + ": its source " + query.source() + " was dropped", e);
      }
      Snapshot to = source.currentSnapshot();
      Long from = full ? null : flow.checkpoint().orElse(null);
      if (to == null || (from != null && from == to.snapshotId())) {
        reads.add(new StreamingRefreshResult.FlowRead(flow.name(), query.source().toString(), from,
            to == null ? null : to.snapshotId(), 0));
        continue;
      }
      long flowRows;
      if (from == null) {
        flowRows = rowCount(query.source(), to);
        batches.put(flow, Dataset.ofRows(spark, query.read(null, to.snapshotId())));
      } else {
        AppendRange range = AppendRange.between(source, query.source().toString(), refresh, flow.name(), from, to,
            skipAll || query.skipChangeCommits(), hint);
        if (range.skippedChangeCommits() > 0) {
          warnings.add("flow " + flow.name() + " skipped " + range.skippedChangeCommits() + " commit"
              + (range.skippedChangeCommits() == 1 ? "" : "s") + " of " + query.source()
              + " that update or delete rows (" + StreamFlow.SKIP_CHANGE_COMMITS + ")");
        }
        flowRows = range.addedRows();
        if (range.hasAppends()) {
          batches.put(flow, Dataset.ofRows(spark, query.read(from, to.snapshotId())));
        }
      }
      rowsRead += flowRows;
      checkpoints.put(key, Long.toString(to.snapshotId()));
      reads.add(new StreamingRefreshResult.FlowRead(flow.name(), query.source().toString(), from, to.snapshotId(),
          flowRows));
    }
    if (checkpoints.isEmpty() && !full) {
      return new StreamingRefreshResult(name.toString(), RefreshType.NO_CHANGE, reads, 0, 0,
          System.currentTimeMillis() - start, base.snapshotId(), warnings);
    }
    if (evolveSchema(name, table, batches)) {
      table.refresh();
      catalog.invalidateSparkCache(name);
    }
    StructType columns = SparkSchemaUtil.convert(table.schema());
    Dataset<Row> rows = null;
    for (Map.Entry<StreamFlow, Dataset<Row>> batch : batches.entrySet()) {
      Dataset<Row> aligned = align(name, batch.getKey(), batch.getValue(), columns);
      rows = rows == null ? aligned : rows.unionAll(aligned);
    }
    if (rows == null && full) {
      rows = spark.createDataFrame(List.<Row>of(), columns);
    }
    long snapshot;
    long rowsWritten = 0;
    if (rows == null) {
      snapshot = CheckpointCommit.commit(table, base.snapshotId(), expected, Optional.empty(), checkpoints);
    } else {
      try (BranchCommit commit = new BranchCommit(table, base.snapshotId(), BRANCH_PREFIX)) {
        catalog.invalidateSparkCache(name);
        try {
          if (full) {
            rows.writeTo(commit.sparkName(name.quoted())).overwrite(lit(true));
          } else {
            rows.writeTo(commit.sparkName(name.quoted())).append();
          }
        } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
          throw new FloeException(refresh + ": the table was dropped during the refresh", e);
        }
        table.refresh();
        Snapshot head = table.snapshot(table.refs().get(commit.branch()).snapshotId());
        rowsWritten = Long.parseLong(head.summary().getOrDefault(
            full ? SnapshotSummary.TOTAL_RECORDS_PROP : SnapshotSummary.ADDED_RECORDS_PROP, "0"));
        // New rows that the query filtered out entirely: move the checkpoints, publish no empty snapshot.
        Optional<String> branch = full || rowsWritten > 0 ? Optional.of(commit.branch()) : Optional.empty();
        beforePublish.run();
        snapshot = CheckpointCommit.commit(table, base.snapshotId(), expected, branch, checkpoints);
      }
    }
    catalog.invalidateSparkCache(name);
    RefreshType type = full ? RefreshType.FULL : rowsRead == 0 && rowsWritten == 0 ? RefreshType.NO_CHANGE
        : RefreshType.INCREMENTAL;
    warnings.forEach(w -> LOG.warn("Streaming table {}: {}", name, w));
    return new StreamingRefreshResult(name.toString(), type, reads, rowsRead, rowsWritten,
        System.currentTimeMillis() - start, snapshot, warnings);
  }

  /** Source rows at {@code snapshot}: from its summary when it has no delete files, else counted. */
  private long rowCount(ResolvedName source, Snapshot snapshot) {
    Map<String, String> summary = snapshot.summary();
    if ("0".equals(summary.get(SnapshotSummary.TOTAL_DELETE_FILES_PROP))
        && summary.containsKey(SnapshotSummary.TOTAL_RECORDS_PROP)) {
      return Long.parseLong(summary.get(SnapshotSummary.TOTAL_RECORDS_PROP));
    }
    LogicalPlan read = new RelationTimeTravel(
        Plans.relation(source.parts()),
        io.floe.spark.Scala.none(),
        io.floe.spark.Scala.some(Long.toString(snapshot.snapshotId())));
    return Dataset.ofRows(spark, read).count();
  }

  /** Adds the columns that flows matching by name produce and the table lacks; true when it added any. */
  private boolean evolveSchema(ResolvedName name, Table table, Map<StreamFlow, Dataset<Row>> batches) {
    Set<String> present = new LinkedHashSet<>();
    table.schema().columns().forEach(field -> present.add(field.name().toLowerCase(Locale.ROOT)));
    UpdateSchema update = null;
    for (Map.Entry<StreamFlow, Dataset<Row>> batch : batches.entrySet()) {
      if (!batch.getKey().byName() && !present.isEmpty()) {
        continue;
      }
      for (StructField field : batch.getValue().schema().fields()) {
        if (present.add(field.name().toLowerCase(Locale.ROOT))) {
          update = update == null ? table.updateSchema() : update;
          update.addColumn(field.name(), SparkSchemaUtil.convert(field.dataType()));
        }
      }
    }
    if (update == null) {
      return false;
    }
    try {
      update.commit();
    } catch (RuntimeException e) {
      throw new FloeException("Cannot refresh streaming table " + name + ": cannot add its flows' new columns: "
          + e.getMessage(), e);
    }
    return true;
  }

  /** A flow's rows with exactly the table's columns, in its order: by name (missing ones NULL) or by position. */
  private static Dataset<Row> align(ResolvedName name, StreamFlow flow, Dataset<Row> rows, StructType table) {
    List<Column> columns = new ArrayList<>();
    if (flow.byName()) {
      Map<String, String> produced = new HashMap<>();
      Arrays.stream(rows.columns()).forEach(c -> produced.put(c.toLowerCase(Locale.ROOT), c));
      for (StructField field : table.fields()) {
        String column = produced.get(field.name().toLowerCase(Locale.ROOT));
        Column value = column == null ? lit(null) : col("`" + column.replace("`", "``") + "`");
        columns.add(value.cast(field.dataType()).as(field.name()));
      }
    } else {
      String[] produced = rows.columns();
      if (produced.length != table.fields().length) {
        throw new FloeException("Cannot refresh streaming table " + name + ": flow " + flow.name() + " produces "
            + produced.length + " columns " + Arrays.toString(produced) + " but the table has " + table.fields().length
            + " " + Arrays.toString(table.fieldNames()) + "; match them or use INSERT INTO ... BY NAME");
      }
      for (int i = 0; i < produced.length; i++) {
        StructField field = table.fields()[i];
        columns.add(col("`" + produced[i].replace("`", "``") + "`").cast(field.dataType()).as(field.name()));
      }
    }
    return rows.select(columns.toArray(new Column[0]));
  }

  /**
   * Adds the columns the flows by name produce and {@code table} lacks (all of the first flow's when
   * it has none), as a refresh would once they have rows, so that the table's columns are those the
   * flows were checked against from now on.
   */
  private void addFlowColumns(ResolvedName name, Table table, List<StreamFlow> flows, Map<String, StructType> schemas) {
    StructType current = SparkSchemaUtil.convert(table.schema());
    StructField[] columns = StreamFlow.tableColumns(current, flows, schemas).fields();
    if (columns.length == current.fields().length) {
      return;
    }
    UpdateSchema update = table.updateSchema();
    for (int i = current.fields().length; i < columns.length; i++) {
      update.addColumn(columns[i].name(), SparkSchemaUtil.convert(columns[i].dataType()));
    }
    update.commit();
    catalog.invalidateSparkCache(name);
  }

  /**
   * Refuses a flow inserting by position whose query gives another number of columns than the table
   * will have (its columns and those its flows by name add), before the flow is recorded: otherwise
   * every later refresh of the table fails on it, the other flows' too.
   */
  private static void checkPositionalFlows(
      String verb, ResolvedName name, List<StreamFlow> flows, Map<String, StructType> schemas, StructType table) {
    StructType columns = StreamFlow.tableColumns(table, flows, schemas);
    for (StreamFlow flow : flows) {
      Optional<String> problem = flow.columnCountProblem(schemas.get(flow.name()), table, columns);
      if (problem.isPresent()) {
        throw new FloeException(owner(verb, name, flow) + ": it " + problem.get());
      }
    }
  }

  private StructType declaredColumns(String owner, List<TypedColumn> columns) {
    StringBuilder ddl = new StringBuilder();
    for (TypedColumn column : columns) {
      if (ddl.length() > 0) {
        ddl.append(", ");
      }
      ddl.append('`').append(column.name().replace("`", "``")).append("` ").append(column.type());
      column.comment().ifPresent(c -> ddl.append(" COMMENT '").append(c.replace("\\", "\\\\").replace("'", "\\'")).append("'"));
    }
    try {
      return spark.sessionState().sqlParser().parseTableSchema(ddl.toString());
    } catch (Exception e) { // Spark's ParseException is checked
      throw new FloeException(owner + ": invalid column list: " + ErrorMessages.firstLine(e.getMessage(), "unknown error"), e);
    }
  }

  private static StructType nullable(StructType schema) {
    return new StructType(Arrays.stream(schema.fields())
        .map(f -> new StructField(f.name(), f.dataType(), true, f.metadata()))
        .toArray(StructField[]::new));
  }

  private boolean sameSource(ResolvedName table, StreamFlow before, StreamFlow after) {
    try {
      return StreamedQuery.of(spark, "", before).source().equals(StreamedQuery.of(spark, "", after).source());
    } catch (RuntimeException e) {
      LOG.info("Flow {} of {}: cannot read its previous query ({}); its checkpoint is reset", before.name(), table,
          e.getMessage());
      return false;
    }
  }

  private static String owner(String verb, ResolvedName table, StreamFlow flow) {
    return flow.name().equals(table.name().toLowerCase(Locale.ROOT))
        ? "Cannot " + verb + " streaming table " + table
        : "Cannot " + verb + " flow " + flow.name() + " of streaming table " + table;
  }

  private String currentCatalog() {
    return spark.sessionState().catalogManager().currentCatalog().name();
  }

  private List<String> currentNamespace() {
    return Arrays.asList(spark.sessionState().catalogManager().currentNamespace());
  }
}
