package io.floe.spark.command;

import io.floe.mv.SourceState;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshResult;
import io.floe.refresh.RefreshStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.types.DataTypes;

/**
 * The result row every refresh statement returns, one per view: a refreshed view's result, or a
 * failed or skipped view's status with the error or reason in {@code reason}.
 */
final class RefreshOutput {
  private RefreshOutput() {}

  static List<Attribute> attributes() {
    return List.of(
        FloeCommand.stringColumn("materialized_view"),
        FloeCommand.stringColumn("refresh_type"),
        FloeCommand.stringColumn("reason"),
        FloeCommand.column("rows_read", DataTypes.LongType),
        FloeCommand.column("rows_written", DataTypes.LongType),
        FloeCommand.column("rows_removed", DataTypes.LongType),
        FloeCommand.column("duration_ms", DataTypes.LongType),
        FloeCommand.stringColumn("source_snapshots"),
        FloeCommand.column("snapshot_id", DataTypes.LongType),
        FloeCommand.stringColumn("status"),
        FloeCommand.column("attempts", DataTypes.IntegerType),
        FloeCommand.stringColumn("warnings"),
        FloeCommand.stringColumn("expectations"));
  }

  static Row row(RefreshResult result) {
    return RowFactory.create(
        result.materializedView(),
        result.type().name(),
        result.reason(),
        result.rowsRead(),
        result.rowsWritten(),
        result.rowsRemoved(),
        result.durationMs(),
        describeSources(result.sourcesBefore(), result.sourcesAfter()),
        result.storageSnapshotId(),
        RefreshStatus.SUCCEEDED.name(),
        result.attempts(),
        result.warnings().isEmpty() ? null : String.join("; ", result.warnings()),
        result.expectations().isEmpty()
            ? null
            : result.expectations().stream().map(e -> e.describe()).collect(Collectors.joining("; ")));
  }

  /** The row of one view of a graph refresh: its result, or why it failed or was skipped. */
  static Row row(RefreshOutcome outcome) {
    if (outcome.status() == RefreshStatus.SUCCEEDED) {
      return row(outcome.result());
    }
    return RowFactory.create(
        outcome.materializedView(), null, outcome.message(), null, null, null, null, null, null,
        outcome.status().name(), null, null, null);
  }

  /** {@code db.trips 12 → 15, db.silver v1} for the sources a refresh read. */
  static String describeSources(List<SourceState> before, List<SourceState> after) {
    List<String> parts = new ArrayList<>();
    Map<String, SourceState> previous =
        before.stream().collect(Collectors.toMap(SourceState::qualifiedName, s -> s, (a, b) -> a));
    for (SourceState source : after) {
      if (source.type() == SourceState.Type.VIEW) {
        continue;
      }
      SourceState old = previous.get(source.qualifiedName());
      String now = source.snapshotId().map(String::valueOf).orElse("empty");
      String was = old == null ? null : old.snapshotId().map(String::valueOf).orElse("empty");
      parts.add(source.qualifiedName() + " " + (was == null || was.equals(now) ? now : was + " → " + now));
    }
    return String.join(", ", parts);
  }
}
