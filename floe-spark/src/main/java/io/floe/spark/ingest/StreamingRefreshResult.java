package io.floe.spark.ingest;

import io.floe.refresh.RefreshType;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one refresh of a streaming table fed by tables did.
 *
 * @param table the streaming table
 * @param type {@code INCREMENTAL} (new source rows processed), {@code FULL} (rows replaced from all source rows),
 *     or {@code NO_CHANGE} (no source appended rows since the checkpoints; no snapshot committed)
 * @param flows what each flow read
 * @param rowsRead source rows the flows processed
 * @param rowsWritten rows appended (for a full refresh: the rows the table now holds)
 * @param durationMs wall time
 * @param snapshotId the table's main snapshot after the refresh
 * @param warnings what the refresh passed over, such as skipped change commits
 */
public record StreamingRefreshResult(
    String table,
    RefreshType type,
    List<FlowRead> flows,
    long rowsRead,
    long rowsWritten,
    long durationMs,
    Long snapshotId,
    List<String> warnings) {

  public StreamingRefreshResult {
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(type, "type");
    flows = List.copyOf(flows);
    warnings = List.copyOf(warnings);
  }

  public Optional<Long> snapshot() {
    return Optional.ofNullable(snapshotId);
  }

  /** One line per flow: {@code web_orders: lake.db.web_raw 123 -> 456, 2 rows}. */
  public String describeFlows() {
    return String.join("; ", flows.stream().map(FlowRead::toString).toList());
  }

  /**
   * What one flow read.
   *
   * @param flow the flow's name
   * @param source the streamed table
   * @param fromSnapshot the checkpoint it started after (null: it read the source's whole snapshot)
   * @param toSnapshot the source snapshot it read up to, its new checkpoint (null: the source is empty)
   * @param rowsRead source rows it processed
   */
  public record FlowRead(String flow, String source, Long fromSnapshot, Long toSnapshot, long rowsRead) {
    @Override
    public String toString() {
      return flow + ": " + source + " " + (fromSnapshot == null ? "all" : fromSnapshot.toString()) + " -> "
          + (toSnapshot == null ? "empty" : toSnapshot.toString()) + ", " + rowsRead + " rows";
    }
  }
}
