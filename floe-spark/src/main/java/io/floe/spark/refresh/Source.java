package io.floe.spark.refresh;

import io.floe.mv.SourceState;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.ResolvedName;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * One source of a definition, pinned: a table at a snapshot, or a materialized view at a view
 * version whose storage table is at a snapshot.
 *
 * @param table the table read: the source table itself, or the MV's storage table
 * @param snapshot the pinned snapshot of {@code table}, empty when it has none yet
 * @param refreshedInRun whether the snapshot is the one the MV's refresh in the same run committed
 */
public record Source(
    ResolvedName name,
    Optional<MaterializedView> materializedView,
    Table table,
    Optional<Snapshot> snapshot,
    boolean refreshedInRun) {

  /** A source pinned at a snapshot no refresh of the same run committed. */
  public Source(ResolvedName name, Optional<MaterializedView> materializedView, Table table, Optional<Snapshot> snapshot) {
    this(name, materializedView, table, snapshot, false);
  }

  /** This source, as pinned at the snapshot its refresh in the same run committed. */
  public Source refreshedInThisRun() {
    return new Source(name, materializedView, table, snapshot, true);
  }

  /** The states recorded for this source: the table's, or the MV's view version and storage snapshot. */
  public List<SourceState> states() {
    SourceState tableState =
        SourceState.table(
            materializedView.map(mv -> mv.storageName().namespace()).orElse(name.namespace()),
            materializedView.map(mv -> mv.storageName().name()).orElse(name.name()),
            table.uuid().toString(),
            snapshot.map(Snapshot::snapshotId).orElse(null),
            table.schema().schemaId());
    if (materializedView.isEmpty()) {
      return List.of(tableState);
    }
    MaterializedView mv = materializedView.get();
    SourceState viewState =
        SourceState.view(name.namespace(), name.name(), mv.view().uuid().toString(), mv.versionId());
    return List.of(viewState, tableState);
  }

  /**
   * True when the table's schema changed after the pinned snapshot was written (a column renamed
   * or added, no data written since). A time-travel read of the snapshot would use the snapshot's
   * own schema, while the table is read today in its current one.
   */
  public boolean schemaChangedAfterSnapshot() {
    Integer written = snapshot.map(Snapshot::schemaId).orElse(null);
    return written != null && written != table.schema().schemaId();
  }

  /** Records in the pinned snapshot, from its summary. */
  public long totalRecords() {
    return snapshot
        .map(s -> s.summary().get("total-records"))
        .map(Long::parseLong)
        .orElse(0L);
  }
}
