package io.floe.spark.capture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

/**
 * The data files whose live rows may differ between two snapshots, as scan tasks carrying the
 * delete files that apply at the side they are read from. Every other data file holds the same
 * live rows at both snapshots and need not be read.
 *
 * @param atFrom tasks to read at the older snapshot, whose rows disappeared or stayed
 * @param atTo tasks to read at the newer snapshot, whose rows appeared or stayed
 */
record TouchedFiles(List<FileScanTask> atFrom, List<FileScanTask> atTo) {
  TouchedFiles {
    atFrom = List.copyOf(atFrom);
    atTo = List.copyOf(atTo);
  }

  /** Everything live at {@code to}, for a table that had no snapshot before. */
  static TouchedFiles allAt(Table table, long to) {
    return new TouchedFiles(List.of(), plan(table.newScan().useSnapshot(to).planFiles()));
  }

  /**
   * The data files appended after {@code fromExclusive} up to {@code to}; only right when every
   * snapshot in between is an append, because the incremental append scan skips all others.
   */
  static TouchedFiles appendedBetween(Table table, long fromExclusive, long to) {
    return new TouchedFiles(
        List.of(),
        plan(table.newIncrementalAppendScan().fromSnapshotExclusive(fromExclusive).toSnapshot(to).planFiles()));
  }

  /**
   * The data files live at only one of the two snapshots, plus those live at both whose delete
   * files differ (merge-on-read position deletes and deletion vectors change a file's live rows
   * without rewriting it).
   */
  static TouchedFiles differingBetween(Table table, long from, long to) {
    Map<String, FileScanTask> fromTasks = byDataFile(plan(table.newScan().useSnapshot(from).planFiles()));
    Map<String, FileScanTask> toTasks = byDataFile(plan(table.newScan().useSnapshot(to).planFiles()));
    return new TouchedFiles(differing(fromTasks, toTasks), differing(toTasks, fromTasks));
  }

  /** Rows stored in the data files to read, before delete files are applied. */
  long recordCount() {
    long count = 0;
    for (FileScanTask task : atFrom) {
      count += task.file().recordCount();
    }
    for (FileScanTask task : atTo) {
      count += task.file().recordCount();
    }
    return count;
  }

  boolean isEmpty() {
    return atFrom.isEmpty() && atTo.isEmpty();
  }

  private static List<FileScanTask> differing(Map<String, FileScanTask> side, Map<String, FileScanTask> other) {
    List<FileScanTask> differing = new ArrayList<>();
    side.forEach(
        (location, task) -> {
          FileScanTask counterpart = other.get(location);
          if (counterpart == null || !deleteFileKeys(task).equals(deleteFileKeys(counterpart))) {
            differing.add(task);
          }
        });
    return differing;
  }

  private static Set<String> deleteFileKeys(FileScanTask task) {
    // Deletion vectors of several data files share one Puffin file; the offset tells them apart.
    return task.deletes().stream().map(TouchedFiles::deleteFileKey).collect(Collectors.toSet());
  }

  private static String deleteFileKey(DeleteFile deleteFile) {
    return deleteFile.contentOffset() == null
        ? deleteFile.location()
        : deleteFile.location() + "@" + deleteFile.contentOffset();
  }

  private static Map<String, FileScanTask> byDataFile(List<FileScanTask> tasks) {
    Map<String, FileScanTask> byLocation = new LinkedHashMap<>();
    for (FileScanTask task : tasks) {
      byLocation.put(task.file().location(), task);
    }
    return byLocation;
  }

  private static List<FileScanTask> plan(CloseableIterable<FileScanTask> planned) {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> closing = planned) {
      closing.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot close the file scan plan", e);
    }
    return tasks;
  }
}
