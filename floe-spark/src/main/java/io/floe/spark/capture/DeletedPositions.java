package io.floe.spark.capture;

import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.data.DeleteLoader;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.encryption.EncryptingFileIO;

/**
 * Reads which rows of a table's data files its position deletes delete, on the driver, with
 * Iceberg's own delete loader: it reads position delete files (format v2) and deletion vectors (v3)
 * alike, through the table's file IO and encryption. No data file is read.
 */
public final class DeletedPositions {
  private final DeleteLoader loader;

  private DeletedPositions(DeleteLoader loader) {
    this.loader = loader;
  }

  public static DeletedPositions of(Table table) {
    EncryptingFileIO io = EncryptingFileIO.combine(table.io(), table.encryption());
    return new DeletedPositions(new BaseDeleteLoader(io::newInputFile));
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
}
