package io.floe.spark.ivm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.ManageSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits a row-level change to a storage table exactly once. The change is written to a private
 * branch created at the snapshot the refresh read; main is then fast-forwarded to it, which Iceberg
 * refuses when main has moved since (another refresh won the race), so a delta computed against
 * one state is never applied to another. Ingestion commits new files' rows the same way. The branch is removed either way.
 *
 * <p>A process that dies while it holds a branch cannot remove it, and a branch keeps its snapshots
 * and their files from expiring. The branch's name carries the time it was made, and each new
 * branch of a prefix first removes those of that prefix older than {@link #ABANDONED_AFTER}: no
 * refresh or ingestion runs that long.
 */
public final class BranchCommit implements AutoCloseable {
  /** How old a private branch is when it is taken for one a dead process left behind. */
  public static final Duration ABANDONED_AFTER = Duration.ofDays(1);

  private static final Logger LOG = LoggerFactory.getLogger(BranchCommit.class);
  private static final Pattern MADE_AT = Pattern.compile("(\\d{13})_[0-9a-f]{32}");

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
    long now = System.currentTimeMillis();
    removeAbandoned(table, prefix, now);
    this.branch = prefix + now + "_" + UUID.randomUUID().toString().replace("-", "");
    table.manageSnapshots().createBranch(branch, baseSnapshotId).commit();
  }

  /**
   * Removes the branches of {@code prefix} made more than {@link #ABANDONED_AFTER} before {@code
   * now}: by the time in their name, or, for a name without one (made by an earlier Floe), by the
   * time of their head snapshot. A failure to remove one is left to the next branch.
   */
  static void removeAbandoned(Table table, String prefix, long now) {
    long cutoff = now - ABANDONED_AFTER.toMillis();
    List<String> abandoned = new ArrayList<>();
    for (Map.Entry<String, SnapshotRef> ref : table.refs().entrySet()) {
      String name = ref.getKey();
      if (!ref.getValue().isBranch() || !name.startsWith(prefix)) {
        continue;
      }
      Matcher madeAt = MADE_AT.matcher(name.substring(prefix.length()));
      long made;
      if (madeAt.matches()) {
        made = Long.parseLong(madeAt.group(1));
      } else {
        Snapshot head = table.snapshot(ref.getValue().snapshotId());
        made = head == null ? Long.MIN_VALUE : head.timestampMillis();
      }
      if (made < cutoff) {
        abandoned.add(name);
      }
    }
    if (abandoned.isEmpty()) {
      return;
    }
    try {
      ManageSnapshots remove = table.manageSnapshots();
      abandoned.forEach(remove::removeBranch);
      remove.commit();
      LOG.info("Removed {} branch(es) of {} left by refreshes or ingestions that did not finish: {}",
          abandoned.size(), table.name(), abandoned);
    } catch (RuntimeException e) {
      LOG.warn("Cannot remove the abandoned branches {} of {}; a later commit tries again", abandoned, table.name(), e);
    }
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
    SnapshotRef ref = table.refs().get(branch);
    if (ref == null) {
      // Removed by another process that took it for abandoned: the run took over a day.
      throw new CommitFailedException("The branch %s of %s was removed before it could be published", branch, table.name());
    }
    long head = ref.snapshotId();
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
