package io.floe.spark.ingest;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.exceptions.CommitFailedException;

/**
 * Publishes a streaming table's refresh in one metadata commit: main moves to the head of the branch the
 * refresh wrote its rows to (if it wrote any), and the flows' checkpoints are set. The commit is a
 * compare-and-swap of the table's metadata: it fails with {@link CommitFailedException} when main or any
 * checkpoint moved since the refresh read them, or when anything else committed in between, so rows are never
 * appended twice and a checkpoint never moves without its rows.
 */
final class CheckpointCommit {
  private CheckpointCommit() {}

  /**
   * Commits.
   *
   * @param expectedMain the main snapshot the refresh started from
   * @param expectedCheckpoints each flow's checkpoint property as the refresh read it (null when absent)
   * @param branch the branch holding the rows to publish, or empty to set the checkpoints only
   * @param checkpoints the checkpoint properties to set
   * @return main's snapshot after the commit
   */
  static long commit(
      Table table,
      long expectedMain,
      Map<String, String> expectedCheckpoints,
      Optional<String> branch,
      Map<String, String> checkpoints) {
    TableOperations operations = ((HasTableOperations) table).operations();
    TableMetadata base = operations.refresh();
    Snapshot main = base.currentSnapshot();
    if (main == null || main.snapshotId() != expectedMain) {
      throw new CommitFailedException(
          "Streaming table %s moved since the refresh read it (snapshot %s, now %s)",
          table.name(), expectedMain, main == null ? "none" : main.snapshotId());
    }
    expectedCheckpoints.forEach((key, expected) -> {
      if (!Objects.equals(base.properties().get(key), expected)) {
        throw new CommitFailedException(
            "Checkpoint %s of streaming table %s moved since the refresh read it (%s, now %s)",
            key, table.name(), expected, base.properties().get(key));
      }
    });
    TableMetadata.Builder updated = TableMetadata.buildFrom(base);
    if (branch.isPresent()) {
      SnapshotRef head = base.ref(branch.get());
      if (head == null) {
        throw new CommitFailedException("Branch %s of streaming table %s is gone", branch.get(), table.name());
      }
      updated.setBranchSnapshot(head.snapshotId(), SnapshotRef.MAIN_BRANCH);
      updated.removeRef(branch.get());
    }
    updated.setProperties(checkpoints);
    // Fails unless the table's metadata is still exactly `base`.
    operations.commit(base, updated.build());
    table.refresh();
    return table.currentSnapshot().snapshotId();
  }
}
