package io.floe.spark.refresh;

import io.floe.spark.capture.DeletedPositions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.RewriteFiles;
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
import org.apache.iceberg.util.ContentFileUtil;
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
 *   <li>a data file that is not small and whose every row is deleted is dropped with its delete
 *       files, in a commit that reads and writes no data: a grouped view whose refresh rewrites all
 *       its groups leaves its previous file so, and rewriting it would read it whole to write
 *       nothing (small ones go when the small files are packed);
 *   <li>{@code rewriteDataFiles}: the small data files ({@link #smallFileBytes}) are packed
 *       together, and a file whose rows are deleted for {@value #DELETE_RATIO} or more is rewritten
 *       without them; larger files with few deletes are left as they are, so a compaction costs
 *       about the size of what the refreshes wrote, not of the view;
 *   <li>{@code rewritePositionDeletes}, when data files have several delete files each or when
 *       the data rewrite replaced files of a table with delete files: all position delete files are
 *       rewritten, without the positions of data files that are gone.
 * </ul>
 *
 * Each step commits a {@code replace} snapshot, which changes files, not rows: the view keeps its
 * refresh state and stays fresh, and a view reading this one passes over them. A compaction is due
 * when readers apply {@value #DEFAULT_DELETE_FILES} or more delete files beyond one per data file,
 * when a data file that is not small is wholly or mostly deleted, or when there are at least
 * {@value #DEFAULT_SMALL_FILES} small data files ({@link LiveFiles}). One delete file per data file
 * is what Iceberg's writers keep, however many refreshes deleted from it, so it alone never makes a
 * compaction due: rewriting those would write the same files again after every refresh that touches
 * many data files. The storage table's properties {@value #ENABLED}, {@value #DELETE_FILES},
 * {@value #SMALL_FILES} and {@value #SMALL_FILE_BYTES} change this.
 */
public final class StorageCompaction {
  /** Storage table property: {@code false} turns automatic compaction off. */
  public static final String ENABLED = "floe.compaction.enabled";
  /**
   * Storage table property: the number of delete files readers apply beyond one per data file that
   * makes a compaction due.
   */
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
  public record Compacted(
      int dataFilesDropped, int dataFilesRewritten, int dataFilesAdded, int deleteFilesRewritten, int deleteFilesAdded, String why) {
    @Override
    public String toString() {
      return why + ": dropped " + dataFilesDropped + " wholly deleted data files, rewrote " + dataFilesRewritten
          + " data files into " + dataFilesAdded + " and " + deleteFilesRewritten + " delete files into " + deleteFilesAdded;
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

  /** Why {@code storage} is due for a compaction now, from its current snapshot; empty when it is not. */
  public static Optional<String> due(Table storage) {
    return dueNow(storage).map(Due::why);
  }

  /**
   * Why a compaction is due, whether the delete files themselves need rewriting, and the wholly
   * deleted data files to drop first, as listed at snapshot {@code listedAt}.
   */
  private record Due(String why, boolean rewriteDeleteFiles, List<FileScanTask> whollyDeleted, long listedAt) {}

  /**
   * Reads the summary first: a table without delete files and with fewer data files than {@value
   * #SMALL_FILES} asks for is not due, and its manifests are not read. Otherwise one pass over the
   * live files ({@link LiveFiles}) decides, in this order: delete files beyond one per data file,
   * data files mostly deleted, small data files.
   */
  private static Optional<Due> dueNow(Table storage) {
    Snapshot current = storage.currentSnapshot();
    if (current == null || !enabled(storage)) {
      return Optional.empty();
    }
    Map<String, String> summary = current.summary();
    long deleteFiles = count(summary, SnapshotSummary.TOTAL_DELETE_FILES_PROP);
    long dataFiles = count(summary, SnapshotSummary.TOTAL_DATA_FILES_PROP);
    int deleteLimit = PropertyUtil.propertyAsInt(storage.properties(), DELETE_FILES, DEFAULT_DELETE_FILES);
    int smallLimit = PropertyUtil.propertyAsInt(storage.properties(), SMALL_FILES, DEFAULT_SMALL_FILES);
    if (deleteFiles == 0 && dataFiles < smallLimit) {
      return Optional.empty();
    }
    long smallBytes = smallFileBytes(storage);
    LiveFiles live = LiveFiles.of(storage, current, smallBytes);
    List<FileScanTask> dropped = live.whollyDeleted();
    if (live.extraDeleteFiles() >= deleteLimit) {
      return Optional.of(new Due(
          live.extraDeleteFiles() + " delete files beyond one per data file (" + DELETE_FILES + " = " + deleteLimit + ")",
          true, dropped, current.snapshotId()));
    }
    if (!dropped.isEmpty()) {
      return Optional.of(new Due(
          dropped.size() + " data files with all their rows deleted", false, dropped, current.snapshotId()));
    }
    if (live.mostlyDeleted() > 0) {
      return Optional.of(new Due(
          live.mostlyDeleted() + " data files with " + Math.round(DELETE_RATIO * 100) + "% or more of their rows deleted",
          false, dropped, current.snapshotId()));
    }
    if (live.small() >= smallLimit) {
      return Optional.of(new Due(
          live.small() + " data files under " + smallBytes + " bytes (" + SMALL_FILES + " = " + smallLimit + ")", false,
          dropped, current.snapshotId()));
    }
    return Optional.empty();
  }

  /**
   * What makes a storage's live files costly, counted in one pass over its manifests.
   *
   * <p>Iceberg's merge-on-read writers keep one position delete file per data file (file-scoped,
   * each new one replacing the last) or one deletion vector: a view whose refreshes touch many data
   * files has as many delete files, and rewriting them gains nothing. What costs readers is a data
   * file with several delete files to apply (partition-scoped delete files, or files written by
   * other engines), counted in {@code extraDeleteFiles} once per data file they apply to beyond its
   * first, and a data file whose rows are mostly deleted, which is read to be skipped.
   *
   * @param small data files under the small-file size
   * @param extraDeleteFiles delete files a reader applies beyond one per data file
   * @param mostlyDeleted data files that are not small with {@value #DELETE_RATIO} or more of their
   *     rows deleted by delete files scoped to them alone (others do not tell how many rows of the
   *     file they delete), and not wholly deleted
   * @param whollyDeleted data files that are not small whose every row their delete files, scoped
   *     to them alone, delete: such a file and its delete files change no row of the table, with or
   *     without them
   */
  private record LiveFiles(long small, long extraDeleteFiles, long mostlyDeleted, List<FileScanTask> whollyDeleted) {
    static LiveFiles of(Table storage, Snapshot snapshot, long smallBytes) {
      long small = 0;
      long extra = 0;
      long mostlyDeleted = 0;
      List<FileScanTask> whollyDeleted = new ArrayList<>();
      DeletedPositions deleted = DeletedPositions.of(storage);
      try (CloseableIterable<FileScanTask> tasks =
          storage.newScan().useSnapshot(snapshot.snapshotId()).ignoreResiduals().planFiles()) {
        for (FileScanTask task : tasks) {
          if (task.file().fileSizeInBytes() < smallBytes) {
            small++;
          }
          extra += Math.max(0, task.deletes().size() - 1);
          long deletedRows = 0;
          boolean scoped = !task.deletes().isEmpty();
          for (DeleteFile delete : task.deletes()) {
            scoped &= delete.content() == FileContent.POSITION_DELETES && ContentFileUtil.isFileScoped(delete);
            deletedRows += delete.recordCount();
          }
          boolean notSmall = task.file().fileSizeInBytes() >= smallBytes;
          if (scoped && notSmall && deletedRows >= task.file().recordCount()) {
            // The delete files' record counts may count a position twice (several files deleting
            // from it); their positions tell.
            if (deleted.in(task).cardinality() >= task.file().recordCount()) {
              whollyDeleted.add(task);
              continue;
            }
          }
          // A small file's deletes go when the small files are packed (a wholly deleted one costs
          // the packing nothing to write); one that is not small costs every reader its deleted rows.
          if (scoped && notSmall && deletedRows >= DELETE_RATIO * task.file().recordCount()) {
            mostlyDeleted++;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot list the live files of " + storage.name(), e);
      }
      return new LiveFiles(small, extra, mostlyDeleted, whollyDeleted);
    }
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

  private static boolean hasDeleteFiles(Table storage) {
    Snapshot current = storage.currentSnapshot();
    return current != null && count(current.summary(), SnapshotSummary.TOTAL_DELETE_FILES_PROP) > 0;
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
    Optional<Due> due = dueNow(storage);
    if (due.isEmpty()) {
      return Optional.empty();
    }
    String why = due.get().why();
    int dropped = due.get().whollyDeleted().size();
    if (dropped > 0) {
      drop(storage, due.get().whollyDeleted(), due.get().listedAt());
      storage.refresh();
      due = dueNow(storage);
      if (due.isEmpty()) {
        return Optional.of(new Compacted(dropped, 0, 0, 0, 0, why));
      }
      why = why + "; then " + due.get().why();
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
    int deleteFilesRewritten = data.removedDeleteFilesCount();
    int deleteFilesAdded = 0;
    // Delete files of data files the rewrite replaced may be left behind (a partition's); this
    // rewrite drops them, in a commit marked as the compaction's.
    boolean leftBehind = data.rewrittenDataFilesCount() > 0 && hasDeleteFiles(storage);
    if (due.get().rewriteDeleteFiles() || leftBehind) {
      RewritePositionDeleteFiles.Result deletes =
          SparkActions.get(spark)
              .rewritePositionDeletes(storage)
              .option(SizeBasedFileRewritePlanner.REWRITE_ALL, "true")
              .snapshotProperty(SUMMARY_PROPERTY, "delete files")
              .execute();
      storage.refresh();
      deleteFilesRewritten += deletes.rewrittenDeleteFilesCount();
      deleteFilesAdded = deletes.addedDeleteFilesCount();
    }
    return Optional.of(
        new Compacted(
            dropped,
            data.rewrittenDataFilesCount(),
            data.addedDataFilesCount(),
            deleteFilesRewritten,
            deleteFilesAdded,
            why));
  }

  /**
   * Drops data files whose rows are all deleted, with their delete files, in one {@code replace}
   * commit marked as a compaction's. It reads and writes no data file. It fails, committing nothing,
   * when a commit since {@code listedAt}, the snapshot they were listed at, removed them or added
   * deletes for them.
   */
  private static void drop(Table storage, List<FileScanTask> whollyDeleted, long listedAt) {
    RewriteFiles rewrite = storage.newRewrite().validateFromSnapshot(listedAt);
    for (FileScanTask task : whollyDeleted) {
      rewrite.deleteFile(task.file());
      task.deletes().forEach(rewrite::deleteFile);
    }
    rewrite.set(SUMMARY_PROPERTY, "wholly deleted data files").commit();
  }

}
