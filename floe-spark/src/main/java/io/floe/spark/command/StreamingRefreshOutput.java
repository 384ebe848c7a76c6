package io.floe.spark.command;

import io.floe.spark.ingest.StreamingRefreshResult;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.types.DataTypes;

/** The result row of a refresh of a streaming table fed by tables. */
final class StreamingRefreshOutput {
  private StreamingRefreshOutput() {}

  static List<Attribute> attributes() {
    return List.of(
        FloeCommand.stringColumn("streaming_table"),
        FloeCommand.stringColumn("refresh_type"),
        FloeCommand.column("rows_read", DataTypes.LongType),
        FloeCommand.column("rows_written", DataTypes.LongType),
        FloeCommand.stringColumn("flows"),
        FloeCommand.stringColumn("warnings"),
        FloeCommand.column("duration_ms", DataTypes.LongType),
        FloeCommand.column("snapshot_id", DataTypes.LongType));
  }

  static Row row(StreamingRefreshResult result) {
    return RowFactory.create(
        result.table(),
        result.type().name(),
        result.rowsRead(),
        result.rowsWritten(),
        result.describeFlows(),
        String.join("; ", result.warnings()),
        result.durationMs(),
        result.snapshotId());
  }
}
