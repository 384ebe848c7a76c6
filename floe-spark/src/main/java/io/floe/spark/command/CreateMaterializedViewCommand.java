package io.floe.spark.command;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.graph.DependencyGraph;
import io.floe.mv.ExpectationsParser;
import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshPolicy;
import io.floe.spark.ivm.DefinitionShape;
import io.floe.spark.ivm.HiddenKeys;
import io.floe.spark.ivm.StorageLayout;
import io.floe.spark.mv.DefinitionValidator;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.spark.refresh.PinnedDefinition;
import io.floe.spark.refresh.RefreshExecutor;
import io.floe.spark.refresh.SourcePinning;
import io.floe.sql.ColumnSpec;
import io.floe.sql.CreateMaterializedView;
import io.floe.sql.Expectation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * {@code CREATE [OR REPLACE] [MANAGED] MATERIALIZED VIEW}: validates the definition, creates the
 * storage table and the Iceberg view that points to it, then runs the first refresh unless the
 * statement ends with {@code WITH NO DATA}.
 */
public final class CreateMaterializedViewCommand extends FloeCommand<CreateMaterializedView> {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CreateMaterializedViewCommand.class);
  /** Spark's view property for the query's own column names (Iceberg's SparkView reads it). */


  public CreateMaterializedViewCommand(CreateMaterializedView statement) {
    super(statement, RefreshOutput.attributes());
  }


  /**
   * What {@link #define} did: the view, its storage table, the one it replaced, and how to undo the
   * replacement.
   */
  private record Defined(
      ResolvedName name, ResolvedName storage, Optional<MaterializedView> existing, Optional<ReplacedView> replaced) {}

  @Override
  protected List<Row> execute(SparkSession spark) {
    Optional<Defined> defined = define(spark);
    if (defined.isEmpty()) {
      return List.of();
    }
    ResolvedName name = defined.get().name();
    Optional<MaterializedView> existing = defined.get().existing();
    Optional<ReplacedView> replaced = defined.get().replaced();
    if (!statement().withData()) {
      replaced.ifPresent(ReplacedView::commit);
      return List.of();
    }
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView created = null;
    List<Row> result;
    try {
      created = catalog.loadExisting(name, "refresh");
      // A replacement recomputes in full: Iceberg reuses the version id of an equal definition,
      // so a replacement that changes only expectations would otherwise find nothing changed.
      result = List.of(RefreshOutput.row(new RefreshExecutor(spark).refresh(created, existing.isPresent())));
    } catch (RuntimeException e) {
      String cause = created == null ? ErrorMessages.firstLineOf(e) : withoutRefreshPrefix(created, e);
      // A failed CREATE leaves nothing behind, so it can simply be run again once fixed. A failed
      // replacement puts the view back as it was, with its rows.
      if (replaced.isPresent()) {
        replaced.get().restore(e);
        throw new FloeException(replacementFailed(name, cause), e);
      }
      if (existing.isEmpty()) {
        // By the names this statement created, not as read back from the view's properties.
        MaterializedViewDrop.drop(catalog, name, defined.get().storage());
        throw new FloeException(
            "Cannot create materialized view " + name + ": its first refresh failed, so nothing was created: " + cause,
            e);
      }
      throw e;
    }
    // The replacement committed: only now is the old storage dropped.
    replaced.ifPresent(ReplacedView::commit);
    return result;
  }

  /**
   * Defines the view, which a statement {@code WITH NO DATA} leaves unrefreshed, for a caller that
   * refreshes it later with other views (a pipeline run). A replacement comes back pending: the
   * caller commits it once the view's first refresh committed, or restores the view as it was when
   * that refresh failed. Empty when there is nothing to refresh ({@code IF NOT EXISTS} of an
   * existing view) or nothing replaced.
   *
   * @throws IllegalStateException when the statement has data
   */
  public Optional<ReplacedView> defineWithoutData(SparkSession spark) {
    if (statement().withData()) {
      throw new IllegalStateException("defineWithoutData runs only statements WITH NO DATA");
    }
    return io.floe.spark.rewrite.RewriteSuppression.withoutRewrite(() -> define(spark).flatMap(Defined::replaced));
  }

  /** The message of a replacement whose first refresh failed and that was put back. */
  public static String replacementFailed(ResolvedName name, String cause) {
    return "Cannot replace materialized view " + name + ": its first refresh failed, so it keeps its previous definition"
        + " and rows: " + cause;
  }

  private Optional<Defined> define(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    ResolvedName name = catalog.resolve(statement().name());
    ViewCatalog views = name.viewCatalog();
    Optional<MaterializedView> existing = catalog.load(name);
    if (existing.isPresent() && statement().ifNotExists()) {
      return Optional.empty();
    }
    if (existing.isPresent() && !statement().orReplace()) {
      throw new FloeException(
          "Cannot create materialized view " + name + ": it already exists; use CREATE OR REPLACE or IF NOT EXISTS");
    }
    StorageProperties.check("create materialized view " + name, statement().tableProperties());
    if (existing.isEmpty() && (views.viewExists(name.identifier()) || name.catalog().tableExists(name.identifier()))) {
      throw new FloeException(
          "Cannot create materialized view "
              + name
              + ": a "
              + (views.viewExists(name.identifier()) ? "view" : "table")
              + " with that name exists");
    }

    String defaultCatalog = spark.sessionState().catalogManager().currentCatalog().name();
    List<String> defaultNamespace = Arrays.asList(spark.sessionState().catalogManager().currentNamespace());
    SourcePinning pinning = new SourcePinning(spark);
    LogicalPlan parsed;
    try {
      parsed = pinning.parse(statement().query());
    } catch (FloeException e) {
      throw new FloeException("Cannot create materialized view " + name + ": its definition does not parse: "
          + io.floe.ErrorMessages.firstLineOf(e.getCause() == null ? e : e.getCause()), e);
    }
    DefinitionValidator.checkClauses(name.toString(), parsed);
    List<ResolvedName> sources = pinning.sourceNames(parsed, defaultCatalog, defaultNamespace);
    checkNoCycle(catalog, name, sources);
    List<ResolvedName> fixedReads = pinning.fixedReadNames(parsed, defaultCatalog, defaultNamespace);

    PinnedDefinition pinned;
    LogicalPlan analyzed;
    StructType schema;
    DefinitionShape shape;
    try {
      pinned = pinning.pin(statement().query(), defaultCatalog, defaultNamespace);
      Dataset<org.apache.spark.sql.Row> rows = Dataset.ofRows(spark, pinned.plan());
      analyzed = rows.queryExecution().analyzed();
      DefinitionValidator.checkDeterministic(name.toString(), analyzed);
      schema = rows.schema();
      shape = DefinitionShape.of(pinned.parsed(), analyzed);
    } catch (FloeException e) {
      throw new FloeException("Cannot create materialized view " + name + ": " + stripPrefix(e.getMessage()), e);
    } catch (Exception e) {
      // Catch Exception, not RuntimeException: Spark's AnalysisException (unknown column, type
      // errors) is a checked exception that Scala code throws undeclared.
      throw new FloeException(
          "Cannot create materialized view " + name + ": " + ErrorMessages.firstLine(e.getMessage()), e);
    }
    StructType viewSchema = applyColumnList(name, schema);
    checkExpectations(spark, name, pinned, viewSchema);
    HiddenKeys hiddenKeys = HiddenKeys.none();
    List<StructField> hiddenKeyFields = List.of();
    Optional<KeptKeys> kept =
        keepUnselectedKeys(spark, pinning, parsed, pinned.parsed(), analyzed, shape, defaultCatalog, defaultNamespace);
    if (kept.isPresent()) {
      hiddenKeys = kept.get().keys();
      hiddenKeyFields = kept.get().fields();
      shape = kept.get().shape();
    }
    StorageLayout layout = chooseLayout(name, shape);
    if (layout == StorageLayout.PLAIN) {
      hiddenKeys = HiddenKeys.none();
      hiddenKeyFields = List.of();
    }

    ResolvedName storage = name.sibling(name.name() + MaterializedViewProperties.STORAGE_TABLE_SUFFIX);
    StructType storageSchema = withHiddenColumns(name, viewSchema, hiddenKeyFields, layout, shape);
    boolean keepStorage = false;
    Optional<ReplacedView> replaced = Optional.empty();
    if (existing.isPresent()) {
      storage = existing.get().storageName();
      keepStorage = storageFits(existing.get(), storageSchema);
      replaced = Optional.of(new ReplacedView(catalog, existing.get(), !keepStorage));
    } else if (name.catalog().tableExists(storage.identifier())) {
      throw new FloeException(
          "Cannot create materialized view "
              + name
              + ": its storage table name "
              + storage
              + " is taken by a table; rename or drop that table");
    }
    try {
      if (keepStorage) {
        updateStorageProperties(existing.get());
      } else {
        createStorageTable(spark, name, storage, storageSchema);
      }
      Map<String, String> properties = viewProperties(spark, storage, schema, viewSchema, pinned, fixedReads, layout);
      if (!hiddenKeys.isEmpty()) {
        properties.put(HiddenKeys.PROPERTY, hiddenKeys.toProperty());
      }
      org.apache.iceberg.view.View view =
          views
              .buildView(name.identifier())
              .withSchema(SparkSchemaUtil.convert(viewSchema))
              .withQuery(MaterializedView.DIALECT, statement().query())
              .withDefaultCatalog(defaultCatalog)
              .withDefaultNamespace(Namespace.of(defaultNamespace.toArray(new String[0])))
              .withProperties(properties)
              .createOrReplace();
      if (existing.isPresent()) {
        dropPropertiesNotRestated(view, properties);
      }
    } catch (RuntimeException e) {
      if (replaced.isPresent()) {
        replaced.get().restore(e);
      } else {
        name.catalog().dropTable(storage.identifier(), true);
      }
      String prefix = "Cannot create materialized view " + name + ": ";
      String message = ErrorMessages.firstLine(e.getMessage());
      throw new FloeException(message != null && message.startsWith(prefix) ? message : prefix + message, e);
    }

    return Optional.of(new Defined(name, storage, existing, replaced));
  }

  private static String withoutRefreshPrefix(MaterializedView mv, RuntimeException e) {
    String cause = ErrorMessages.firstLineOf(e);
    String refreshing = "Cannot refresh " + mv + ": ";
    return cause.startsWith(refreshing) ? cause.substring(refreshing.length()) : cause;
  }

  /**
   * Whether a replaced view's storage table can hold the new definition's rows as it is: same
   * columns and types (hidden ones included) and same partitioning. Keeping it keeps its identity,
   * so the views reading this one see the replacement's full refresh as an ordinary change and
   * refresh incrementally.
   */
  private boolean storageFits(MaterializedView existing, StructType storageSchema) {
    Table table = existing.storageTable();
    StructType current = SparkSchemaUtil.convert(table.schema());
    if (current.fields().length != storageSchema.fields().length) {
      return false;
    }
    for (int i = 0; i < current.fields().length; i++) {
      StructField was = current.fields()[i];
      StructField now = storageSchema.fields()[i];
      if (!was.name().equalsIgnoreCase(now.name()) || !was.dataType().sameType(now.dataType())) {
        return false;
      }
    }
    String partitioning = String.join("|", statement().partitionedBy());
    String recorded = table.properties().get(StorageProperties.PARTITIONED_BY);
    return recorded != null ? recorded.equals(partitioning) : table.spec().isUnpartitioned() && partitioning.isEmpty();
  }

  private void updateStorageProperties(MaterializedView existing) {
    Table table = existing.storageTable();
    org.apache.iceberg.UpdateProperties update = table.updateProperties();
    statement().tableProperties().forEach(update::set);
    update.set(MaterializedViewProperties.MANAGED, Boolean.toString(statement().managed()));
    update.commit();
  }

  /**
   * Refuses an expectation whose condition does not analyze against the view's columns (an unknown column, a
   * non-boolean condition), naming the constraint.
   */
  private void checkExpectations(SparkSession spark, ResolvedName name, PinnedDefinition pinned, StructType viewSchema) {
    Set<String> seen = new HashSet<>();
    for (Expectation expectation : statement().expectations()) {
      if (!seen.add(expectation.name().toLowerCase(Locale.ROOT))) {
        throw new FloeException(
            "Cannot create materialized view " + name + ": constraint " + expectation.name() + " is declared twice");
      }
      try {
        Dataset<org.apache.spark.sql.Row> rows = Dataset.ofRows(spark, pinned.plan()).toDF(viewSchema.fieldNames());
        org.apache.spark.sql.types.DataType type =
            rows.select(org.apache.spark.sql.functions.expr(expectation.expression())).schema().fields()[0].dataType();
        if (!type.equals(org.apache.spark.sql.types.DataTypes.BooleanType)) {
          throw new FloeException("its condition is " + type.sql() + ", not BOOLEAN");
        }
      } catch (Exception e) { // AnalysisException is thrown undeclared
        throw new FloeException(
            "Cannot create materialized view " + name + ": constraint " + expectation.name() + " EXPECT ("
                + expectation.expression() + "): " + ErrorMessages.firstLine(e.getMessage()),
            e);
      }
    }
  }

  /** Refuses a definition that reads itself, directly or through other materialized views. */
  private static void checkNoCycle(MaterializedViewCatalog catalog, ResolvedName name, List<ResolvedName> sources) {
    for (ResolvedName source : sources) {
      if (source.equals(name)) {
        throw new FloeException("Cannot create materialized view " + name + ": its definition reads " + name + " itself");
      }
    }
    DependencyGraph<String> graph = new DependencyGraph<>();
    for (MaterializedView mv : catalog.listAll(name.catalogName())) {
      if (!mv.name().equals(name)) {
        mv.sourceNames().forEach(source -> graph.addEdge(source, mv.name().toString()));
      }
    }
    sources.forEach(source -> graph.addEdge(source.toString(), name.toString()));
    graph.findCycle()
        .ifPresent(
            cycle -> {
              throw new FloeException(
                  "Cannot create materialized view "
                      + name
                      + ": its definition forms a cycle: "
                      + DependencyGraph.describePath(cycle));
            });
  }

  /** Renames and comments the query's columns as the optional column list says. */
  private StructType applyColumnList(ResolvedName name, StructType schema) {
    List<ColumnSpec> columns = statement().columns();
    StructField[] fields = schema.fields();
    if (!columns.isEmpty() && columns.size() != fields.length) {
      throw new FloeException(
          "Cannot create materialized view "
              + name
              + ": the column list names "
              + columns.size()
              + " columns but the query returns "
              + fields.length);
    }
    List<StructField> result = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < fields.length; i++) {
      String columnName = columns.isEmpty() ? fields[i].name() : columns.get(i).name();
      if (!seen.add(columnName.toLowerCase(Locale.ROOT))) {
        throw new FloeException(
            "Cannot create materialized view " + name + ": column " + columnName + " appears twice; alias one of them");
      }
      Metadata metadata =
          columns.isEmpty() || columns.get(i).comment().isEmpty()
              ? Metadata.empty()
              : new MetadataBuilder().putString("comment", columns.get(i).comment().get()).build();
      result.add(new StructField(columnName, fields[i].dataType(), true, metadata));
    }
    return new StructType(result.toArray(new StructField[0]));
  }

  private void createStorageTable(SparkSession spark, ResolvedName mv, ResolvedName storage, StructType schema) {
    Map<String, String> properties = new LinkedHashMap<>();
    // Format 3 keeps a refresh's deletes as deletion vectors: one Puffin file for all the data
    // files a refresh deletes from, each file's vector merged with its last. Format 2 keeps one
    // position delete file per data file, so a change spread over the storage read and rewrote
    // one delete file per storage data file, in one task, on every refresh.
    properties.put("format-version", "3");
    // Refreshes change few rows of a large table: write deletes as delete files, not rewrites.
    properties.put("write.delete.mode", "merge-on-read");
    properties.put("write.update.mode", "merge-on-read");
    properties.put("write.merge.mode", "merge-on-read");
    properties.putAll(io.floe.spark.refresh.StorageRetention.creationProperties());
    properties.putAll(statement().tableProperties());
    properties.put(MaterializedViewProperties.MATERIALIZED_VIEW, mv.inCatalog());
    properties.put(MaterializedViewProperties.MANAGED, Boolean.toString(statement().managed()));
    properties.put(StorageProperties.PARTITIONED_BY, String.join("|", statement().partitionedBy()));
    StringBuilder ddl = new StringBuilder("CREATE TABLE ").append(storage.quoted()).append(" (");
    ddl.append(
        Arrays.stream(schema.fields())
            .map(f -> "`" + f.name().replace("`", "``") + "` " + f.dataType().sql())
            .collect(Collectors.joining(", ")));
    ddl.append(") USING iceberg");
    if (!statement().partitionedBy().isEmpty()) {
      ddl.append(" PARTITIONED BY (").append(String.join(", ", statement().partitionedBy())).append(")");
    }
    ddl.append(" TBLPROPERTIES (");
    ddl.append(
        properties.entrySet().stream()
            .map(e -> quote(e.getKey()) + " = " + quote(e.getValue()))
            .collect(Collectors.joining(", ")));
    ddl.append(")");
    try {
      spark.sql(ddl.toString());
    } catch (Exception e) { // not RuntimeException: Spark throws AnalysisException undeclared
      throw new FloeException(
          "Cannot create materialized view " + mv + ": cannot create its storage table: "
              + ErrorMessages.firstLine(e.getMessage()),
          e);
    }
  }

  /**
   * The storage layout: the one the definition's shape needs for incremental refresh, or plain
   * rows when the MV is refreshed in full only.
   */
  private StorageLayout chooseLayout(ResolvedName name, DefinitionShape shape) {
    RefreshPolicy policy = statement().refreshPolicy().orElse(RefreshPolicy.AUTO);
    if (policy == RefreshPolicy.FULL) {
      return StorageLayout.PLAIN;
    }
    if (shape.kind() == DefinitionShape.Kind.NOT_INCREMENTAL) {
      if (policy == RefreshPolicy.INCREMENTAL) {
        throw new FloeException(
            "Cannot create materialized view " + name + " with REFRESH POLICY INCREMENTAL: " + shape.reason());
      }
      return StorageLayout.PLAIN;
    }
    return shape.layout();
  }

  /** The hidden key columns a keyed definition that does not select its key keeps, and its shape with them. */
  private record KeptKeys(HiddenKeys keys, List<StructField> fields, DefinitionShape shape) {}

  /**
   * For a definition that is not incremental because it does not select its key (the join key of
   * an outer join, the grouping columns of an aggregate): the key columns to keep hidden in its
   * storage, when the definition with them appended is keyed or an aggregate ({@link HiddenKeys}). Empty for any other
   * definition, and for views refreshed in full or judged by expectations.
   */
  private Optional<KeptKeys> keepUnselectedKeys(
      SparkSession spark,
      SourcePinning pinning,
      LogicalPlan parsed,
      LogicalPlan pinnedParsed,
      LogicalPlan analyzed,
      DefinitionShape shape,
      String defaultCatalog,
      List<String> defaultNamespace) {
    if (shape.kind() != DefinitionShape.Kind.NOT_INCREMENTAL
        || statement().refreshPolicy().orElse(RefreshPolicy.AUTO) == RefreshPolicy.FULL
        || !statement().expectations().isEmpty()) {
      return Optional.empty();
    }
    Optional<HiddenKeys> proposed = HiddenKeys.propose(pinnedParsed, analyzed);
    if (proposed.isEmpty()) {
      return Optional.empty();
    }
    StructType augmentedSchema;
    DefinitionShape augmentedShape;
    try {
      PinnedDefinition augmented = pinning.pin(proposed.get().appendTo(parsed), defaultCatalog, defaultNamespace);
      Dataset<org.apache.spark.sql.Row> augmentedRows = Dataset.ofRows(spark, augmented.plan());
      augmentedSchema = augmentedRows.schema();
      augmentedShape = DefinitionShape.of(augmented.parsed(), augmentedRows.queryExecution().analyzed());
    } catch (Exception e) { // AnalysisException is thrown undeclared; the definition stays as it is
      LOG.debug("No hidden key columns for {}: {}", statement().name(), e.getMessage());
      return Optional.empty();
    }
    StructField[] before = analyzed.schema().fields();
    StructField[] after = augmentedSchema.fields();
    List<String> hidden = proposed.get().columns();
    boolean incremental =
        augmentedShape.kind() == DefinitionShape.Kind.KEYED || augmentedShape.kind() == DefinitionShape.Kind.AGGREGATE;
    if (!incremental || after.length != before.length + hidden.size()) {
      return Optional.empty();
    }
    for (int i = 0; i < before.length; i++) {
      if (!before[i].name().equals(after[i].name()) || !before[i].dataType().sameType(after[i].dataType())) {
        return Optional.empty();
      }
    }
    List<StructField> fields = new ArrayList<>();
    for (int i = 0; i < hidden.size(); i++) {
      StructField field = after[before.length + i];
      if (!field.name().equals(hidden.get(i))) {
        return Optional.empty();
      }
      fields.add(new StructField(field.name(), field.dataType(), true, org.apache.spark.sql.types.Metadata.empty()));
    }
    return Optional.of(new KeptKeys(proposed.get(), fields, augmentedShape));
  }

  private static StructType withHiddenColumns(
      ResolvedName name, StructType viewSchema, List<StructField> hiddenKeys, StorageLayout layout, DefinitionShape shape) {
    for (StructField field : viewSchema.fields()) {
      if (StorageLayout.isHidden(field.name())) {
        throw new FloeException(
            "Cannot create materialized view " + name + ": column " + field.name() + " uses the prefix "
                + StorageLayout.HIDDEN_PREFIX + " (in any case), which Floe reserves for its bookkeeping columns");
      }
    }
    StructType storage = viewSchema;
    if (layout != shape.layout()) {
      return storage;
    }
    for (StructField key : hiddenKeys) {
      storage = storage.add(key);
    }
    for (StructField hidden : shape.hiddenFields()) {
      storage = storage.add(hidden);
    }
    return storage;
  }

  /**
   * Iceberg's replace of a view keeps the properties the new version does not set, but a
   * replacement states the whole definition: the old one's expectations, schedule, refresh policy,
   * comment or settings that it leaves out are removed. The pipeline's tags are not the
   * statement's; the run sets them again after defining the view.
   */
  private static void dropPropertiesNotRestated(org.apache.iceberg.view.View view, Map<String, String> properties) {
    org.apache.iceberg.view.UpdateViewProperties update = view.updateProperties();
    boolean dropped = false;
    for (String key : view.properties().keySet()) {
      if (!properties.containsKey(key) && !KEPT_ON_REPLACE.contains(key)) {
        update.remove(key);
        dropped = true;
      }
    }
    if (dropped) {
      update.commit();
    }
  }

  private static final java.util.Set<String> KEPT_ON_REPLACE =
      java.util.Set.of(io.floe.spark.pipeline.PipelineRun.PIPELINE, io.floe.spark.pipeline.PipelineRun.DEFINITION_HASH);

  private Map<String, String> viewProperties(
      SparkSession spark,
      ResolvedName storage,
      StructType querySchema,
      StructType viewSchema,
      PinnedDefinition pinned,
      List<ResolvedName> fixedReads,
      StorageLayout layout) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.putAll(io.floe.spark.mv.DefinitionSettings.capture(spark));
    properties.put(StorageLayout.PROPERTY, layout.name());
    properties.put(MaterializedViewProperties.STORAGE_TABLE, storage.inCatalog());
    properties.put(MaterializedView.SOURCES, String.join(",", pinned.sourceNames()));
    if (!fixedReads.isEmpty()) {
      properties.put(
          MaterializedView.FIXED_READS, fixedReads.stream().map(ResolvedName::toString).collect(Collectors.joining(",")));
    }
    properties.put(MaterializedViewProperties.MANAGED, Boolean.toString(statement().managed()));
    statement().comment().ifPresent(c -> properties.put(MaterializedViewProperties.COMMENT, c));
    statement().schedule().ifPresent(s -> properties.put(MaterializedViewProperties.SCHEDULE, s.toSql()));
    statement()
        .refreshPolicy()
        .ifPresent(p -> properties.put(MaterializedViewProperties.REFRESH_POLICY, p.name()));
    properties.put(MaterializedView.QUERY_COLUMN_NAMES, String.join(",", querySchema.fieldNames()));
    // Always set: a replacement keeps the properties it does not set, and may drop a collation.
    properties.put(MaterializedView.COLLATED_COLUMNS, MaterializedView.collatedColumns(viewSchema));
    if (!statement().expectations().isEmpty()) {
      properties.put(ExpectationsParser.PROPERTY, ExpectationsParser.toJson(statement().expectations()));
    }
    return properties;
  }

  private static String quote(String text) {
    return io.floe.spark.mv.MaterializedViewDdl.literal(text);
  }

  private static String stripPrefix(String message) {
    return message.startsWith("Cannot create materialized view ") ? message.substring(message.indexOf(": ") + 2) : message;
  }
}
