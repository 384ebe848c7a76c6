package io.floe.spark.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.mv.MvTestSupport;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Automatic compaction of a storage table after the refreshes that gathered its small and delete files. */
class StorageCompactionTest extends MvTestSupport {
  @Override
  protected String prefix() {
    return "compaction";
  }

  /** Table {@code src} (merge-on-read) with ids 1..{@code rows} and v = id. */
  private void source(int rows) {
    sql("CREATE TABLE src (id INT, v INT) USING iceberg TBLPROPERTIES ('format-version'='2',"
        + " 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')");
    sql("INSERT INTO src SELECT CAST(id + 1 AS INT), CAST(id + 1 AS INT) FROM range(" + rows + ")");
  }

  /** One small change of {@code src}: an insert, an update and a delete. */
  private void change(int step) {
    sql("INSERT INTO src VALUES (" + (100_000 + step) + ", " + step + ")");
    sql("UPDATE src SET v = v + 1 WHERE id = " + step);
    sql("DELETE FROM src WHERE id = " + (500 + step));
  }

  /** The refresh type the REFRESH statement returns. */
  private String refresh(String mv) {
    return sql("REFRESH MATERIALIZED VIEW " + mv).get(0).getString(1);
  }

  private long liveFiles(String table, int content) {
    return count("SELECT * FROM lake." + ns + "." + table + ".files WHERE content = " + content);
  }

  private List<String> liveDataFilePaths(String table) {
    return sql("SELECT file_path FROM lake." + ns + "." + table + ".files WHERE content = 0").stream()
        .map(r -> r.getString(0)).toList();
  }

  /** The snapshots of the storage's main history that an automatic compaction committed. */
  private long compactions(String mv) {
    return count("SELECT s.* FROM lake." + ns + "." + mv + "__storage.snapshots s"
        + " JOIN lake." + ns + "." + mv + "__storage.history h ON s.snapshot_id = h.snapshot_id"
        + " WHERE h.is_current_ancestor AND s.operation = 'replace' AND s.summary['" + StorageCompaction.SUMMARY_PROPERTY + "'] IS NOT NULL");
  }

