package io.floe.spark.ivm;

import java.util.UUID;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;

/**
 * Commits a row-level change to a storage table exactly once. The change is written to a private
 * branch created at the snapshot the refresh read; main is then fast-forwarded to it, which Iceberg
 * refuses when main has moved since (another refresh won the race), so a delta computed against
 * one state is never applied to another. Ingestion commits new files' rows the same way. The branch is removed either way.
 */
public final class BranchCommit implements AutoCloseable {
  private final Table table;
  private final String branch;
  private final long baseSnapshotId;
  private boolean published;

  /** Creates the branch at {@code baseSnapshotId}. */
  BranchCommit(Table table, long baseSnapshotId) {
    this(table, baseSnapshotId, "floe_refresh_");
  }

  /** Creates a branch named {@code prefix} and a random suffix at {@code baseSnapshotId}. */
  public BranchCommit(Table table, long baseSnapshotId, String prefix) {
    this.table = table;
    this.baseSnapshotId = baseSnapshotId;
    this.branch = prefix + UUID.randomUUID().toString().replace("-", "");
    table.manageSnapshots().createBranch(branch, baseSnapshotId).commit();
  }

  public String branch() {
    return branch;
  }

  /** The Spark name of the branch for a table named {@code quotedTable}. */
  public String sparkName(String quotedTable) {
    return quotedTable + ".`branch_" + branch + "`";
  }

  /**
   * Makes the branch's head main's head and removes the branch, in one commit; fails if main moved
   * since the branch was created.
   */
  public long publish() {
    table.refresh();
    if (table.currentSnapshot() == null || table.currentSnapshot().snapshotId() != baseSnapshotId) {
      throw new CommitFailedException(
          "Storage table %s moved since the refresh read it (snapshot %s, now %s)",
          table.name(), baseSnapshotId, table.currentSnapshot() == null ? "none" : table.currentSnapshot().snapshotId());
    }
    long head = table.refs().get(branch).snapshotId();
    try {
      table.manageSnapshots().fastForwardBranch(SnapshotRef.MAIN_BRANCH, branch).removeBranch(branch).commit();
    } catch (IllegalArgumentException e) {
      // Iceberg refuses the fast-forward when main moved between the check above and now.
      throw new CommitFailedException(e, "Storage table %s moved while the refresh committed", table.name());
    }
    published = true;
    return head;
  }

  @Override
  public void close() {
    if (published) {
      return;
    }
    table.refresh();
    if (table.refs().containsKey(branch)) {
      table.manageSnapshots().removeBranch(branch).commit();
    }
  }
}
