package io.floe.spark.ingest;

import io.floe.FloeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;

/**
 * The commits of a streamed source after a flow's checkpoint, up to the snapshot a refresh reads. Appends are
 * what the flow processes; compaction ({@code replace}) changes no row and is passed over; a commit that
 * updates or deletes rows ({@code overwrite}, {@code delete}) cannot be streamed and fails the refresh, unless
 * the flow skips change commits, as Spark Declarative Pipelines' {@code skipChangeCommits} does.
 */
final class AppendRange {
  private final List<Snapshot> appends;
  private final int skippedChangeCommits;

  private AppendRange(List<Snapshot> appends, int skippedChangeCommits) {
    this.appends = List.copyOf(appends);
    this.skippedChangeCommits = skippedChangeCommits;
  }

  /**
   * The range after {@code checkpoint} up to {@code to}.
   *
   * @param refresh how errors start, such as {@code Cannot refresh streaming table lake.db.silver}
   * @param flow the flow's name, for errors
   * @param fullRefreshHint the statement that refreshes the table in full, for errors
   * @throws FloeException when the checkpoint expired or is not an ancestor of {@code to}, or when a commit in the
   *     range updates or deletes rows and {@code skipChangeCommits} is false
   */
  static AppendRange between(
      Table source,
      String sourceName,
      String refresh,
      String flow,
      long checkpoint,
      Snapshot to,
      boolean skipChangeCommits,
      String fullRefreshHint) {
    if (source.snapshot(checkpoint) == null) {
      throw new FloeException(
          refresh + ": flow " + flow + " last read snapshot " + checkpoint + " of " + sourceName + ", which the"
              + " table no longer has (the snapshot expired, or the table was dropped and created again), so the rows"
              + " appended since cannot be told apart; run a full refresh (" + fullRefreshHint + ")");
    }
    List<Snapshot> newestFirst = new ArrayList<>();
    Snapshot current = to;
    while (current.snapshotId() != checkpoint) {
      newestFirst.add(current);
      Long parentId = current.parentId();
      Snapshot parent = parentId == null ? null : source.snapshot(parentId);
      if (parent == null) {
        throw new FloeException(
            refresh + ": flow " + flow + " last read snapshot " + checkpoint + " of " + sourceName + ", which is "
                + (parentId == null ? "not an ancestor of its current snapshot " + to.snapshotId()
                    + " (the table was rolled back or re-created)"
                    : "separated from its current snapshot by expired snapshot " + parentId)
                + "; run a full refresh (" + fullRefreshHint + ")");
      }
      current = parent;
    }
    Collections.reverse(newestFirst);
    List<Snapshot> appends = new ArrayList<>();
    int skipped = 0;
    for (Snapshot snapshot : newestFirst) {
      String operation = snapshot.operation();
      if (DataOperations.APPEND.equals(operation)) {
        appends.add(snapshot);
      } else if (DataOperations.REPLACE.equals(operation)) {
        continue;
      } else if (skipChangeCommits
          && (DataOperations.OVERWRITE.equals(operation) || DataOperations.DELETE.equals(operation))) {
        skipped++;
      } else {
        throw new FloeException(
            refresh + ": source " + sourceName + " has snapshot " + snapshot.snapshotId() + " (operation "
                + operation + ") after snapshot " + checkpoint + ", which flow " + flow + " last read; it updates or "
                + "deletes rows, and a streaming table only appends. Run a full refresh (" + fullRefreshHint
                + "), or set TBLPROPERTIES ('" + StreamFlow.SKIP_CHANGE_COMMITS + "' = 'true') on the streaming "
                + "table to ignore such commits");
      }
    }
    return new AppendRange(appends, skipped);
  }

  /** Whether any append is in the range. */
  boolean hasAppends() {
    return !appends.isEmpty();
  }

  /** The rows the appends added, from their snapshot summaries. */
  long addedRows() {
    long rows = 0;
    for (Snapshot append : appends) {
      rows += Long.parseLong(append.summary().getOrDefault(SnapshotSummary.ADDED_RECORDS_PROP, "0"));
    }
    return rows;
  }

  /** How many updating or deleting commits were passed over. */
  int skippedChangeCommits() {
    return skippedChangeCommits;
  }
}
