package io.floe.spark.refresh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.actions.BinPackRewriteFilePlanner;
import org.apache.iceberg.actions.RewriteDataFiles;
import org.apache.iceberg.actions.RewritePositionDeleteFiles;
import org.apache.iceberg.actions.SizeBasedFileRewritePlanner;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.spark.actions.SparkActions;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.spark.sql.SparkSession;

/**
 * Keeps a storage table cheap to read and to refresh. An incremental refresh writes the rows it
 * adds as a new small data file and the rows it removes as position delete files (the storage is
 * merge-on-read), so a view refreshed often gathers files: every reader of the view, and every
 * refresh's MERGE, opens them all. After a refresh, when the table has gathered enough of them,
 * Floe compacts it with Iceberg's actions:
 *
 * <ul>
 *   <li>{@code rewriteDataFiles}: the small data files ({@link #smallFileBytes}) are packed
 *       together, and a file whose rows are deleted for {@value #DELETE_RATIO} or more is rewritten
 *       without them; larger files with few deletes are left as they are, so a compaction costs
 *       about the size of what the refreshes wrote, not of the view;
 *   <li>{@code rewritePositionDeletes}: the position delete files left are merged into one per
 *       partition, without the positions of data files that are gone. Delete files are small, so
 *       all are rewritten.
 * </ul>
 *
 * Both commit {@code replace} snapshots, which change files, not rows: the view keeps its refresh
 * state and stays fresh, and a view reading this one passes over them. A compaction is due when
 * the table has {@value #DEFAULT_DELETE_FILES} or more delete files, or at least {@value
 * #DEFAULT_SMALL_FILES} small data files: the snapshot summary counts the files, and only when it
 * counts that many data files are their sizes read from the manifests. The storage table's
 * properties {@value #ENABLED}, {@value #DELETE_FILES}, {@value #SMALL_FILES} and {@value
 * #SMALL_FILE_BYTES} change this.
 */
public final class StorageCompaction {
  /** Storage table property: {@code false} turns automatic compaction off. */
  public static final String ENABLED = "floe.compaction.enabled";
  /** Storage table property: the number of live delete files that makes a compaction due. */
  public static final String DELETE_FILES = "floe.compaction.delete-files";
  /** Storage table property: the number of small data files that makes a compaction due. */
  public static final String SMALL_FILES = "floe.compaction.small-files";
  /** Storage table property: the size in bytes below which a data file counts as small. */
  public static final String SMALL_FILE_BYTES = "floe.compaction.small-file-bytes";
  /** Snapshot summary property of the commits of an automatic compaction. */
  public static final String SUMMARY_PROPERTY = "floe.compaction";

  static final int DEFAULT_DELETE_FILES = 32;
  static final int DEFAULT_SMALL_FILES = 16;
  /** The most a data file can weigh and count as small, unless {@value #SMALL_FILE_BYTES} says otherwise. */
  static final long DEFAULT_SMALL_FILE_BYTES = 32L * 1024 * 1024;
  /** Data files under this size are always small, unless {@value #SMALL_FILE_BYTES} says otherwise. */
  static final long MIN_SMALL_FILE_BYTES = 1024L * 1024;
  /** The share of deleted rows from which a data file is rewritten (Iceberg's default). */
  static final double DELETE_RATIO = 0.3;

  /** What a compaction did. */
  public record Compacted(int dataFilesRewritten, int dataFilesAdded, int deleteFilesRewritten, int deleteFilesAdded, String why) {
    @Override
    public String toString() {
      return why + ": rewrote " + dataFilesRewritten + " data files into " + dataFilesAdded + " and "
          + deleteFilesRewritten + " delete files into " + deleteFilesAdded;
    }
  }

  private final SparkSession spark;

  public StorageCompaction(SparkSession spark) {
    this.spark = spark;
  }

