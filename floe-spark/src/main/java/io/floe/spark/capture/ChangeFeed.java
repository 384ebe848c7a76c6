package io.floe.spark.capture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change feed of a storage table whose rows carry a multiplicity column: what each
 * incremental refresh changed, kept so that a reader of the table (an MV over this MV) captures
 * the change by reading it, not the storage files the refresh touched. A change spread over the
 * whole table (every file gained a position delete) then costs its own size to capture instead of
 * the table's.
 *
 * <p>The feed is the branch {@value #BRANCH} of the storage table. A reader opens it: the refresh
 * of an MV over this one creates the branch ({@link #open}) when it is missing. A refresh then
 * appends its change to it while it is open, each row in the table's columns with the signed
 * change of its multiplicity in the multiplicity column, and records that append's snapshot on its
 * main commit ({@value #SNAPSHOT_PROPERTY}); an MV that nothing reads spends no write on a feed.
 * A commit that changes no row records {@value #NONE}. The feed answers for a range of main
 * snapshots only when every snapshot in it recorded its change or is a compaction; a full refresh,
 * or one made before a reader opened the feed, records nothing, and a capture across it reads the
 * storage files. Changes that no main snapshot in the metadata refers to any more are dropped from
 * the branch by {@link #trim}; snapshot expiry then deletes their files. Readers of main never see
 * the branch.
 */
public final class ChangeFeed {
  /** The branch holding the changes. */
  public static final String BRANCH = "floe_changes";
  /** Main snapshot summary key: the feed snapshot holding that commit's change, or {@value #NONE}. */
  public static final String SNAPSHOT_PROPERTY = "floe.change-snapshot";
  /** The value of {@value #SNAPSHOT_PROPERTY} for a commit that changed no row. */
  public static final String NONE = "none";
  /** Feed snapshot summary key: whether the change only adds rows ({@code true}) or not. */
  public static final String ADDS_ONLY_PROPERTY = "floe.change-adds-only";
  /** Feed snapshot summary key: a unique token, to find the append among concurrent ones. */
  public static final String TOKEN_PROPERTY = "floe.change-token";

  private static final Logger LOG = LoggerFactory.getLogger(ChangeFeed.class);

  private ChangeFeed() {}

  /** Whether a reader opened the table's feed: its refreshes then record their changes. */
  public static boolean isOpen(Table table) {
    SnapshotRef ref = table.refs().get(BRANCH);
    return ref != null && ref.isBranch();
  }

  /**
   * Opens the table's feed, for a reader: creates the (empty) feed branch unless {@code table}, as
   * loaded or as the catalog now has it, already has one. A branch starts at a snapshot, so it is
   * created at main's and then emptied, so that it holds no storage file.
   */
  public static void open(Table table) {
    if (isOpen(table)) {
      return;
    }
    table.refresh();
    if (isOpen(table) || table.currentSnapshot() == null) {
      // A table with no snapshot yet has no change to record either; a later reader's refresh opens it.
      return;
    }
    try {
      table.manageSnapshots().createBranch(BRANCH, table.currentSnapshot().snapshotId()).commit();
    } catch (IllegalArgumentException | CommitFailedException e) {
      // Another refresh created it first, or the name is taken by a tag.
      table.refresh();
      if (!isOpen(table)) {
        throw e;
      }
      return;
    }
    table.newDelete().toBranch(BRANCH).deleteFromRowFilter(Expressions.alwaysTrue()).commit();
  }

  /**
   * Closes the table's feed, when no MV reads the table any more: removes the feed branch, so that
   * its refreshes stop writing changes and snapshot expiry deletes the ones written. Returns
   * whether there was a feed to close.
   */
  public static boolean close(Table table) {
    table.refresh();
    if (!isOpen(table)) {
      return false;
    }
    table.manageSnapshots().removeBranch(BRANCH).commit();
    return true;
  }

  /**
   * The feed snapshot whose summary holds {@code token}: searched back from the branch head, then,
   * when the branch was closed since the append, among the table's snapshots (a main snapshot may
   * name it while it lasts; {@link #covers} passes over it once it has expired).
   */
  public static long appendedWith(Table table, String token) {
    table.refresh();
    SnapshotRef ref = table.refs().get(BRANCH);
    Snapshot snapshot = ref == null ? null : table.snapshot(ref.snapshotId());
    while (snapshot != null) {
      if (token.equals(snapshot.summary().get(TOKEN_PROPERTY))) {
        return snapshot.snapshotId();
      }
      snapshot = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId());
    }
    for (Snapshot any : table.snapshots()) {
      if (token.equals(any.summary().get(TOKEN_PROPERTY))) {
        return any.snapshotId();
      }
    }
    throw new IllegalStateException("The change appended to " + table.name() + "'s feed is not in its metadata");
  }

  /**
   * Whether the feed holds the change of the table after {@code fromExclusive} up to {@code
   * toInclusive}: every snapshot in the range recorded its change and its feed snapshot is still
   * there, or is a compaction. Reads table metadata only.
   */
  public static boolean covers(Table table, long fromExclusive, long toInclusive) {
    return coverage(table, fromExclusive, toInclusive).isPresent();
  }

  /** The feed snapshots holding a range's change, the range's operations and whether it only adds rows. */
  private record Coverage(List<Long> feedSnapshots, List<String> operations, boolean addsOnly) {}

  private static Optional<Coverage> coverage(Table table, long fromExclusive, long toInclusive) {
    List<Long> feedSnapshots = new ArrayList<>();
    List<String> operations = new ArrayList<>();
    boolean addsOnly = true;
    Snapshot snapshot = table.snapshot(toInclusive);
    while (snapshot != null && snapshot.snapshotId() != fromExclusive) {
      operations.add(0, snapshot.operation());
      if (!DataOperations.REPLACE.equals(snapshot.operation())) {
        String recorded = snapshot.summary().get(SNAPSHOT_PROPERTY);
        if (recorded == null) {
          return Optional.empty();
        }
        if (!NONE.equals(recorded)) {
          Snapshot feed = table.snapshot(Long.parseLong(recorded));
          if (feed == null) {
            return Optional.empty();
          }
          feedSnapshots.add(feed.snapshotId());
          addsOnly &= Boolean.parseBoolean(feed.summary().get(ADDS_ONLY_PROPERTY));
        }
      }
      snapshot = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId());
    }
    return snapshot == null ? Optional.empty() : Optional.of(new Coverage(feedSnapshots, operations, addsOnly));
  }

  /**
   * The change of the table after {@code fromExclusive} up to {@code toInclusive} from its feed:
   * the table's rows with {@code multiplicity} set to 1 and the signed change in {@link
   * ChangeCapture#WEIGHT}. Empty when the feed does not {@linkplain #covers cover} the range; the
   * caller then captures from the storage files.
   */
  public static Optional<CapturedChange.Delta> capture(
      SparkSession spark, Table table, String sparkName, long fromExclusive, long toInclusive, String multiplicity) {
    Optional<Coverage> found = coverage(table, fromExclusive, toInclusive);
    if (found.isEmpty()) {
      LOG.debug("The feed of {} does not hold its change after snapshot {}; capturing from its files", sparkName, fromExclusive);
      return Optional.empty();
    }
    List<Long> feedSnapshots = found.get().feedSnapshots();
    List<String> operations = found.get().operations();
    boolean addsOnly = found.get().addsOnly();
    Schema schema = SnapshotUtil.schemaFor(table, toInclusive);
    StructType sparkSchema = SparkSchemaUtil.convert(schema);
    List<FileScanTask> tasks = new ArrayList<>();
    for (long feed : feedSnapshots) {
      try (CloseableIterable<FileScanTask> added =
          table.newIncrementalAppendScan().fromSnapshotInclusive(feed).toSnapshot(feed).planFiles()) {
        added.forEach(tasks::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (tasks.isEmpty()) {
      Dataset<Row> empty =
          spark.createDataFrame(List.of(), sparkSchema.add(ChangeCapture.WEIGHT, "bigint"));
      return Optional.of(new CapturedChange.Delta(empty, ChangeKind.NONE, 0, operations));
    }
    long rows = tasks.stream().mapToLong(t -> t.file().recordCount()).sum();
    List<Column> columns = new ArrayList<>();
    for (StructField field : sparkSchema.fields()) {
      Column value = functions.col(quoted(field.name()));
      columns.add(field.name().equals(multiplicity) ? functions.lit(1L).cast(field.dataType()).as(field.name()) : value);
    }
    columns.add(functions.col(quoted(multiplicity)).cast("bigint").as(ChangeCapture.WEIGHT));
    try (StagedScan scan = StagedScan.stage(spark, table, schema, tasks)) {
      Dataset<Row> zset = scan.rows(List.of(functions.col("*"))).select(columns.toArray(Column[]::new)).localCheckpoint(true);
      LOG.debug("Captured the change of {} after snapshot {} up to {} from its feed: {} rows", sparkName, fromExclusive, toInclusive, rows);
      return Optional.of(new CapturedChange.Delta(zset, addsOnly ? ChangeKind.APPEND_ONLY : ChangeKind.ROW_LEVEL, rows, operations));
    }
  }

  /**
   * Drops from the feed branch the changes that no main snapshot in the table's metadata refers
   * to (their snapshots expired, or their refresh lost a race), so that snapshot expiry can delete
   * their files. Returns how many change files were dropped.
   */
  public static int trim(Table table) {
    table.refresh();
    SnapshotRef ref = table.refs().get(BRANCH);
    if (ref == null) {
      return 0;
    }
    Set<Long> referenced = new HashSet<>();
    for (Snapshot snapshot : table.snapshots()) {
      String recorded = snapshot.summary().get(SNAPSHOT_PROPERTY);
      if (recorded != null && !NONE.equals(recorded)) {
        Snapshot feed = table.snapshot(Long.parseLong(recorded));
        if (feed != null) {
          referenced.add(feed.sequenceNumber());
        }
      }
    }
    List<DataFile> unreferenced = new ArrayList<>();
    try (CloseableIterable<FileScanTask> files = table.newScan().useRef(BRANCH).planFiles()) {
      for (FileScanTask task : files) {
        if (!referenced.contains(task.file().fileSequenceNumber())) {
          unreferenced.add(task.file());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (unreferenced.isEmpty()) {
      return 0;
    }
    DeleteFiles delete = table.newDelete().toBranch(BRANCH);
    unreferenced.forEach(delete::deleteFile);
    delete.commit();
    return unreferenced.size();
  }

  private static String quoted(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
