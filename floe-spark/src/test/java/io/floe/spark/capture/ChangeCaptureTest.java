package io.floe.spark.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.spark.ScanTaskSetManager;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.iceberg.spark.SparkTableCache;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ChangeCaptureTest {
  private static final String COPY_ON_WRITE_V2 = "'format-version'='2'";
  private static final String MERGE_ON_READ =
      "'write.delete.mode'='merge-on-read','write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read'";
  private static final String MERGE_ON_READ_V2 = "'format-version'='2'," + MERGE_ON_READ;
  private static final String MERGE_ON_READ_V3 = "'format-version'='3'," + MERGE_ON_READ;

  private SparkSession spark;
  private String ns;
  private ChangeCapture capture;

  @BeforeEach
  void setUp() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace("capture");
    capture = new ChangeCapture(spark);
  }

  @Test
  void appendsAreCapturedFromTheAddedFilesOnly() {
    createTable(COPY_ON_WRITE_V2);
    long from = commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b') AS v(id, name)");
    commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (3, 'c'), (4, 'd'), (3, 'c') AS v(id, name)");
    long to = commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (5, 'e') AS v(id, name)");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.APPEND_ONLY);
    assertThat(delta.operations()).containsExactly("append", "append");
    assertThat(delta.rowsScanned()).isEqualTo(4);
    assertMatchesTimeTravel(delta, from, to);
    assertThat(weights(delta.zset())).containsEntry(List.of(3, "c"), 2L);
  }

  static Stream<Arguments> rowLevelChanges() {
    String delete = "DELETE FROM t WHERE id = 2";
    String update = "UPDATE t SET name = 'B' WHERE id = 2";
    String merge =
        "MERGE INTO t USING (SELECT * FROM VALUES (2, 'B'), (7, 'g') AS s(id, name)) s ON t.id = s.id"
            + " WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *";
    // Format v3 writes deletion vectors instead of position delete files; MERGE exercises both
    // deleting and adding rows, and aSecondMergeOnReadDeleteOfTheSameFileIsCaptured a replaced vector.
    return Stream.of(
        Arguments.of(COPY_ON_WRITE_V2, delete),
        Arguments.of(COPY_ON_WRITE_V2, update),
        Arguments.of(COPY_ON_WRITE_V2, merge),
        Arguments.of(MERGE_ON_READ_V2, delete),
        Arguments.of(MERGE_ON_READ_V2, update),
        Arguments.of(MERGE_ON_READ_V2, merge),
        Arguments.of(MERGE_ON_READ_V3, merge));
  }

  @ParameterizedTest(name = "{1} with {0}")
  @MethodSource("rowLevelChanges")
  void rowLevelChangesReadOnlyTheTouchedFiles(String properties, String statement) {
    createTable(properties);
    commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c') AS v(id, name)");
    long from = commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (4, 'd'), (5, 'e') AS v(id, name)");
    long to = commit(statement);

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.ROW_LEVEL);
    assertThat(delta.operations()).hasSize(1);
    assertMatchesTimeTravel(delta, from, to);
    assertThat(weights(delta.zset())).containsEntry(List.of(2, "b"), -1L);
    // Every file is read but the one holding ids 4 and 5, untouched at both snapshots; with
    // merge-on-read the first file stays and is read once, for its newly deleted positions.
    long readWholeAtBothSides = recordsInDataFiles(from) + recordsInDataFiles(to) - 2 * 2;
    assertThat(delta.rowsScanned())
        .isEqualTo(properties.equals(COPY_ON_WRITE_V2) ? readWholeAtBothSides : recordsInDataFiles(to) - 2);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mergeOnReadModes")
  void mergeOnReadChangesSpreadOverFilesAreReadOnceByPosition(String properties) {
    createTable(properties);
    for (int file = 0; file < 3; file++) {
      commit("INSERT INTO t SELECT /*+ COALESCE(1) */ id, CONCAT('n', id) FROM RANGE(" + file * 10 + ", " + (file + 1) * 10 + ") AS r(id)");
    }
    long from = commit("DELETE FROM t WHERE id IN (1, 12)");
    commit("UPDATE t SET name = 'updated' WHERE id IN (3, 14, 25)");
    commit("UPDATE t SET name = name WHERE id IN (5, 26)");
    commit("DELETE FROM t WHERE id IN (7, 18, 29)");
    long to = commit("INSERT INTO t VALUES (100, 'new')");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.ROW_LEVEL);
    assertMatchesTimeTravel(delta, from, to);
    Map<List<Object>, Long> weights = weights(delta.zset());
    assertThat(weights).containsEntry(List.of(3, "n3"), -1L).containsEntry(List.of(3, "updated"), 1L);
    assertThat(weights).containsEntry(List.of(29, "n29"), -1L).containsEntry(List.of(100, "new"), 1L);
    // An update that changed nothing cancels out.
    assertThat(weights).doesNotContainKey(List.of(5, "n5"));
    assertThat(weights).hasSize(3 * 2 + 3 + 1);
    // The three original files stay live and are each read once, filtered by position; only the
    // files the updates and the insert added are read besides. Whole at both sides, they would
    // count twice.
    assertThat(recordsInDataFiles(from)).isEqualTo(30);
    assertThat(delta.rowsScanned()).isEqualTo(recordsInDataFiles(to)).isLessThan(30 + recordsInDataFiles(to));
  }

  @Test
  void aFileWithEqualityDeletesIsReadWholeAtBothSides() throws Exception {
    createTable(MERGE_ON_READ_V2);
    commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c') AS v(id, name)");
    writeEqualityDelete(1);
    long from = table().currentSnapshot().snapshotId();
    long to = commit("DELETE FROM t WHERE id = 3");

    CapturedChange.Delta delta = captureDelta(from, to);

    // The equality delete applies at both sides, so deleted positions alone do not tell the change.
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(3, "c"), -1L));
    assertMatchesTimeTravel(delta, from, to);
    assertThat(delta.rowsScanned()).isEqualTo(2 * 3);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mergeOnReadModes")
  void aSecondMergeOnReadDeleteOfTheSameFileIsCaptured(String properties) {
    createTable(properties);
    commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c') AS v(id, name)");
    commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (4, 'd') AS v(id, name)");
    long from = commit("DELETE FROM t WHERE id = 1");
    long to = commit("DELETE FROM t WHERE id = 3");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.ROW_LEVEL);
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(3, "c"), -1L));
    // The file holding ids 1 to 3 is read once, for the position deleted since.
    assertThat(delta.rowsScanned()).isEqualTo(3);
    assertMatchesTimeTravel(delta, from, to);
  }

  static Stream<String> mergeOnReadModes() {
    return Stream.of(MERGE_ON_READ_V2, MERGE_ON_READ_V3);
  }

  @Test
  void identicalRowsAreWeighedTogether() {
    createTable(COPY_ON_WRITE_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a'), (1, 'a'), (2, 'b')");
    long to = commit("DELETE FROM t WHERE id = 1");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(1, "a"), -2L));
    assertMatchesTimeTravel(delta, from, to);
  }

  @Test
  void nullsAreValuesLikeAnyOther() {
    spark.sql(
        "CREATE TABLE t (id INT, name STRING, amount DECIMAL(10, 2)) USING iceberg TBLPROPERTIES ("
            + MERGE_ON_READ_V2
            + ")");
    long from = commit("INSERT INTO t VALUES (1, NULL, 1.50), (2, 'b', NULL), (NULL, NULL, NULL), (NULL, NULL, NULL)");
    long to = commit("UPDATE t SET amount = 9.99 WHERE id = 2 OR id IS NULL");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertMatchesTimeTravel(delta, from, to);
    Map<List<Object>, Long> weights = weights(delta.zset());
    assertThat(weights).containsEntry(nullableList(null, null, null), -2L);
    assertThat(weights).hasSize(4);
  }

  @Test
  void rowsInsertedAndDeletedWithinTheRangeCancelOut() {
    createTable(MERGE_ON_READ_V2);
    long first = commit("INSERT INTO t VALUES (1, 'a')");
    commit("INSERT INTO t VALUES (2, 'b')");
    long fileDeleted = commit("DELETE FROM t WHERE id = 2");
    commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (3, 'c'), (4, 'd') AS v(id, name)");
    long rowDeleted = commit("DELETE FROM t WHERE id = 3");

    CapturedChange.Delta wholeFile = captureDelta(first, fileDeleted);
    CapturedChange.Delta oneRow = captureDelta(fileDeleted, rowDeleted);

    // The appended file is gone again, so no file differs between the two snapshots.
    assertThat(wholeFile.operations()).containsExactly("append", "delete");
    assertThat(wholeFile.kind()).isEqualTo(ChangeKind.NONE);
    assertThat(wholeFile.zset().collectAsList()).isEmpty();
    assertThat(oneRow.operations()).containsExactly("append", "delete");
    assertThat(oneRow.kind()).isEqualTo(ChangeKind.ROW_LEVEL);
    assertThat(weights(oneRow.zset())).isEqualTo(Map.of(List.of(4, "d"), 1L));
    assertMatchesTimeTravel(oneRow, fileDeleted, rowDeleted);
  }

  @Test
  void compactionAloneIsNoChangeAndRunsNoJob() {
    createTable(COPY_ON_WRITE_V2);
    commit("INSERT INTO t VALUES (1, 'a')");
    long from = commit("INSERT INTO t VALUES (2, 'b')");
    long to = compact();
    assertThat(to).isNotEqualTo(from);

    String jobGroup = "capture-" + UUID.randomUUID();
    spark.sparkContext().setJobGroup(jobGroup, "compaction-only capture", false);
    CapturedChange.Delta delta;
    try {
      delta = captureDelta(from, to);
      assertThat(spark.sparkContext().statusTracker().getJobIdsForGroup(jobGroup)).isEmpty();
    } finally {
      spark.sparkContext().clearJobGroup();
    }

    assertThat(delta.kind()).isEqualTo(ChangeKind.NONE);
    assertThat(delta.operations()).containsExactly("replace");
    assertThat(delta.rowsScanned()).isZero();
    assertThat(delta.zset().collectAsList()).isEmpty();
    assertThat(delta.zset().columns()).containsExactly("id", "name", ChangeCapture.WEIGHT);
  }

  @Test
  void theSameSnapshotOnBothEndsIsNoChange() {
    createTable(COPY_ON_WRITE_V2);
    long snapshot = commit("INSERT INTO t VALUES (1, 'a')");

    CapturedChange.Delta delta = captureDelta(snapshot, snapshot);

    assertThat(delta.kind()).isEqualTo(ChangeKind.NONE);
    assertThat(delta.operations()).isEmpty();
    assertThat(delta.zset().collectAsList()).isEmpty();
  }

  @Test
  void compactionAmidOtherChangesCancelsOut() {
    createTable(MERGE_ON_READ_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    commit("INSERT INTO t VALUES (3, 'c')");
    commit("DELETE FROM t WHERE id = 1");
    compact();
    long to = commit("UPDATE t SET name = 'C' WHERE id = 3");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.operations()).containsExactly("append", "delete", "replace", "overwrite");
    assertThat(delta.kind()).isEqualTo(ChangeKind.ROW_LEVEL);
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(1, "a"), -1L, List.of(3, "C"), 1L));
    assertMatchesTimeTravel(delta, from, to);
  }

  @Test
  void appendsAroundACompactionAreAppendOnly() {
    createTable(COPY_ON_WRITE_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a')");
    commit("INSERT INTO t VALUES (2, 'b')");
    compact();
    long to = commit("INSERT INTO t VALUES (3, 'c')");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.APPEND_ONLY);
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(2, "b"), 1L, List.of(3, "c"), 1L));
    // The two appended rows; not the file of row 1 nor the file the compaction wrote.
    assertThat(delta.rowsScanned()).isEqualTo(2);
    assertMatchesTimeTravel(delta, from, to);
  }

  @Test
  void changesOnEitherSideOfACompactionAreCapturedWithoutReadingWhatItRewrote() {
    createTable(MERGE_ON_READ_V2);
    commit("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')");
    long from = commit("INSERT INTO t VALUES (6, 'f'), (7, 'g'), (8, 'h'), (9, 'i'), (10, 'j')");
    commit("INSERT INTO t VALUES (11, 'k')");
    compact();
    // By position in the one file the compaction wrote (11 rows), then one more file.
    commit("DELETE FROM t WHERE id IN (2, 11)");
    long to = commit("INSERT INTO t VALUES (12, 'l')");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.ROW_LEVEL);
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(2, "b"), -1L, List.of(12, "l"), 1L));
    // Row 11's file, the compacted file once for its deleted positions, row 12's file: 1 + 11 + 1.
    // Comparing the range's two ends instead reads both files of 5 rows and the compacted file.
    assertThat(delta.rowsScanned()).isEqualTo(13);
    assertMatchesTimeTravel(delta, from, to);
  }

  @Test
  void withoutAnOlderSnapshotEverythingIsAdded() {
    createTable(MERGE_ON_READ_V2);
    commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    long to = commit("DELETE FROM t WHERE id = 1");

    CapturedChange.Delta delta = captureDelta(null, to);

    assertThat(delta.kind()).isEqualTo(ChangeKind.APPEND_ONLY);
    assertThat(delta.operations()).containsExactly("append", "delete");
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(2, "b"), 1L));
    assertMatchesTimeTravel(delta, null, to);
  }

  @Test
  void theSnapshotSchemaIsReadEvenAfterTheTableChanged() {
    createTable(MERGE_ON_READ_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    long to = commit("UPDATE t SET name = 'B' WHERE id = 2");
    spark.sql("ALTER TABLE t DROP COLUMN name");
    spark.sql("ALTER TABLE t ADD COLUMN extra INT");

    CapturedChange.Delta delta = captureDelta(from, to);

    assertThat(delta.zset().columns()).containsExactly("id", "name", ChangeCapture.WEIGHT);
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(2, "b"), -1L, List.of(2, "B"), 1L));
  }

  @Test
  void stagedTaskSetsAreReleased() {
    createTable(MERGE_ON_READ_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    long to = commit("DELETE FROM t WHERE id = 1");
    int cachedTables = SparkTableCache.get().size();

    captureDelta(from, to);

    assertThat(ScanTaskSetManager.get().fetchSetIds(table())).isEmpty();
    assertThat(SparkTableCache.get().size()).isEqualTo(cachedTables);
  }

  @Test
  void aSnapshotThatIsNoAncestorIsUnsupported() {
    createTable(COPY_ON_WRITE_V2);
    long first = commit("INSERT INTO t VALUES (1, 'a')");
    long rolledBack = commit("INSERT INTO t VALUES (2, 'b')");
    spark.sql("CALL lake.system.rollback_to_snapshot('lake." + ns + ".t', " + first + ")");
    long to = commit("INSERT INTO t VALUES (3, 'c')");

    assertThat(unsupportedReason(rolledBack, to)).contains("not an ancestor");
  }

  @Test
  void aSchemaChangeInTheRangeIsUnsupported() {
    createTable(COPY_ON_WRITE_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a')");
    spark.sql("ALTER TABLE t ADD COLUMN extra INT");
    long to = commit("INSERT INTO t VALUES (2, 'b', 7)");

    assertThat(unsupportedReason(from, to)).contains("schema");
  }

  @Test
  void anExpiredSnapshotIsUnsupported() {
    createTable(COPY_ON_WRITE_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a')");
    commit("INSERT INTO t VALUES (2, 'b')");
    long to = commit("INSERT INTO t VALUES (3, 'c')");
    spark.sql(
        "CALL lake.system.expire_snapshots(table => 'lake."
            + ns
            + ".t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)");

    assertThat(unsupportedReason(from, to)).contains("expired");
  }

  @Test
  void equalityDeletesAreUnsupported() throws Exception {
    createTable(MERGE_ON_READ_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    writeEqualityDelete(1);
    long to = table().currentSnapshot().snapshotId();
    assertThat(spark.sql("SELECT id FROM t").collectAsList()).extracting(row -> row.getInt(0)).containsExactly(2);

    assertThat(unsupportedReason(from, to)).contains("equality delete");
  }

  /**
   * Commits an equality delete of {@code id}. Spark writes no equality deletes; this writes one as
   * other engines (Flink, Kafka Connect) do.
   */
  private void writeEqualityDelete(int id) throws IOException {
    Table table = table();
    Schema deleteSchema = table.schema().select("id");
    GenericFileWriterFactory writers =
        new GenericFileWriterFactory.Builder(table)
            .dataFileFormat(FileFormat.PARQUET)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(new int[] {table.schema().findField("id").fieldId()})
            .equalityDeleteRowSchema(deleteSchema)
            .build();
    String location = table.location() + "/data/equality-delete-" + UUID.randomUUID() + ".parquet";
    EqualityDeleteWriter<Record> writer =
        writers.newEqualityDeleteWriter(
            EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)), table.spec(), null);
    try (writer) {
      writer.write(GenericRecord.create(deleteSchema).copy("id", id));
    }
    table.newRowDelta().addDeletes(writer.toDeleteFile()).commit();
  }

  @Test
  void aChangeSpreadOverMoreRowsThanTheLimitIsUnsupportedBeforeAnyRead() {
    createTable(COPY_ON_WRITE_V2);
    long from = commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a'), (2, 'b'), (3, 'c') AS v(id, name)");
    long to = commit("DELETE FROM t WHERE id = 2");

    CapturedChange limited = capture.limitScanTo(4).capture(table(), sparkName(), from, to);

    assertThat(limited).isInstanceOf(CapturedChange.Unsupported.class);
    assertThat(((CapturedChange.Unsupported) limited).reason())
        .contains("holding 5 rows, more than a full refresh reads (4)");
    assertThat(capture.limitScanTo(5).capture(table(), sparkName(), from, to)).isInstanceOf(CapturedChange.Delta.class);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mergeOnReadModes")
  void aCaptureOfSomeColumnsReadsThemAloneAndCancelsUpdatesOfOthers(String properties) {
    spark.sql(
        "CREATE TABLE t (id INT, name STRING, tags MAP<STRING, STRING>, amount INT) USING iceberg TBLPROPERTIES ("
            + properties + ")");
    long from =
        commit("INSERT INTO t SELECT /*+ COALESCE(1) */ * FROM VALUES (1, 'a', map('k', 'v'), 10), (2, 'b', NULL, 20),"
            + " (3, 'c', NULL, 30) AS v(id, name, tags, amount)");
    long renamed = commit("UPDATE t SET name = upper(name), tags = map('k', 'w') WHERE id IN (1, 2)");
    long to = commit("UPDATE t SET amount = amount + 1 WHERE id = 3");
    ChangeCapture idAndAmount = capture.reading(java.util.Set.of("ID", "amount"));

    // An update of columns not read leaves the read ones as they were: the rows cancel out, and the
    // unread map column, which could not be consolidated, is never read.
    CapturedChange.Delta onlyUnread = delta(idAndAmount.capture(table(), sparkName(), from, renamed));
    CapturedChange.Delta both = delta(idAndAmount.capture(table(), sparkName(), from, to));

    assertThat(onlyUnread.kind()).isEqualTo(ChangeKind.NONE);
    assertThat(onlyUnread.rowsScanned()).as("rows read before they cancelled out").isPositive();
    assertThat(onlyUnread.zset().columns()).containsExactly("id", "amount", ChangeCapture.WEIGHT);
    assertThat(onlyUnread.zset().collectAsList()).isEmpty();
    assertThat(weights(both.zset())).isEqualTo(Map.of(List.of(3, 30), -1L, List.of(3, 31), 1L));
    assertThat(unsupportedReason(from, to)).isEqualTo("column tags of " + sparkName() + " is of type map, which cannot be compared to match a change's rows");
  }

  @Test
  void aCaptureOfNoColumnStillCountsRowsInTheFirstColumn() {
    createTable(MERGE_ON_READ_V2);
    long from = commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    commit("UPDATE t SET name = 'B' WHERE id = 2");
    long to = commit("INSERT INTO t VALUES (3, 'c'), (3, 'd')");

    CapturedChange.Delta delta = delta(capture.reading(java.util.Set.of()).capture(table(), sparkName(), from, to));

    assertThat(delta.zset().columns()).containsExactly("id", ChangeCapture.WEIGHT);
    assertThat(weights(delta.zset())).isEqualTo(Map.of(List.of(3), 2L));
  }

  @Test
  void mapColumnsAreUnsupported() {
    spark.sql("CREATE TABLE t (id INT, tags MAP<STRING, STRING>) USING iceberg");
    long from = commit("INSERT INTO t VALUES (1, map('k', 'v'))");
    long to = commit("INSERT INTO t VALUES (2, map('k', 'w'))");

    assertThat(unsupportedReason(from, to)).isEqualTo("column tags of " + sparkName() + " is of type map, which cannot be compared to match a change's rows");
  }

  private void createTable(String properties) {
    spark.sql("CREATE TABLE t (id INT, name STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
  }

  /** Rewrites all data files of the table, returning the compaction's snapshot. */
  private long compact() {
    return commit(
        "CALL lake.system.rewrite_data_files(table => 'lake." + ns + ".t', options => map('rewrite-all', 'true'))");
  }

  /** Runs {@code statement} and returns the table's snapshot after it. */
  private long commit(String statement) {
    spark.sql(statement).collectAsList();
    return table().currentSnapshot().snapshotId();
  }

  private long recordsInDataFiles(long snapshot) {
    long records = 0;
    try (CloseableIterable<FileScanTask> tasks = table().newScan().useSnapshot(snapshot).planFiles()) {
      for (FileScanTask task : tasks) {
        records += task.file().recordCount();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return records;
  }

  private Table table() {
    try {
      Table table = Spark3Util.loadIcebergTable(spark, "lake." + ns + ".t");
      table.refresh();
      return table;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private String sparkName() {
    return "`lake`.`" + ns + "`.`t`";
  }

  private CapturedChange.Delta captureDelta(Long from, long to) {
    return delta(capture.capture(table(), sparkName(), from, to));
  }

  private static CapturedChange.Delta delta(CapturedChange change) {
    assertThat(change).isInstanceOf(CapturedChange.Delta.class);
    return (CapturedChange.Delta) change;
  }

  private String unsupportedReason(Long from, long to) {
    CapturedChange change = capture.capture(table(), sparkName(), from, to);
    assertThat(change).isInstanceOf(CapturedChange.Unsupported.class);
    return ((CapturedChange.Unsupported) change).reason();
  }

  /**
   * The Z-set must equal the multiset difference of the two snapshots, computed by Spark SQL:
   * one row weighed +1 or −1 per occurrence, summed per row.
   */
  private void assertMatchesTimeTravel(CapturedChange.Delta delta, Long from, long to) {
    String newer = "SELECT * FROM " + sparkName() + " VERSION AS OF " + to;
    String expected;
    if (from == null) {
      expected = "SELECT *, 1L AS weight FROM (" + newer + ")";
    } else {
      String older = "SELECT * FROM " + sparkName() + " VERSION AS OF " + from;
      expected =
          "SELECT *, 1L AS weight FROM ("
              + newer
              + " EXCEPT ALL "
              + older
              + ") UNION ALL SELECT *, -1L AS weight FROM ("
              + older
              + " EXCEPT ALL "
              + newer
              + ")";
    }
    List<Row> zset = delta.zset().collectAsList();
    assertThat(zset).allSatisfy(row -> assertThat(row.getLong(row.size() - 1)).isNotZero());
    assertThat(weights(delta.zset())).hasSize(zset.size()).isEqualTo(weights(spark.sql(expected)));
  }

  /** Sums the weights (last column) per row of {@code weighted}. */
  private static Map<List<Object>, Long> weights(Dataset<Row> weighted) {
    Map<List<Object>, Long> weights = new HashMap<>();
    for (Row row : weighted.collectAsList()) {
      weights.merge(values(row, row.size() - 1), row.getLong(row.size() - 1), Long::sum);
    }
    return weights;
  }

  private static List<Object> values(Row row, int columns) {
    List<Object> values = new ArrayList<>();
    for (int i = 0; i < columns; i++) {
      values.add(row.get(i));
    }
    return values;
  }

  private static List<Object> nullableList(Object... values) {
    List<Object> list = new ArrayList<>();
    for (Object value : values) {
      list.add(value);
    }
    return list;
  }
}
