package io.floe.spark.capture;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.encryption.EncryptingFileIO;
import org.apache.iceberg.util.ThreadPools;

/**
 * Reads which rows of a table's data files its position deletes delete, on the driver, with
 * Iceberg's own delete loader: it reads position delete files (format v2) and deletion vectors (v3)
 * alike, through the table's file IO and encryption. No data file is read.
 *
 * <p>The delete files of one data file are read in the calling thread. Iceberg's loader would read
 * them on its worker pool, and waits for that pool by polling it every 10 ms, longer than reading
 * a few small delete files from a local disk takes. {@link #in(List)} reads many data files'
 * deletes concurrently on that pool instead, and blocks until they are read.
 */
public final class DeletedPositions {
  private final DeleteLoader loader;

  private DeletedPositions(DeleteLoader loader) {
    this.loader = loader;
  }

  public static DeletedPositions of(Table table) {
    EncryptingFileIO io = EncryptingFileIO.combine(table.io(), table.encryption());
    return new DeletedPositions(new BaseDeleteLoader(io::newInputFile, null));
  }

  /**
   * The positions in the data file of {@code task} that its delete files delete, which must all be
   * position deletes; empty when it has none.
   */
  public PositionDeleteIndex in(FileScanTask task) {
    if (task.deletes().isEmpty()) {
      return PositionDeleteIndex.empty();
    }
    return loader.loadPositionDeletes(task.deletes(), task.file().location());
  }

  /** {@link #in(FileScanTask)} of each of {@code tasks}, in their order, read concurrently. */
  public List<PositionDeleteIndex> in(List<FileScanTask> tasks) {
    List<Callable<PositionDeleteIndex>> loads = new ArrayList<>();
    for (FileScanTask task : tasks) {
      loads.add(() -> in(task));
    }
    List<PositionDeleteIndex> indexes = new ArrayList<>();
    try {
      for (Future<PositionDeleteIndex> load : ThreadPools.getDeleteWorkerPool().invokeAll(loads)) {
        indexes.add(load.get());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while reading position deletes", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw new IllegalStateException("Cannot read position deletes: " + e.getCause(), e.getCause());
    }
    return indexes;
  }
}
