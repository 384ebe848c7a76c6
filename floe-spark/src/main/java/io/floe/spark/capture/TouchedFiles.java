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
 * @param atFrom tasks to read whole at the older snapshot, whose rows disappeared or stayed
 * @param atTo tasks to read whole at the newer snapshot, whose rows appeared or stayed
 * @param deletesChanged data files live at both snapshots whose delete files differ (merge-on-read
 *     position deletes and deletion vectors change a file's live rows without rewriting it); {@link
 *     PositionCapture} reads only their newly deleted rows, or {@link #readingWhole} moves them to
 *     both sides
 */
record TouchedFiles(List<FileScanTask> atFrom, List<FileScanTask> atTo, List<DeletesChanged> deletesChanged) {
  TouchedFiles {
    atFrom = List.copyOf(atFrom);
    atTo = List.copyOf(atTo);
    deletesChanged = List.copyOf(deletesChanged);
  }

  /** One data file live at both snapshots, as planned at each, with different delete files. */
  record DeletesChanged(FileScanTask atFrom, FileScanTask atTo) {}

  /** Everything live at {@code to}, for a table that had no snapshot before. */
  static TouchedFiles allAt(Table table, long to) {
    return new TouchedFiles(List.of(), plan(table.newScan().useSnapshot(to).planFiles()), List.of());
  }

  /**
   * The data files appended after {@code fromExclusive} up to {@code to}; only right when every
   * snapshot in between is an append, because the incremental append scan skips all others.
   */
  static TouchedFiles appendedBetween(Table table, long fromExclusive, long to) {
    return new TouchedFiles(
        List.of(),
        plan(table.newIncrementalAppendScan().fromSnapshotExclusive(fromExclusive).toSnapshot(to).planFiles()),
        List.of());
  }

  /**
   * The data files live at only one of the two snapshots, plus those live at both whose delete
   * files differ.
   */
  static TouchedFiles differingBetween(Table table, long from, long to) {
    Map<String, FileScanTask> fromTasks = byDataFile(plan(table.newScan().useSnapshot(from).planFiles()));
    Map<String, FileScanTask> toTasks = byDataFile(plan(table.newScan().useSnapshot(to).planFiles()));
    List<DeletesChanged> deletesChanged = new ArrayList<>();
    toTasks.forEach(
        (location, task) -> {
          FileScanTask before = fromTasks.get(location);
          if (before != null && !deleteFileKeys(before).equals(deleteFileKeys(task))) {
            deletesChanged.add(new DeletesChanged(before, task));
          }
        });
    return new TouchedFiles(onlyIn(fromTasks, toTasks), onlyIn(toTasks, fromTasks), deletesChanged);
  }

  /**
   * The files to read whole: those live at one side only, and {@code pairs} (some of {@link
   * #deletesChanged}, the others being read by position) at both sides.
   */
  TouchedFiles readingWhole(List<DeletesChanged> pairs) {
    List<FileScanTask> from = new ArrayList<>(atFrom);
    List<FileScanTask> to = new ArrayList<>(atTo);
    for (DeletesChanged pair : pairs) {
      from.add(pair.atFrom());
      to.add(pair.atTo());
    }
    return new TouchedFiles(from, to, List.of());
  }

  /**
   * Rows stored in the data files read whole, before delete files are applied: a file read at both
   * sides counts twice. {@link #deletesChanged} counts as read whole at both sides too, the most a
   * capture reads for them.
   */
  long recordCount() {
    long count = 0;
    for (FileScanTask task : atFrom) {
      count += task.file().recordCount();
    }
    for (FileScanTask task : atTo) {
      count += task.file().recordCount();
    }
    for (DeletesChanged pair : deletesChanged) {
      count += 2 * pair.atTo().file().recordCount();
    }
    return count;
  }

  private static List<FileScanTask> onlyIn(Map<String, FileScanTask> side, Map<String, FileScanTask> other) {
    List<FileScanTask> only = new ArrayList<>();
    side.forEach(
        (location, task) -> {
          if (!other.containsKey(location)) {
            only.add(task);
          }
        });
    return only;
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
