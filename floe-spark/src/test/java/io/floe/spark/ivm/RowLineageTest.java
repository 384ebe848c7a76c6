package io.floe.spark.ivm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SameRows;
import io.floe.spark.SharedSpark;
import java.util.Arrays;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Views over a format 3 table keep their rows keyed by the source rows' ids ({@link RowLineage}). */
class RowLineageTest {
  private static final String COW = "'format-version'='3'";
  private static final String MOR =
      "'format-version'='3', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'";

  private SparkSession spark;

  private Row refresh(String mv) {
    return spark.sql("REFRESH MATERIALIZED VIEW " + mv).first();
  }

  private void assertIncremental(Row result) {
    assertThat(result.getString(1)).as("refresh of %s: %s", result.getString(0), result.getString(2)).isEqualTo("INCREMENTAL");
  }

  private void assertMatches(String mv, String query) {
    SameRows.assertSameRows(mv, spark.sql("SELECT * FROM " + mv), spark.sql(query));
  }

  /** The stored rows' source row ids, NULL where a row is not keyed, from the storage table. */
  private long keyedRows(String mv) {
    return spark.sql("SELECT count(" + RowLineage.COLUMN + ") FROM " + mv + "__storage").first().getLong(0);
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void rowsKeyedByTheirSourceRowsIdsFollowInsertsUpdatesDeletesAndCompactions(String properties) {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("lineage");
    spark.sql("CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.00), (2, 'a', 2.00), (3, 'b', NULL), (4, 'b', 4.00), (4, 'b', 4.00)");
    String linear = "SELECT id, upper(k) AS k, v * 2 AS v2 FROM t WHERE id > 1";
    String all = "SELECT * FROM t WHERE k <> 'z'";
    spark.sql("CREATE MATERIALIZED VIEW lin AS " + linear);
    spark.sql("CREATE MATERIALIZED VIEW everything AS " + all);
    spark.sql("CREATE MATERIALIZED VIEW gold AS SELECT k, COUNT(*) AS n, SUM(v2) AS total FROM lin GROUP BY k");
    // One stored row per source row, each keyed, the two equal rows (4, 'b') included.
    assertThat(keyedRows("lin")).isEqualTo(4);
    assertThat(spark.sql("SELECT * FROM lin").columns()).containsExactly("id", "k", "v2");
    assertThat(spark.sql("SELECT * FROM everything").columns()).containsExactly("id", "k", "v");
    assertThat(spark.sql("EXPLAIN REFRESH MATERIALIZED VIEW lin").collectAsList())
        .filteredOn(r -> r.getString(0).equals("storage layout"))
        .singleElement()
        .satisfies(r -> assertThat(r.getString(1)).isEqualTo("ROWS, a row per source row, matched by the source row's id (row lineage)"));

    spark.sql("INSERT INTO t VALUES (5, 'c', 5.00), (6, 'a', NULL)");
    spark.sql("UPDATE t SET v = 10.00 WHERE id = 2");
    spark.sql("UPDATE t SET id = 0 WHERE id = 3");
    spark.sql("DELETE FROM t WHERE id = 4");
    for (String mv : new String[] {"lin", "everything", "gold"}) {
      assertIncremental(refresh(mv));
    }
    assertMatches("lin", linear);
    assertMatches("everything", all);
    assertMatches("gold", "SELECT k, COUNT(*) AS n, SUM(v2) AS total FROM (" + linear + ") GROUP BY k");
    assertThat(keyedRows("lin")).isEqualTo(spark.sql(linear).count());
    // Gold reads lin's storage files, not a change feed, which lin's refreshes could not fill.
    assertThat(spark.sql("SELECT name FROM lake." + ns + ".lin__storage.refs").collectAsList())
        .extracting(r -> r.getString(0))
        .doesNotContain(io.floe.spark.capture.ChangeFeed.BRANCH);

    // One deleted row: one stored row removed, none written.
    spark.sql("DELETE FROM t WHERE id = 5");
    Row deleted = refresh("lin");
    assertIncremental(deleted);
    assertThat(deleted.getLong(4)).as("rows written").isZero();
    assertThat(deleted.getLong(5)).as("rows removed").isEqualTo(1);
    // One updated row: its stored row replaced.
    spark.sql("UPDATE t SET k = 'q' WHERE id = 6");
    Row updated = refresh("lin");
    assertIncremental(updated);
    assertThat(updated.getLong(4)).as("rows written").isEqualTo(1);
    assertThat(updated.getLong(5)).as("rows removed").isEqualTo(1);
    assertMatches("lin", linear);

    // A compaction keeps the rows' ids: nothing to write, and later changes still find their rows.
    spark.sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".t', options => map('rewrite-all','true'))");
    Row compacted = refresh("lin");
    assertIncremental(compacted);
    assertThat(compacted.getLong(4) + compacted.getLong(5)).isZero();
    spark.sql("MERGE INTO t USING (SELECT 2 AS id, 'm' AS k UNION ALL SELECT 7, 'n') s ON t.id = s.id"
        + " WHEN MATCHED THEN UPDATE SET k = s.k WHEN NOT MATCHED THEN INSERT (id, k, v) VALUES (s.id, s.k, 7.00)");
    spark.sql("DELETE FROM t WHERE id = 1");
    for (String mv : new String[] {"lin", "everything", "gold"}) {
      assertIncremental(refresh(mv));
    }
    assertMatches("lin", linear);
    assertMatches("everything", all);
    assertMatches("gold", "SELECT k, COUNT(*) AS n, SUM(v2) AS total FROM (" + linear + ") GROUP BY k");
    assertThat(refresh("lin").getString(1)).isEqualTo("NO_CHANGE");
  }