  /**
   * Whether a compaction failed because another commit changed the files it rewrote (Iceberg's
   * validation or commit conflict, also wrapped by the action): the next refresh tries again.
   */
  public static boolean lostARace(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ValidationException || t instanceof CommitFailedException) {
        return true;
      }
    }
    return false;
  }

  /** Whether automatic compaction is on for {@code storage} ({@value #ENABLED}, on by default). */
  public static boolean enabled(Table storage) {
    return PropertyUtil.propertyAsBoolean(storage.properties(), ENABLED, true);
  }

  /** Why {@code storage} is due for a compaction now, from its current snapshot's summary; empty when it is not. */
  public static Optional<String> due(Table storage) {
    Snapshot current = storage.currentSnapshot();
    if (current == null || !enabled(storage)) {
      return Optional.empty();
    }
    Map<String, String> summary = current.summary();
    long deleteFiles = count(summary, SnapshotSummary.TOTAL_DELETE_FILES_PROP);
    long dataFiles = count(summary, SnapshotSummary.TOTAL_DATA_FILES_PROP);
    long bytes = count(summary, SnapshotSummary.TOTAL_FILE_SIZE_PROP);
    int deleteLimit = PropertyUtil.propertyAsInt(storage.properties(), DELETE_FILES, DEFAULT_DELETE_FILES);
    int smallLimit = PropertyUtil.propertyAsInt(storage.properties(), SMALL_FILES, DEFAULT_SMALL_FILES);
    long smallBytes = smallFileBytes(storage);
    if (deleteFiles >= deleteLimit) {
      return Optional.of(deleteFiles + " delete files (" + DELETE_FILES + " = " + deleteLimit + ")");
    }
    if (dataFiles >= smallLimit) {
      long small = smallDataFiles(storage, current, smallBytes);
      if (small >= smallLimit) {
        return Optional.of(small + " data files under " + smallBytes + " bytes (" + SMALL_FILES + " = " + smallLimit + ")");
      }
    }
    return Optional.empty();
  }

  /**
   * The storage's live files as its current snapshot's summary counts them, e.g. {@code "12 data
   * files, 3 delete files"}; {@code "none"} before the first commit.
   */
  public static String describeFiles(Table storage) {
    Snapshot current = storage.currentSnapshot();
    if (current == null) {
      return "none";
    }
    return count(current.summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP) + " data files, "
        + count(current.summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP) + " delete files";
  }

  /** The latest automatic compaction in the storage's main history, if the history still holds one. */
  public static Optional<Snapshot> lastCompaction(Table storage) {
    for (Snapshot snapshot : SnapshotUtil.currentAncestors(storage)) {
      if (snapshot.summary() != null && snapshot.summary().containsKey(SUMMARY_PROPERTY)) {
        return Optional.of(snapshot);
      }
    }
    return Optional.empty();
  }

  /** The data files of {@code snapshot} under {@code bytes}, from its manifests. */
  private static long smallDataFiles(Table storage, Snapshot snapshot, long bytes) {
    long small = 0;
    try (CloseableIterable<FileScanTask> tasks = storage.newScan().useSnapshot(snapshot.snapshotId()).ignoreResiduals().planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.file().fileSizeInBytes() < bytes) {
          small++;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of " + storage.name(), e);
    }
    return small;
  }

  /**
   * The size below which a data file of {@code storage} is small: {@value #SMALL_FILE_BYTES} when
   * set; otherwise a quarter of the current average data file, at least {@value #MIN_SMALL_FILE_BYTES}
   * and at most {@value #DEFAULT_SMALL_FILE_BYTES} bytes. A full refresh writes the view in files of
   * similar size, often well under the cap, and those are the view's layout, not refresh debris;
   * a refresh's files are far smaller than them.
   */
  static long smallFileBytes(Table storage) {
    String set = storage.properties().get(SMALL_FILE_BYTES);
    if (set != null) {
      return Math.max(1, PropertyUtil.propertyAsLong(storage.properties(), SMALL_FILE_BYTES, DEFAULT_SMALL_FILE_BYTES));
    }
    Snapshot current = storage.currentSnapshot();
    long files = current == null ? 0 : count(current.summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP);
    if (files == 0) {
      return DEFAULT_SMALL_FILE_BYTES;
    }
    // The total size counts the delete files too; they are small next to the data files.
    long average = count(current.summary(), SnapshotSummary.TOTAL_FILE_SIZE_PROP) / files;
    return Math.min(DEFAULT_SMALL_FILE_BYTES, Math.max(MIN_SMALL_FILE_BYTES, average / 4));
  }

  private static long count(Map<String, String> summary, String key) {
    String value = summary == null ? null : summary.get(key);
    return value == null ? 0 : Long.parseLong(value);
  }

  /**
   * Compacts {@code storage} when it is {@link #due}. A compaction that loses a race with a
   * refresh commits nothing and throws; the next refresh finds it due again.
   */
  public Optional<Compacted> compactIfDue(Table storage) {
    Optional<String> why = due(storage);
    if (why.isEmpty()) {
      return Optional.empty();
    }
    RewriteDataFiles.Result data =
        SparkActions.get(spark)
            .rewriteDataFiles(storage)
            .option(SizeBasedFileRewritePlanner.MIN_FILE_SIZE_BYTES, Long.toString(smallFileBytes(storage)))
            .option(SizeBasedFileRewritePlanner.MIN_INPUT_FILES, "2")
            .option(BinPackRewriteFilePlanner.DELETE_RATIO_THRESHOLD, Double.toString(DELETE_RATIO))
            .snapshotProperty(SUMMARY_PROPERTY, "data files")
            .execute();
    storage.refresh();
    RewritePositionDeleteFiles.Result deletes =
        SparkActions.get(spark)
            .rewritePositionDeletes(storage)
            .option(SizeBasedFileRewritePlanner.REWRITE_ALL, "true")
            .snapshotProperty(SUMMARY_PROPERTY, "delete files")
            .execute();
    storage.refresh();
    return Optional.of(
        new Compacted(
            data.rewrittenDataFilesCount(),
            data.addedDataFilesCount(),
            deletes.rewrittenDeleteFilesCount() + data.removedDeleteFilesCount(),
            deletes.addedDeleteFilesCount(),
            why.get()));
  }
}
