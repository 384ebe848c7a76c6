package io.floe.spark.mv;

import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshPolicy;
import io.floe.mv.RefreshState;
import io.floe.mv.RefreshStateParser;
import io.floe.schedule.Schedule;
import io.floe.spark.ivm.DefinitionShape;
import io.floe.spark.ivm.StorageLayout;
import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.view.SQLViewRepresentation;
import org.apache.iceberg.view.View;
import org.apache.iceberg.view.ViewVersion;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A materialized view as stored: an Iceberg view whose properties point to its storage table.
 * Instances are snapshots of the catalog at load time; load again to see later changes.
 */
public final class MaterializedView {
  /** The SQL dialect of the view representation Floe writes and reads. */
  public static final String DIALECT = "spark";

  /**
   * View property: the names of the definition's columns when it was created, before a column list
   * renamed them, comma-separated (the key Iceberg's Spark views use).
   */
  public static final String QUERY_COLUMN_NAMES = "spark.query-column-names";

  /**
   * View property: the definition's sources, comma-separated {@code catalog.namespace.name}, each
   * part backtick-quoted when it is not a plain identifier (as {@link ResolvedName#toString}).
   */
  public static final String SOURCES = "floe.sources";

  /**
   * View property: the tables the definition reads only at a snapshot it names ({@code VERSION AS
   * OF <id>}), comma-separated fully qualified names; absent when none. Their changes never reach
   * the view, so they are not among {@link #SOURCES}, but dropping or renaming them is refused
   * like dropping a source.
   */
  public static final String FIXED_READS = "floe.fixed-reads";

  /**
   * View property: the view's columns whose type carries a string collation, as a Spark DDL column
   * list ({@code cs STRING COLLATE UTF8_LCASE}); empty when none does. Iceberg keeps no collation,
   * so the storage column and the view's schema say {@code STRING}, and a read of the view casts
   * the column back to the type the definition gave it.
   */
  public static final String COLLATED_COLUMNS = "floe.collated-columns";

  private final ResolvedName name;
  private final View view;
  private final ResolvedName storageName;

  MaterializedView(ResolvedName name, View view) {
    this.name = name;
    this.view = view;
    String storage = view.properties().get(MaterializedViewProperties.STORAGE_TABLE);
    try {
      this.storageName = name.withIdentifier(ResolvedName.parseInCatalog(storage));
    } catch (IllegalArgumentException e) {
      throw new FloeException(
          "Materialized view " + name + " has an unreadable " + MaterializedViewProperties.STORAGE_TABLE
              + " property '" + storage + "': " + e.getMessage(),
          e);
    }
  }

  static boolean isMaterializedView(View view) {
    return view.properties().containsKey(MaterializedViewProperties.STORAGE_TABLE);
  }

  public ResolvedName name() {
    return name;
  }

  public View view() {
    return view;
  }

  public ResolvedName storageName() {
    return storageName;
  }

  /** Loads the storage table now. */
  public Table storageTable() {
    try {
      return name.catalog().loadTable(storageName.identifier());
    } catch (NoSuchTableException e) {
      throw new FloeException(
          "Materialized view " + name + " has lost its storage table " + storageName + "; drop and re-create it", e);
    }
  }

  public ViewVersion version() {
    return view.currentVersion();
  }

  public int versionId() {
    return view.currentVersion().versionId();
  }

  /** How the storage table keeps the rows. */
  public StorageLayout layout() {
    String layout = view.properties().get(StorageLayout.PROPERTY);
    return layout == null ? StorageLayout.PLAIN : StorageLayout.valueOf(layout);
  }

  /** The view's column names, in order. */
  public List<String> viewColumns() {
    List<String> columns = new ArrayList<>();
    view.schema().columns().forEach(c -> columns.add(c.name()));
    return columns;
  }

  /**
   * The key columns the storage keeps for the refresh beside the view's columns ({@link
   * io.floe.spark.ivm.HiddenKeys}); none for most views.
   */
  public io.floe.spark.ivm.HiddenKeys hiddenKeys() {
    String property = view.properties().get(io.floe.spark.ivm.HiddenKeys.PROPERTY);
    try {
      return io.floe.spark.ivm.HiddenKeys.parse(property);
    } catch (RuntimeException e) {
      throw new FloeException(
          "Materialized view " + name + " has an unreadable " + io.floe.spark.ivm.HiddenKeys.PROPERTY + " property '"
              + property + "': " + io.floe.ErrorMessages.firstLine(e.getMessage()), e);
    }
  }