  @Test
  void anUpdatedRowThatAConstraintNowDropsLeavesTheView() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("lineagex");
    spark.sql("CREATE TABLE o (id INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO o VALUES (1, 10.00), (2, NULL), (3, 5.00)");
    spark.sql("CREATE MATERIALIZED VIEW kept (id, amount, CONSTRAINT has_amount EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW)"
        + " AS SELECT id, amount FROM o");
    assertThat(keyedRows("kept")).isEqualTo(2);

    spark.sql("UPDATE o SET amount = NULL WHERE id = 1");
    spark.sql("UPDATE o SET amount = 2.00 WHERE id = 2");
    Row refreshed = refresh("kept");
    assertIncremental(refreshed);
    assertThat(refreshed.getString(12)).isEqualTo("has_amount: 1 passed, 1 failed (DROP ROW)");
    assertMatches("kept", "SELECT id, amount FROM o WHERE amount IS NOT NULL");
    assertThat(keyedRows("kept")).isEqualTo(2);
  }

  @Test
  void aTableUpgradedToFormatThreeIsKeyedOnceEveryRowHasAnId() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("lineageup");
    spark.sql("CREATE TABLE u (id INT, k STRING) USING iceberg TBLPROPERTIES ('format-version'='2')");
    spark.sql("INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    String linear = "SELECT id, k FROM u WHERE id > 1";
    spark.sql("CREATE MATERIALIZED VIEW up AS " + linear);
    assertThat(Arrays.asList(spark.table("up__storage").columns())).doesNotContain(RowLineage.COLUMN);

    // Upgraded, the table's existing rows have no ids until its next commit assigns them.
    spark.sql("ALTER TABLE u SET TBLPROPERTIES ('format-version'='3')");
    assertThat(spark.sql("REFRESH MATERIALIZED VIEW up FULL").first().getString(1)).isEqualTo("FULL");
    assertThat(Arrays.asList(spark.table("up__storage").columns())).doesNotContain(RowLineage.COLUMN);
    spark.sql("INSERT INTO u VALUES (4, 'd')");
    assertIncremental(refresh("up"));
    assertMatches("up", linear);
    // The next full refresh keys every row, and the refreshes after it match rows by id.
    assertThat(spark.sql("REFRESH MATERIALIZED VIEW up FULL").first().getString(1)).isEqualTo("FULL");
    assertThat(keyedRows("up")).isEqualTo(3);
    spark.sql("DELETE FROM u WHERE id IN (2, 4)");
    assertIncremental(refresh("up"));
    assertThat(keyedRows("up")).isEqualTo(1);
    assertMatches("up", linear);
  }
}
