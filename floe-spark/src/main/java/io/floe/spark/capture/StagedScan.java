package io.floe.spark.capture;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.spark.SparkReadOptions;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.iceberg.spark.ScanTaskSetManager;
import org.apache.iceberg.spark.SparkTableCache;
import org.apache.spark.sql.Column;
import org.apache.iceberg.spark.source.SparkRewriteTable;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A read of exactly some file scan tasks of a table, each with the delete files it carries, in a
 * given schema. It uses Iceberg's staged scan task sets, the mechanism of Iceberg's own rewrite
 * actions: the tasks are registered under a fresh id that Iceberg's Spark source resolves. Until
 * {@link #close()}, the registration pins the tasks in driver memory; the rows must be computed
 * before closing.
 */
final class StagedScan implements AutoCloseable {
  /** The fewest Spark tasks per core a staged scan aims for. */
  static final int TASKS_PER_CORE = 3;

  private final SparkSession spark;
  private final Table readTable;
  private final String setId;
  private final long splitSize;

  private StagedScan(SparkSession spark, Table readTable, String setId, long splitSize) {
    this.spark = spark;
    this.readTable = readTable;
    this.setId = setId;
    this.splitSize = splitSize;
  }

  /** Stages {@code tasks} (not empty) of {@code table} for a read in {@code schema}. */
  static StagedScan stage(SparkSession spark, Table table, Schema schema, List<FileScanTask> tasks) {
    Table readTable = withCurrentSchema(table, schema);
    long splitSize = splitSize(readTable.properties(), tasks, spark.sparkContext().defaultParallelism());
    String setId = "floe-capture-" + UUID.randomUUID();
    // Iceberg's source resolves the load path through the table cache, and its staged scan then
    // fetches the tasks staged for that table under the same id.
    SparkTableCache.get().add(setId, readTable);
    try {
      ScanTaskSetManager.get().stageTasks(readTable, setId, tasks);
    } catch (RuntimeException e) {
      SparkTableCache.get().remove(setId);
      throw e;
    }
    return new StagedScan(spark, readTable, setId, splitSize);
  }

  /**
   * The split size that packs {@code tasks} into at least {@value #TASKS_PER_CORE} Spark tasks per
   * core where their files allow: never above the table's own split size, and never below an
   * eighth of Iceberg's default unless the table's own is smaller still.
   *
   * <p>A capture decodes every row of the files it reads, in each column it reads, to keep the few
   * at changed positions: it is bound by the cores, not by the reads. Iceberg's split size (128 MB)
   * packs three 42 MB files into a task, and a file of one row group cannot be split further: ten
   * such files make four tasks, which two cores run in the time of six files, and three make one
   * task that leaves a core idle. One task per file takes the time of five files, and of two. Files
   * smaller than the split size are still packed together, each counted at least at the open-file
   * cost, so a change spread over many small files does not become a task per file.
   */
  static long splitSize(Map<String, String> tableProperties, List<FileScanTask> tasks, int cores) {
    long openFileCost =
        PropertyUtil.propertyAsLong(tableProperties, TableProperties.SPLIT_OPEN_FILE_COST, TableProperties.SPLIT_OPEN_FILE_COST_DEFAULT);
    long configured =
        PropertyUtil.propertyAsLong(tableProperties, TableProperties.SPLIT_SIZE, TableProperties.SPLIT_SIZE_DEFAULT);
    long weight = 0;
    for (FileScanTask task : tasks) {
      weight += Math.max(task.file().fileSizeInBytes(), openFileCost);
    }
    long balanced = weight / ((long) Math.max(1, cores) * TASKS_PER_CORE);
    return Math.min(configured, Math.max(TableProperties.SPLIT_SIZE_DEFAULT / 8, balanced));
  }

  /** The rows of the staged tasks, with exactly the columns of the schema given at staging. */
  org.apache.spark.sql.Dataset<Row> rows(List<Column> columns) {
    // The staged table may add row lineage columns (format v3); keep only the schema's columns.
    return spark.read().format("iceberg").option(SparkReadOptions.SPLIT_SIZE, splitSize).load(setId)
        .select(columns.toArray(Column[]::new));
  }

  /**
   * The rows of the staged tasks with {@code columns}, which may name the file path and row
   * position metadata columns ({@code _file}, {@code _pos}) besides the columns of {@code schema},
   * the schema given at staging.
   */
  Dataset<Row> rowsWithPositions(StructType schema, List<Column> columns) {
    PositionedTable table = new PositionedTable(new SparkRewriteTable(readTable, setId), schema);
    DataSourceV2Relation relation =
        DataSourceV2Relation.create(
            table,
            Option.<CatalogPlugin>empty(),
            Option.<Identifier>empty(),
            new CaseInsensitiveStringMap(Map.of(SparkReadOptions.SPLIT_SIZE, String.valueOf(splitSize))),
            Option.empty());
    return Dataset.ofRows((org.apache.spark.sql.classic.SparkSession) spark, relation)
        .select(columns.toArray(Column[]::new));
  }

  @Override
  public void close() {
    try {
      ScanTaskSetManager.get().removeTasks(readTable, setId);
    } finally {
      SparkTableCache.get().remove(setId);
    }
  }

  /**
   * The staged scan reads in the table's current schema; when that is no longer the schema of the
   * snapshot being read (the table changed after it), read through a copy of the metadata whose
   * current schema is the snapshot's.
   */
  private static Table withCurrentSchema(Table table, Schema schema) {
    if (table.schema().schemaId() == schema.schemaId()) {
      return table;
    }
    if (!(table instanceof HasTableOperations)) {
      throw new IllegalStateException(
          "Cannot read " + table.name() + " in schema " + schema.schemaId() + ": its metadata is not accessible");
    }
    TableOperations operations = ((HasTableOperations) table).operations();
    TableMetadata pinned =
        TableMetadata.buildFrom(operations.current()).setCurrentSchema(schema.schemaId()).build();
    return new BaseTable(
        new StaticTableOperations(pinned, table.io(), operations.locationProvider()), table.name());
  }
}
