package io.floe.spark.capture;

import java.util.List;
import java.util.UUID;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
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
  private final SparkSession spark;
  private final Table readTable;
  private final String setId;

  private StagedScan(SparkSession spark, Table readTable, String setId) {
    this.spark = spark;
    this.readTable = readTable;
    this.setId = setId;
  }

  /** Stages {@code tasks} (not empty) of {@code table} for a read in {@code schema}. */
  static StagedScan stage(SparkSession spark, Table table, Schema schema, List<FileScanTask> tasks) {
    Table readTable = withCurrentSchema(table, schema);
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
    return new StagedScan(spark, readTable, setId);
  }

  /** The rows of the staged tasks, with exactly the columns of the schema given at staging. */
  org.apache.spark.sql.Dataset<Row> rows(List<Column> columns) {
    // The staged table may add row lineage columns (format v3); keep only the schema's columns.
    return spark.read().format("iceberg").load(setId).select(columns.toArray(Column[]::new));
  }

  /**
   * The rows of the staged tasks with {@code columns}, which may name the file path and row
   * position metadata columns ({@code _file}, {@code _pos}) besides the columns of {@code schema},
   * the schema given at staging.
   */
  Dataset<Row> rowsWithPositions(StructType schema, List<Column> columns) {
    PositionedTable table = new PositionedTable(new SparkRewriteTable(readTable, setId), schema);
    DataSourceV2Relation relation =
        DataSourceV2Relation.create(table, Option.<CatalogPlugin>empty(), Option.<Identifier>empty());
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