  /**
   * The columns of a stored row as the refresh computes it: the view's columns, then its hidden
   * key columns ({@link #hiddenKeys()}).
   */
  public List<String> rowColumns() {
    List<String> columns = viewColumns();
    columns.addAll(hiddenKeys().columns());
    return columns;
  }

  /**
   * The view columns whose type carries a string collation (see {@link #COLLATED_COLUMNS}), by
   * name, with that type; empty for most views.
   */
  public Map<String, DataType> collatedColumns() {
    String ddl = view.properties().get(COLLATED_COLUMNS);
    if (ddl == null || ddl.isBlank()) {
      return Map.of();
    }
    StructType columns;
    try {
      columns = StructType.fromDDL(ddl);
    } catch (RuntimeException e) {
      throw new FloeException(
          "Materialized view " + name + " has an unreadable " + COLLATED_COLUMNS + " property '" + ddl + "': "
              + io.floe.ErrorMessages.firstLine(e.getMessage()), e);
    }
    Map<String, DataType> types = new java.util.LinkedHashMap<>();
    for (StructField field : columns.fields()) {
      types.put(field.name(), field.dataType());
    }
    return types;
  }

  /**
   * The select list that reads the view's columns from its storage table: each column by name,
   * cast back to its collated type where the definition gave it one.
   */
  public List<String> readColumns() {
    Map<String, DataType> collated = collatedColumns();
    List<String> items = new ArrayList<>();
    for (String column : viewColumns()) {
      String quoted = StorageLayout.quote(column);
      DataType type = collated.get(column);
      items.add(type == null ? quoted : "CAST(" + quoted + " AS " + type.sql() + ") AS " + quoted);
    }
    return items;
  }

  /**
   * The property value of {@link #COLLATED_COLUMNS} for a view of {@code viewSchema}: its columns
   * whose type carries a collation other than Spark's default byte-wise one.
   */
  public static String collatedColumns(StructType viewSchema) {
    List<StructField> collated = new ArrayList<>();
    for (StructField field : viewSchema.fields()) {
      if (DefinitionShape.collation(field.dataType()).isPresent()) {
        collated.add(field);
      }
    }
    return collated.isEmpty()
        ? ""
        : new StructType(collated.toArray(StructField[]::new)).toDDL();
  }

  /**
   * The names the definition gave its columns when the view was created, one per view column; empty
   * when the view does not record them, or records names that do not name one column each.
   */
  public Optional<List<String>> queryColumns() {
    String names = view.properties().get(QUERY_COLUMN_NAMES);
    if (names == null) {
      return Optional.empty();
    }
    List<String> columns = Arrays.asList(names.split(",", -1));
    long distinct = columns.stream().map(c -> c.toLowerCase(java.util.Locale.ROOT)).distinct().count();
    return columns.size() == view.schema().columns().size() && distinct == columns.size()
        ? Optional.of(columns)
        : Optional.empty();
  }

  /** The definition's query, as written. */
  public String query() {
    SQLViewRepresentation sql = view.sqlFor(DIALECT);
    if (sql == null) {
      throw new FloeException("Materialized view " + name + " has no " + DIALECT + " SQL representation");
    }
    return sql.sql();
  }

  public String defaultCatalog() {
    String catalog = view.currentVersion().defaultCatalog();
    return catalog == null ? name.catalogName() : catalog;
  }

  public List<String> defaultNamespace() {
    return Arrays.asList(view.currentVersion().defaultNamespace().levels());
  }

  public Map<String, String> properties() {
    return view.properties();
  }

  public Optional<String> comment() {
    return Optional.ofNullable(view.properties().get(MaterializedViewProperties.COMMENT));
  }

  public Optional<Schedule> schedule() {
    return Optional.ofNullable(view.properties().get(MaterializedViewProperties.SCHEDULE)).map(Schedule::parse);
  }

  public RefreshPolicy refreshPolicy() {
    String policy = view.properties().get(MaterializedViewProperties.REFRESH_POLICY);
    return policy == null ? RefreshPolicy.AUTO : RefreshPolicy.valueOf(policy);
  }

