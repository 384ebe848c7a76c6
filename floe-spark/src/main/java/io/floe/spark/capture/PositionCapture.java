package io.floe.spark.capture;

import io.floe.spark.IntegralIn;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.BaseFileScanTask;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Table;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The change of data files that are live at both snapshots and only gained position deletes. A
 * merge-on-read DELETE, UPDATE or MERGE leaves the data file in place and adds position delete
 * files (format v2) or a deletion vector (v3), so such a file's rows at the newer snapshot are its
 * rows at the older one minus those at the positions deleted at the newer snapshot but not at the
 * older. Those rows, weighted −1, are the file's whole change: the file is read once, filtered by
 * position, instead of whole at both snapshots and consolidated over all its rows.
 *
 * <p>The positions are loaded on the driver with Iceberg's own delete loader, which reads position
 * delete files and deletion vectors alike; they are as many as the rows deleted from the file so far,
 * small next to the file. A file whose deletes cannot be compared that way (equality deletes, or a
 * position deleted at the older snapshot that is live at the newer) is left to the whole-file read,
 * which is right for any change.
 */
final class PositionCapture {
  private static final String FILE = "__floe_file";
  private static final String POS = "__floe_pos";
  private static final StructType POSITIONS =
      new StructType().add(FILE, DataTypes.StringType, false).add(POS, DataTypes.LongType, false);

  /**
   * Up to how many distinct deleted positions {@link #deletedRows} lists in its position filter;
   * beyond that the filter's set would make every task it is shipped with large.
   */
  static final int MAX_LISTED_POSITIONS = 50_000;

  private final List<FileScanTask> files;
  private final List<Row> positions;
  private final List<TouchedFiles.DeletesChanged> wholeFile;

  private PositionCapture(
      List<FileScanTask> files, List<Row> positions, List<TouchedFiles.DeletesChanged> wholeFile) {
    this.files = List.copyOf(files);
    this.positions = List.copyOf(positions);
    this.wholeFile = List.copyOf(wholeFile);
  }

  /**
   * Loads the deleted positions of each changed file at both snapshots and keeps the files whose
   * change they describe; reads delete files only, no data file.
   */
  static PositionCapture load(Table table, List<TouchedFiles.DeletesChanged> changed) {
    List<FileScanTask> files = new ArrayList<>();
    List<Row> positions = new ArrayList<>();
    List<TouchedFiles.DeletesChanged> wholeFile = new ArrayList<>();
    if (changed.isEmpty()) {
      return new PositionCapture(files, positions, wholeFile);
    }
    List<TouchedFiles.DeletesChanged> compared = new ArrayList<>();
    List<FileScanTask> loaded = new ArrayList<>();
    for (TouchedFiles.DeletesChanged pair : changed) {
      if (!onlyPositionDeletes(pair.atFrom()) || !onlyPositionDeletes(pair.atTo())) {
        wholeFile.add(pair);
      } else {
        compared.add(pair);
        loaded.add(pair.atFrom());
        loaded.add(pair.atTo());
      }
    }
    List<PositionDeleteIndex> indexes = DeletedPositions.of(table).in(loaded);
    for (int i = 0; i < compared.size(); i++) {
      TouchedFiles.DeletesChanged pair = compared.get(i);
      String location = pair.atTo().file().location();
      PositionDeleteIndex before = indexes.get(2 * i);
      PositionDeleteIndex after = indexes.get(2 * i + 1);
      List<Row> added = new ArrayList<>();
      boolean[] undeleted = {false};
      before.forEach(position -> undeleted[0] |= !after.isDeleted(position));
      if (undeleted[0]) {
        // Not a change deletes alone make; the whole-file read decides what it is.
        wholeFile.add(pair);
        continue;
      }
      after.forEach(
          position -> {
            if (!before.isDeleted(position)) {
              added.add(RowFactory.create(location, position));
            }
          });
      if (!added.isEmpty()) {
        // Read without any delete file: the positions are those of the file as written.
        files.add(withoutDeletes(pair.atTo()));
        positions.addAll(added);
      }
    }
    return new PositionCapture(files, positions, wholeFile);
  }

  /** The changed files this capture cannot describe, to be read whole at both snapshots. */
  List<TouchedFiles.DeletesChanged> wholeFile() {
    return wholeFile;
  }

  /** The data files to read, each without its delete files; empty when there is nothing to read. */
  List<FileScanTask> files() {
    return files;
  }

  /** Rows stored in the data files read (each once), before any filter. */
  long recordCount() {
    long count = 0;
    for (FileScanTask task : files) {
      count += task.file().recordCount();
    }
    return count;
  }

  /**
   * The rows at the newly deleted positions, with {@code columns} (of {@code schema}) and weight −1,
   * from a scan staged with {@link #files()}. The positions are few, so they are broadcast and the files' rows are
   * filtered as they are read, without a shuffle.
   *
   * <p>Up to {@link #MAX_LISTED_POSITIONS} distinct positions are also listed in a filter on the
   * row position alone, which runs first: the rows it drops, nearly all of them, are never turned
   * into rows of every column nor probed with their file path. That makes a change spread thinly
   * over large files cost about one pass over their columns.
   */
  Dataset<Row> deletedRows(
      SparkSession spark, StagedScan scan, StructType schema, List<Column> columns, String weight) {
    List<Column> read = new ArrayList<>(columns);
    read.add(functions.col(MetadataColumns.FILE_PATH.name()).as(FILE));
    read.add(functions.col(MetadataColumns.ROW_POSITION.name()).as(POS));
    Dataset<Row> rows = scan.rowsWithPositions(schema, read);
    Set<Object> listed =
        positions.stream().map(row -> (Object) row.getLong(1)).distinct().limit(MAX_LISTED_POSITIONS + 1).collect(Collectors.toSet());
    if (listed.size() <= MAX_LISTED_POSITIONS) {
      // Implied by the join below, so it changes which rows are read, not the result. One set, not
      // a list of literals: Spark takes a fifth of a second to analyze thousands of those (over a
      // second in a fresh JVM). Tested by IntegralIn, the cheapest test per row read.
      rows = rows.filter(listedIn(functions.col(POS), listed));
    }
    Dataset<Row> deleted = functions.broadcast(spark.createDataFrame(positions, POSITIONS));
    Column[] kept = columns.toArray(Column[]::new);
    return rows.join(deleted, scanKeys(), "left_semi").select(kept).withColumn(weight, functions.lit(-1L));
  }

  private static Column listedIn(Column column, Set<Object> values) {
    return ExpressionUtils.column(IntegralIn.of(ExpressionUtils.expression(column), values));
  }

  private static scala.collection.immutable.Seq<String> scanKeys() {
    return io.floe.spark.Scala.seq(FILE, POS);
  }

  private static boolean onlyPositionDeletes(FileScanTask task) {
    for (DeleteFile deleteFile : task.deletes()) {
      if (deleteFile.content() != FileContent.POSITION_DELETES) {
        return false;
      }
    }
    return true;
  }

  /** The task as planned at the newer snapshot (its schema and spec), without its delete files. */
  private static FileScanTask withoutDeletes(FileScanTask task) {
    return new BaseFileScanTask(
        task.file(),
        new DeleteFile[0],
        SchemaParser.toJson(task.schema()),
        PartitionSpecParser.toJson(task.spec()),
        ResidualEvaluator.unpartitioned(Expressions.alwaysTrue()));
  }
}
