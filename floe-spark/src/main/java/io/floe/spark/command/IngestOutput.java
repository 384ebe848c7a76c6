package io.floe.spark.command;

import io.floe.spark.ingest.IngestResult;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.types.DataTypes;

/** The result row of an ingestion statement. */
final class IngestOutput {
  private IngestOutput() {}

  static List<Attribute> attributes() {
    return List.of(
        FloeCommand.stringColumn("streaming_table"),
        FloeCommand.column("files_loaded", DataTypes.IntegerType),
        FloeCommand.column("rows_loaded", DataTypes.LongType),
        FloeCommand.column("rows_rescued", DataTypes.LongType),
        FloeCommand.stringColumn("columns_added"),
        FloeCommand.stringColumn("warnings"),
        FloeCommand.column("duration_ms", DataTypes.LongType),
        FloeCommand.column("snapshot_id", DataTypes.LongType));
  }

  static Row row(IngestResult result) {
    return RowFactory.create(
        result.table(),
        result.filesLoaded(),
        result.rowsLoaded(),
        result.rowsRescued(),
        String.join(", ", result.columnsAdded()),
        String.join("; ", result.warnings()),
        result.durationMs(),
        result.snapshotId());
  }
}