  @Test
  void smallAndDeleteFilesAreCompactedAndTheViewAndItsReaderStayIncrementalAndRight() {
    source(2000);
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('" + StorageCompaction.SMALL_FILES + "' = '4') AS"
        + " SELECT id, v * 2 AS w FROM src WHERE v % 7 <> 0");
    sql("CREATE MATERIALIZED VIEW b AS SELECT w % 10 AS k, count(*) AS n, sum(w) AS s FROM a GROUP BY w % 10");
    long mostDataFiles = 0;
    for (int step = 1; step <= 6; step++) {
      change(step);
      assertThat(refresh("a")).as("refresh of a, step %d", step).isEqualTo("INCREMENTAL");
      assertThat(refresh("b")).as("refresh of b, step %d", step).isEqualTo("INCREMENTAL");
      mostDataFiles = Math.max(mostDataFiles, liveFiles("a__storage", 0));
      assertSameRows("SELECT * FROM a", "SELECT id, v * 2 AS w FROM src WHERE v % 7 <> 0", count("SELECT * FROM src WHERE v % 7 <> 0"));
      assertSameRows("SELECT * FROM b", "SELECT w % 10 AS k, count(*) AS n, sum(w) AS s FROM a GROUP BY w % 10", 5);
    }
    // Every refresh adds a small data file and a delete file; a compaction follows the refresh
    // that brings the small files to 4, so there are never more after a refresh.
    assertThat(compactions("a")).isGreaterThanOrEqualTo(2);
    assertThat(mostDataFiles).isLessThan(4);
    // The replaced files' deletes went with them.
    assertThat(liveFiles("a__storage", 1)).isLessThanOrEqualTo(2);
    assertThat(freshness("a")).startsWith("FRESH");
    assertThat(freshness("b")).startsWith("FRESH");
    // DESCRIBE shows the storage's files and the last compaction.
    assertThat(describe("a").get("Storage Files")).isEqualTo(liveFiles("a__storage", 0) + " data files, " + liveFiles("a__storage", 1) + " delete files");
    assertThat(describe("a").get("Last Compaction")).matches("\\d{4}-\\d{2}-\\d{2} .* \\((data|delete) files\\)");
  }

  @Test
  void aLargeFileWithFewDeletesIsLeftAsItIs() {
    source(5000);
    // Files under 4,000 bytes are small: the refreshes' files, not the first refresh's 5,000 rows.
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('" + StorageCompaction.SMALL_FILES + "' = '3', '"
        + StorageCompaction.SMALL_FILE_BYTES + "' = '4000') AS SELECT id, v FROM src");
    List<String> first = liveDataFilePaths("a__storage");
    assertThat(first).hasSize(1);
    for (int step = 1; step <= 5; step++) {
      change(step);
      assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    }
    assertThat(compactions("a")).isPositive();
    assertThat(liveDataFilePaths("a__storage")).contains(first.get(0)).hasSizeLessThan(4);
    assertSameRows("SELECT * FROM a", "SELECT id, v FROM src", 5000);
  }

  @Test
  void compactionCanBeTurnedOff() {
    source(100);
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('" + StorageCompaction.ENABLED + "' = 'false', '"
        + StorageCompaction.SMALL_FILES + "' = '2', '" + StorageCompaction.DELETE_FILES + "' = '1') AS SELECT id, v FROM src");
    for (int step = 1; step <= 4; step++) {
      change(step);
      assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    }
    assertThat(compactions("a")).isZero();
    assertThat(liveFiles("a__storage", 0)).isEqualTo(5);
    assertThat(describe("a").get("Last Compaction")).isEqualTo("none (" + StorageCompaction.ENABLED + " = false)");
  }

  @Test
  void oneDeleteFilePerDataFileIsWhatWritersKeepAndMakesNoCompactionDue() {
    source(100);
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('" + StorageCompaction.DELETE_FILES + "' = '1', '"
        + StorageCompaction.SMALL_FILES + "' = '100') AS SELECT id, v FROM src");
    for (int step = 1; step <= 4; step++) {
      change(step);
      assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    }
    // Four refreshes deleted from the first data file; its one delete file holds them all.
    assertThat(liveFiles("a__storage", 1)).isPositive();
    assertThat(StorageCompaction.due(table("a__storage"))).isEmpty();
    assertThat(compactions("a")).isZero();
    assertSameRows("SELECT * FROM a", "SELECT id, v FROM src", 104);
  }

  @Test
  void severalDeleteFilesPerDataFileAreRewrittenIntoOne() {
    source(100);
    // Partition-scoped delete files (format 2; format 3 keeps deletion vectors) are not merged by
    // the writer: each refresh adds one that every data file before it applies. No file is small,
    // so the data files stay as they are.
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('format-version' = '2', '" + StorageCompaction.ENABLED + "' = 'false', '"
        + StorageCompaction.DELETE_FILES + "' = '2', '" + StorageCompaction.SMALL_FILE_BYTES + "' = '1',"
        + " 'write.delete.granularity' = 'partition') AS SELECT id, v FROM src");
    for (int step = 1; step <= 3; step++) {
      change(step);
      assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    }
    assertThat(liveFiles("a__storage", 1)).isEqualTo(3);
    assertThat(StorageCompaction.due(table("a__storage"))).isEmpty();
    sql("ALTER MATERIALIZED VIEW a UNSET TBLPROPERTIES ('" + StorageCompaction.ENABLED + "')");
    assertThat(StorageCompaction.due(table("a__storage"))).hasValueSatisfying(why -> assertThat(why)
        .matches("\\d+ delete files beyond one per data file \\(" + StorageCompaction.DELETE_FILES.replace(".", "\\.") + " = 2\\)"));
    change(4);
    assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    assertThat(compactions("a")).isPositive();
    assertThat(StorageCompaction.due(table("a__storage"))).isEmpty();
    assertThat(describe("a").get("Last Compaction")).endsWith("(delete files)");
    assertSameRows("SELECT * FROM a", "SELECT id, v FROM src", 104);
  }

  @Test
  void aMostlyDeletedDataFileIsRewrittenAndItsDeleteFileGoesWithIt() {
    source(10);
    // No file is small here: a small file's deletes are dropped when the small files are packed.
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('" + StorageCompaction.ENABLED + "' = 'false', '"
        + StorageCompaction.SMALL_FILE_BYTES + "' = '1') AS SELECT id, v FROM src");
    List<String> first = liveDataFilePaths("a__storage");
    sql("DELETE FROM src WHERE id <= 4");
    assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    assertThat(StorageCompaction.due(table("a__storage"))).isEmpty();
    // An MV's TBLPROPERTIES are its storage table's, so ALTER MATERIALIZED VIEW reaches the compaction.
    sql("ALTER MATERIALIZED VIEW a UNSET TBLPROPERTIES ('" + StorageCompaction.ENABLED + "')");
    assertThat(StorageCompaction.due(table("a__storage")))
        .hasValueSatisfying(why -> assertThat(why).isEqualTo("1 data files with 30% or more of their rows deleted"));
    sql("INSERT INTO src VALUES (11, 11)");
    assertThat(refresh("a")).isEqualTo("INCREMENTAL");
    assertThat(compactions("a")).isPositive();
    assertThat(liveDataFilePaths("a__storage")).doesNotContainAnyElementsOf(first);
    assertThat(liveFiles("a__storage", 1)).isZero();
    assertThat(StorageCompaction.due(table("a__storage"))).isEmpty();
    assertSameRows("SELECT * FROM a", "SELECT id, v FROM src", 7);
  }

  @Test
  void aDataFileWhoseRowsAreAllDeletedIsDroppedWithoutReadingOrWritingData() {
    source(10);
    // No file is small here, so only the wholly deleted file can make a compaction due.
    sql("CREATE MATERIALIZED VIEW g TBLPROPERTIES ('" + StorageCompaction.SMALL_FILE_BYTES + "' = '1')"
        + " AS SELECT v % 2 AS parity, COUNT(*) AS n, SUM(id) AS total FROM src GROUP BY v % 2");
    sql("CREATE MATERIALIZED VIEW r AS SELECT parity, n FROM g WHERE n > 5");
    List<String> first = liveDataFilePaths("g__storage");
    // Both groups change: the refresh rewrites both stored rows, and the file that held them keeps none.
    sql("INSERT INTO src VALUES (11, 11), (12, 12)");
    assertThat(refresh("g")).isEqualTo("INCREMENTAL");

    assertThat(compactions("g")).isEqualTo(1);
    Map<String, String> summary = table("g__storage").currentSnapshot().summary();
    assertThat(summary)
        .containsEntry(StorageCompaction.SUMMARY_PROPERTY, "wholly deleted data files")
        .containsEntry("deleted-data-files", "1")
        .doesNotContainKey("added-data-files")
        .doesNotContainKey("added-delete-files");
    assertThat(table("g__storage").currentSnapshot().operation()).isEqualTo("replace");
    assertThat(liveDataFilePaths("g__storage")).hasSize(1).doesNotContainAnyElementsOf(first);
    assertThat(liveFiles("g__storage", 1)).isZero();
    assertThat(StorageCompaction.due(table("g__storage"))).isEmpty();
    assertThat(describe("g").get("Last Compaction")).endsWith("(wholly deleted data files)");
    assertSameRows("SELECT * FROM g", "SELECT v % 2, COUNT(*), SUM(id) FROM src GROUP BY v % 2", 2);
    // The dropped file changed no row: the view reading g follows it incrementally.
    assertThat(refresh("r")).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM r", "SELECT v % 2, COUNT(*) FROM src GROUP BY v % 2 HAVING COUNT(*) > 5", 2);
  }

  @Test
  void aCompactionThatLostARaceIsToldFromOtherFailures() {
    assertThat(StorageCompaction.lostARace(
        new RuntimeException("Cannot commit rewrite", new ValidationException("Cannot commit, found new position delete"))))
        .isTrue();
    assertThat(StorageCompaction.lostARace(new CommitFailedException("Table metadata moved"))).isTrue();
    assertThat(StorageCompaction.lostARace(new RuntimeException("No space left on device"))).isFalse();
  }

  /** Appends {@code count} data files of {@code bytes} each to {@code table}, in metadata only. */
  private static void appendFiles(Table table, int count, long bytes) {
    AppendFiles append = table.newAppend();
    for (int i = 0; i < count; i++) {
      append.appendFile(DataFiles.builder(table.spec())
          .withPath(table.location() + "/data/f-" + bytes + "-" + i + "-" + System.nanoTime() + ".parquet")
          .withFileSizeInBytes(bytes)
          .withRecordCount(1000)
          .withFormat(FileFormat.PARQUET)
          .build());
    }
    append.commit();
  }

  @Test
  void aFullRefreshsFilesAreTheViewsLayoutNotSmallFiles() {
    Table table = iceberg().createTable(id("files"), new Schema(Types.NestedField.optional(1, "id", Types.LongType.get())));
    long mib = 1024 * 1024;
    // What a full refresh of a large view writes: many files of similar size, all under 32 MiB.
    appendFiles(table, 41, 15 * mib);
    assertThat(StorageCompaction.smallFileBytes(table)).isEqualTo(15 * mib / 4);
    assertThat(StorageCompaction.due(table)).isEmpty();
    // Refreshes' files are far smaller: 15 of them are not enough yet, 16 are.
    appendFiles(table, 15, mib / 2);
    assertThat(StorageCompaction.due(table)).isEmpty();
    appendFiles(table, 1, mib / 2);
    assertThat(StorageCompaction.due(table)).hasValueSatisfying(why -> assertThat(why).startsWith("16 data files under "));
    // A small view: every file is small, the floor of 1 MiB applies.
    Table tiny = iceberg().createTable(id("tiny"), new Schema(Types.NestedField.optional(1, "id", Types.LongType.get())));
    appendFiles(tiny, 16, 5000);
    assertThat(StorageCompaction.smallFileBytes(tiny)).isEqualTo(mib);
    assertThat(StorageCompaction.due(tiny)).hasValueSatisfying(why -> assertThat(why).isEqualTo(
        "16 data files under " + mib + " bytes (" + StorageCompaction.SMALL_FILES + " = 16)"));
  }
}
