package io.floe.spark.rewrite;

import io.floe.mv.RefreshState;
import io.floe.mv.RefreshStateParser;
import io.floe.mv.SourceState;
import io.floe.spark.capture.ChangeCapture;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * Finds the storage snapshot of an MV that holds its rows at exactly the source snapshots a query
 * reads: the latest refresh, in the storage table's main history, made under the current view
 * version whose recorded table states equal the query's reads. A recorded snapshot matches a read
 * one when the table holds the same rows at both: the same snapshot, or one reached from the other
 * by compactions only, read in the same schema (a refresh reads a snapshot in its own schema; a
 * query without time travel reads the table's current one, which differs after a column was renamed
 * with no data written since). With time travel that may be an older refresh. A stale MV answers
 * only within the session's staleness tolerance, only queries that read the sources' current state,
 * and never across a schema change.
 */
final class FreshnessMatch {
  private static final int MAX_HISTORY = 200;

  /** The storage snapshot to read, or why there is none. */
  record Outcome(Optional<Snapshot> snapshot, String note) {}

  private FreshnessMatch() {}

  /**
   * @param reads snapshot read per table UUID (empty for a table without snapshots)
   * @param schemas the id of the schema each table is read in, per table UUID
   * @param tables the table read per table UUID, whose history tells whether two snapshots hold the
   *     same rows
   * @param readsCurrent true when every table is read at its current snapshot (no time travel)
   */
  static Outcome find(
      Table storage,
      int viewVersionId,
      Map<String, Optional<Long>> reads,
      Map<String, Integer> schemas,
      Map<String, Table> tables,
      boolean readsCurrent,
      long toleranceMillis) {
    Snapshot latestRefresh = null;
    RefreshState latestState = null;
    int steps = 0;
    for (Snapshot s = storage.currentSnapshot(); s != null && steps < MAX_HISTORY; steps++) {
      String json = s.summary().get(RefreshState.SUMMARY_KEY);
      if (json != null) {
        RefreshState state = RefreshStateParser.fromJson(json);
        if (state.viewVersionId() != viewVersionId) {
          break;
        }
        if (latestRefresh == null) {
          latestRefresh = s;
          latestState = state;
        }
        Optional<String> mismatch = schemaMismatch(state, schemas).or(() -> mismatch(state, reads, tables));
        if (mismatch.isEmpty()) {
          return new Outcome(Optional.of(s), s == latestRefresh ? "fresh" : "fresh at an earlier refresh, snapshot " + s.snapshotId());
        }
      }
      s = s.parentId() == null ? null : storage.snapshot(s.parentId());
    }
    if (latestRefresh == null) {
      return new Outcome(Optional.empty(), "it has not been refreshed under its current definition");
    }
    RefreshState latest = latestState;
    Optional<String> schemaChange = schemaMismatch(latest, schemas);
    String why = schemaChange.or(() -> mismatch(latest, reads, tables)).orElse("its sources moved");
    if (readsCurrent && toleranceMillis > 0 && schemaChange.isEmpty()) {
      long age = System.currentTimeMillis() - latestState.refreshStartTimestampMs();
      if (age <= toleranceMillis) {
        return new Outcome(
            Optional.of(latestRefresh),
            "stale (" + why + ") but refreshed " + age / 1000 + " s ago, within the staleness tolerance");
      }
    }
    return new Outcome(Optional.empty(), "stale for the snapshots the query reads: " + why);
  }

  /** Why the query reads a source in another schema than the refresh read it, if it does. */
  private static Optional<String> schemaMismatch(RefreshState state, Map<String, Integer> schemas) {
    for (SourceState recorded : state.sourceStates()) {
      Integer read = schemas.get(recorded.uuid());
      if (recorded.type() == SourceState.Type.TABLE
          && read != null
          && recorded.schemaId().isPresent()
          && !recorded.schemaId().get().equals(read)) {
        return Optional.of(
            recorded.qualifiedName() + " is read in schema " + read + ", the view was refreshed from schema "
                + recorded.schemaId().get());
      }
    }
    return Optional.empty();
  }

  private static Optional<String> mismatch(
      RefreshState state, Map<String, Optional<Long>> reads, Map<String, Table> tables) {
    for (SourceState recorded : state.sourceStates()) {
      if (recorded.type() != SourceState.Type.TABLE) {
        continue;
      }
      Optional<Long> read = reads.get(recorded.uuid());
      if (read == null) {
        return Optional.of("it read " + recorded.qualifiedName() + ", which the query does not");
      }
      Long readId = read.orElse(null);
      Long recordedId = recorded.snapshotId().orElse(null);
      if (!Objects.equals(readId, recordedId)
          && !(tables.containsKey(recorded.uuid()) && ChangeCapture.sameRows(tables.get(recorded.uuid()), readId, recordedId))) {
        return Optional.of(
            recorded.qualifiedName()
                + " is read at snapshot "
                + read.map(String::valueOf).orElse("(none)")
                + ", the view holds snapshot "
                + recorded.snapshotId().map(String::valueOf).orElse("(none)"));
      }
    }
    return Optional.empty();
  }
}