  /** The view's {@code CONSTRAINT ... EXPECT} data-quality expectations, in declaration order. */
  public List<io.floe.sql.Expectation> expectations() {
    String json = view.properties().get(io.floe.mv.ExpectationsParser.PROPERTY);
    return json == null ? List.of() : io.floe.mv.ExpectationsParser.fromJson(json);
  }

  public boolean managed() {
    return Boolean.parseBoolean(view.properties().get(MaterializedViewProperties.MANAGED));
  }

  /**
   * The sources the current definition reads, as fully qualified names in the form of {@link
   * ResolvedName#toString}; a plain name stored unquoted by older versions comes back in that form.
   */
  public List<String> sourceNames() {
    return sources().stream().map(QualifiedName::toString).collect(Collectors.toCollection(ArrayList::new));
  }

  /** The sources the current definition reads, {@code catalog}, namespace levels and name each. */
  public List<QualifiedName> sources() {
    return namesIn(SOURCES);
  }

  /**
   * The tables the definition reads, sources and those read only at a snapshot it names ({@link
   * #FIXED_READS}), as fully qualified names: what it cannot do without.
   */
  public List<String> dependencyNames() {
    List<String> names = sourceNames();
    namesIn(FIXED_READS).stream().map(QualifiedName::toString).filter(n -> !names.contains(n)).forEach(names::add);
    return names;
  }

  private List<QualifiedName> namesIn(String property) {
    String names = view.properties().get(property);
    if (names == null || names.isBlank()) {
      return List.of();
    }
    try {
      return QualifiedName.parseList(names);
    } catch (IllegalArgumentException e) {
      throw new FloeException(
          "Materialized view " + name + " has an unreadable " + property + " property: " + e.getMessage(), e);
    }
  }

  /** The refresh state of the storage table's last refresh ({@link #lastRefreshSnapshot}). */
  public Optional<RefreshState> refreshState(Table storage) {
    return lastRefreshSnapshot(storage)
        .map(s -> RefreshStateParser.fromJson(s.summary().get(RefreshState.SUMMARY_KEY)));
  }

  /**
   * The storage snapshot the last refresh committed: the current snapshot, or the one the
   * compactions committed since started from. A compaction ({@code rewrite_data_files} and the
   * like, Iceberg operation {@code replace}) rewrites files without changing rows, so the rows it
   * leaves are still those of that refresh. Empty when no refresh wrote the storage, or another
   * kind of commit (a write by something other than a refresh) came after the last one.
   */
  public static Optional<Snapshot> lastRefreshSnapshot(Table storage) {
    return lastRefreshSnapshot(storage, storage.currentSnapshot());
  }

  /**
   * As {@link #lastRefreshSnapshot(Table)}, for the storage table as of {@code snapshot}: that
   * snapshot, or the one the compactions committed up to it started from.
   */
  public static Optional<Snapshot> lastRefreshSnapshot(Table storage, Snapshot snapshot) {
    while (snapshot != null && !snapshot.summary().containsKey(RefreshState.SUMMARY_KEY)) {
      if (!DataOperations.REPLACE.equals(snapshot.operation()) || snapshot.parentId() == null) {
        return Optional.empty();
      }
      snapshot = storage.snapshot(snapshot.parentId());
    }
    return Optional.ofNullable(snapshot);
  }

  /**
   * Why the storage table has no last refresh though a refresh wrote it: a commit that is neither
   * a refresh nor a compaction (a write by something other than Floe) came after the last refresh,
   * so its rows may not be the definition's; the first such commit is named. Empty when no such
   * commit follows a refresh.
   */
  public static Optional<String> writtenOutsideARefresh(Table storage) {
    Snapshot snapshot = storage.currentSnapshot();
    Snapshot outside = null;
    while (snapshot != null && !snapshot.summary().containsKey(RefreshState.SUMMARY_KEY)) {
      if (!DataOperations.REPLACE.equals(snapshot.operation())) {
        outside = snapshot;
      }
      snapshot = snapshot.parentId() == null ? null : storage.snapshot(snapshot.parentId());
    }
    if (snapshot == null || outside == null) {
      return Optional.empty();
    }
    return Optional.of("its storage table " + storage.name() + " was written outside a refresh (snapshot "
        + outside.snapshotId() + ", " + outside.operation() + ") after its last refresh");
  }

  public TableIdentifier identifier() {
    return name.identifier();
  }

  @Override
  public String toString() {
    return name.toString();
  }
}
