package io.floe.spark.ivm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spark.SameRows;
import io.floe.spark.ScanReports;
import io.floe.spark.SharedSpark;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IncrementalRefreshTest {
  private static final String COW = "'format-version'='2'";
  private static final String MOR =
      "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'";

  private SparkSession spark;

  private void assertMatches(String mv, String query) {
    // Doubles are compared rounded: sums maintained by counters add in another order.
    SameRows.assertSameRows(mv, spark.sql("SELECT * FROM " + mv), spark.sql(query));
  }

  private Row refresh(String mv) {
    return spark.sql("REFRESH MATERIALIZED VIEW " + mv).first();
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void linearAndAggregateViewsFollowInsertsUpdatesAndDeletesIncrementally(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivm");
    spark.sql("CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2), d STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.00, 'x'), (2, 'a', 2.00, 'y'), (3, 'b', NULL, 'x'), (4, 'b', 4.00, 'x'), (4, 'b', 4.00, 'x')");
    String linear = "SELECT id, upper(k) AS k, v * 2 AS v2 FROM t WHERE id > 1";
    String grouped = "SELECT k, COUNT(*) AS n, SUM(v) AS total, COUNT(v) AS nv, MAX(v) AS top, COUNT(DISTINCT d) AS ds FROM t GROUP BY k";
    String counters = "SELECT k, COUNT(*) AS n, SUM(v) AS total FROM t GROUP BY k";
    spark.sql("CREATE MATERIALIZED VIEW lin AS " + linear);
    spark.sql("CREATE MATERIALIZED VIEW grp AS " + grouped);
    spark.sql("CREATE MATERIALIZED VIEW cnt AS " + counters);
    spark.sql("CREATE MATERIALIZED VIEW gold AS SELECT k, COUNT(*) AS n FROM lin GROUP BY k");
    String distinct = "SELECT DISTINCT k, upper(d) FROM t";
    spark.sql("CREATE MATERIALIZED VIEW dst AS " + distinct);

    spark.sql("INSERT INTO t VALUES (5, 'c', 5.00, 'z'), (6, 'a', NULL, 'x')");
    spark.sql("UPDATE t SET v = 10.00 WHERE id = 2");
    spark.sql("DELETE FROM t WHERE id = 4");
    spark.sql("DELETE FROM t WHERE k = 'c'");
    for (String mv : new String[] {"lin", "grp", "cnt", "gold", "dst"}) {
      Row result = refresh(mv);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertMatches("lin", linear);
    assertMatches("grp", grouped);
    assertMatches("cnt", counters);
    assertMatches("gold", "SELECT k, COUNT(*) AS n FROM (" + linear + ") GROUP BY k");
    assertMatches("dst", distinct);

    // A group that empties out is deleted, and a SUM whose inputs are all NULL again is NULL.
    spark.sql("DELETE FROM t WHERE k = 'a' AND v IS NOT NULL");
    assertThat(refresh("cnt").getString(1)).isEqualTo("INCREMENTAL");
    assertMatches("cnt", counters);
    spark.sql("DELETE FROM t WHERE k = 'b'");
    assertThat(refresh("cnt").getString(1)).isEqualTo("INCREMENTAL");
    assertMatches("cnt", counters);
    assertThat(spark.sql("SELECT * FROM cnt WHERE k = 'b'").count()).isZero();

    // Compaction changes no row, costs no recompute and still advances the recorded snapshot.
    String ns = spark.sql("SELECT current_database()").first().getString(0);
    spark.sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".t', options => map('rewrite-all','true'))");
    Row compacted = refresh("lin");
    assertThat(compacted.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(compacted.getLong(4)).isZero();
    assertMatches("lin", linear);
    assertThat(refresh("lin").getString(1)).isEqualTo("NO_CHANGE");

    // Appends around a compaction read the appended rows only, not the files the compaction wrote.
    spark.sql("INSERT INTO t VALUES (7, 'd', 7.00, 'x')");
    spark.sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".t', options => map('rewrite-all','true'))");
    spark.sql("INSERT INTO t VALUES (8, 'd', 8.00, 'y')");
    assertThat(spark.sql("EXPLAIN REFRESH MATERIALIZED VIEW lin").collectAsList())
        .filteredOn(r -> r.getString(0).startsWith("source "))
        .singleElement()
        .satisfies(r -> assertThat(r.getString(1)).contains("(append, replace, append)").contains("run by run"));
    Row around = refresh("lin");
    assertThat(around.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(around.getLong(3)).as("rows read").isEqualTo(2);
    assertMatches("lin", linear);
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void joinsAndUnionAllFollowChangesToEitherSide(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmjoin");
    spark.sql("CREATE TABLE orders (id INT, cust INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE customers (cust INT, region STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO orders VALUES (1, 10, 5.00), (2, 10, 7.00), (3, 20, 1.00), (4, NULL, 2.00)");
    spark.sql("INSERT INTO customers VALUES (10, 'east'), (20, 'west'), (30, 'west')");
    String joined = "SELECT o.id, o.amount, c.region FROM orders o JOIN customers c ON o.cust = c.cust";
    String byRegion =
        "SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o JOIN customers c ON o.cust = c.cust GROUP BY c.region";
    String unioned = "SELECT cust AS k FROM orders UNION ALL SELECT cust AS k FROM customers";
    spark.sql("CREATE MATERIALIZED VIEW joined AS " + joined);
    spark.sql("CREATE MATERIALIZED VIEW by_region AS " + byRegion);
    spark.sql("CREATE MATERIALIZED VIEW unioned AS " + unioned);

    spark.sql("INSERT INTO orders VALUES (5, 30, 3.00), (6, 20, 4.00)");
    spark.sql("UPDATE customers SET region = 'north' WHERE cust = 10");
    spark.sql("DELETE FROM customers WHERE cust = 20");
    spark.sql("INSERT INTO customers VALUES (40, 'south'), (30, 'west')");
    for (String mv : new String[] {"joined", "by_region", "unioned"}) {
      Row result = refresh(mv);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertMatches("joined", joined);
    assertMatches("by_region", byRegion);
    assertMatches("unioned", unioned);

    spark.sql("DELETE FROM orders WHERE cust = 30");
    spark.sql("DELETE FROM customers WHERE region = 'west'");
    for (String mv : new String[] {"joined", "by_region", "unioned"}) {
      assertThat(refresh(mv).getString(1)).isEqualTo("INCREMENTAL");
    }
    assertMatches("joined", joined);
    assertMatches("by_region", byRegion);
    assertMatches("unioned", unioned);
  }

  private static final String MOR_V3 =
      "'format-version'='3', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'";

  /**
   * An MV over a wide MV of plain rows reads the upstream's change in the view columns it needs
   * alone, with the upstream's row count: its other columns are never decoded, and a change of
   * them only cancels out. Over format 3 sources the upstream's rows are keyed by row lineage and
   * its change is read from its storage files; over format 2 it is read from its change feed.
   */
  @ParameterizedTest
  @ValueSource(strings = {MOR, MOR_V3})
  void aChangeOfAnMvIsReadInTheViewColumnsItsReaderNeeds(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmmvcols");
    spark.sql("CREATE TABLE b (id INT, k STRING, v INT, note STRING, flag BOOLEAN) USING iceberg TBLPROPERTIES ("
        + properties + ")");
    spark.sql("INSERT INTO b VALUES (1, 'a', 10, 'n1', true), (2, 'a', 20, 'n2', false), (3, 'b', 30, 'n3', NULL),"
        + " (4, 'b', 30, 'n3', NULL), (5, NULL, 50, 'n5', true)");
    String wide = "SELECT id, k, v, upper(note) AS note, flag FROM b WHERE id > 0";
    spark.sql("CREATE MATERIALIZED VIEW wide AS " + wide);
    String grouped = "SELECT k, SUM(v) AS total, COUNT(*) AS n FROM wide GROUP BY k";
    String narrow = "SELECT v, k FROM wide WHERE k = 'b'";
    String counted = "SELECT COUNT(*) AS n FROM wide";
    String[][] readers = {{"grouped", grouped}, {"narrow", narrow}, {"counted", counted}};
    for (String[] view : readers) {
      spark.sql("CREATE MATERIALIZED VIEW " + view[0] + " AS " + view[1]);
    }
    boolean lineage = properties.equals(MOR_V3);

    // Only columns no reader needs change: the readers' refreshes read the change and cancel it out.
    spark.sql("UPDATE b SET note = 'changed', flag = NOT flag WHERE id IN (1, 3)");
    assertRefreshedIncrementally("wide", wide);
    if (lineage) {
      assertThat(explainedSource("grouped")).endsWith("in 2 of its 5 view columns (k, v) and its hidden row count");
      assertThat(explainedSource("counted")).endsWith(
          "in its hidden row count alone (the view reads none of its columns; rows are counted)");
      for (String[] view : readers) {
        assertRefreshedWithoutWriting(view[0], view[1]);
      }
    } else {
      assertThat(explainedSource("grouped")).contains("change feed");
      for (String[] view : readers) {
        assertRefreshedIncrementally(view[0], view[1]);
      }
    }

    // Inserts, updates of needed columns, duplicates and deletes reach every reader.
    String[] steps = {
      "INSERT INTO b VALUES (6, 'b', 30, 'n6', false), (7, 'c', 70, 'n7', true)",
      "UPDATE b SET v = v + 1, note = 'again' WHERE id IN (2, 4)",
      "DELETE FROM b WHERE id IN (3, 5)",
      "MERGE INTO b USING (SELECT 6 AS id, 'a' AS k UNION ALL SELECT 8 AS id, 'b' AS k) s ON b.id = s.id"
          + " WHEN MATCHED THEN UPDATE SET k = s.k WHEN NOT MATCHED THEN INSERT (id, k, v, note, flag) VALUES (s.id, s.k, 30, 'm', NULL)",
    };
    for (String step : steps) {
      spark.sql(step);
      assertRefreshedIncrementally("wide", wide);
      for (String[] view : readers) {
        assertRefreshedIncrementally(view[0], view[1]);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void aChangeIsReadInTheColumnsTheViewDependsOnAlone(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmcols");
    spark.sql(
        "CREATE TABLE w (id INT, k STRING, v INT, note STRING, tags MAP<STRING, STRING>) USING iceberg TBLPROPERTIES ("
            + properties + ")");
    spark.sql("INSERT INTO w VALUES (1, 'a', 10, 'n1', map('x', '1')), (2, 'a', 20, 'n2', NULL), (3, 'b', 30, 'n3', NULL)");
    String narrow = "SELECT id, v * 2 AS v2 FROM w WHERE k = 'a'";
    String counted = "SELECT COUNT(*) AS n FROM w";
    String grouped = "SELECT k, SUM(v) AS total FROM w GROUP BY k";
    String unioned = "SELECT id, k FROM w UNION ALL SELECT id, k FROM w WHERE v > 15";
    String throughCte = "WITH kept AS (SELECT id, k, v FROM w WHERE v > 5) SELECT k, COUNT(*) AS n, SUM(v) AS total FROM kept GROUP BY k";
    String[][] views = {{"narrow", narrow}, {"counted", counted}, {"grouped", grouped}, {"unioned", unioned}, {"cte", throughCte}};
    for (String[] view : views) {
      spark.sql("CREATE MATERIALIZED VIEW " + view[0] + " AS " + view[1]);
    }
    // UNION ALL passes a later input's columns on by position, under the first input's names: the
    // columns of a table read whole there are needed though no operator names them.
    spark.sql("CREATE TABLE w_more (id INT, k STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO w_more VALUES (7, 'x'), (8, 'y')");
    String wholeTable = "SELECT id, k FROM w WHERE v > 15 UNION ALL TABLE w_more";
    spark.sql("CREATE MATERIALIZED VIEW whole_table AS " + wholeTable);

    // Columns no view reads change: their change cancels out, so the refreshes write nothing, and
    // the map column, which a change could not be consolidated over, is never read. That holds
    // through UNION ALL and common table expressions too.
    spark.sql("UPDATE w SET note = 'changed', tags = map('y', '2') WHERE id IN (1, 3)");
    // EXPLAIN REFRESH names the columns each source's change is read in.
    assertThat(explainedSource("cte")).endsWith("read the changed data files only, in 3 of its 5 columns (id, k, v)");
    assertThat(explainedSource("counted")).contains("in its first column alone");
    for (String[] view : views) {
      assertRefreshedWithoutWriting(view[0], view[1]);
    }
    spark.sql("UPDATE w_more SET k = 'z' WHERE id = 8");
    Row whole = refresh("whole_table");
    assertThat(whole.getString(1)).as(whole.getString(2)).isEqualTo("INCREMENTAL");
    assertThat(whole.getLong(4)).as("rows written in whole_table").isEqualTo(1);
    assertMatches("whole_table", wholeTable);

    spark.sql("INSERT INTO w VALUES (4, 'a', 40, 'n4', NULL), (5, 'c', 50, 'n5', map('z', '3'))");
    spark.sql("UPDATE w SET v = v + 1, note = 'again' WHERE id = 2");
    spark.sql("DELETE FROM w WHERE id = 3");
    for (String[] view : views) {
      assertRefreshedIncrementally(view[0], view[1]);
    }
  }

  private String explainedSource(String mv) {
    return ExplainedRefresh.detail(spark, mv, "source ");
  }

  private String explainStrategy(String mv) {
    return ExplainedRefresh.detail(spark, mv, "strategy");
  }

  /** An incremental refresh of {@code mv} that writes and removes no row, after which it still matches {@code query}. */
  private void assertRefreshedWithoutWriting(String mv, String query) {
    Row result = refresh(mv);
    assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    assertThat(result.getLong(4) + result.getLong(5)).as("rows written and removed in %s", mv).isZero();
    assertMatches(mv, query);
  }

  private void assertRefreshedIncrementally(String mv, String query) {
    Row result = refresh(mv);
    assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    assertMatches(mv, query);
  }

  /** Refreshes each of {@code views} (name, definition), asserting it was incremental and is right. */
  private void assertEachRefreshedIncrementally(String[][] views) {
    for (String[] mv : views) {
      assertRefreshedIncrementally(mv[0], mv[1]);
    }
  }

  /**
   * Creates each of {@code views} (name, definition) with REFRESH POLICY INCREMENTAL, which refuses
   * a definition that cannot be incremental, and checks its first rows.
   */
  private void createIncremental(String[][] views) {
    for (String[] mv : views) {
      spark.sql("CREATE MATERIALIZED VIEW " + mv[0] + " REFRESH POLICY INCREMENTAL AS " + mv[1]);
      assertMatches(mv[0], mv[1]);
    }
  }

  /** {@code views} (name, definition) but the one named {@code name}. */
  private static String[][] without(String[][] views, String name) {
    return java.util.Arrays.stream(views).filter(mv -> !mv[0].equals(name)).toArray(String[][]::new);
  }

  private void assertRefreshedInFull(String mv, String query, String reason) {
    Row result = refresh(mv);
    assertThat(result.getString(1)).isEqualTo("FULL");
    assertThat(result.getString(2)).contains(reason);
    assertMatches(mv, query);
  }

  /**
   * EXPLAIN REFRESH predicts the refreshes that metadata decides: a schema change of columns the view
   * does not read (the refresh records it, writing no rows), a change read in a MAP column (full),
   * and says when a computed key may make it full; a definition a rename broke is reported under
   * EXPLAIN's own action, naming the source's schema change.
   */
  @Test
  void explainRefreshPredictsSchemaOnlyChangesAndIncomparableColumns() {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmexplain");
    spark.sql("CREATE TABLE t (id INT, v INT, s STRING) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE tm (id INT, m MAP<STRING, INT>) USING iceberg");
    spark.sql("INSERT INTO t VALUES (1, 10, '1'), (2, 20, '2')");
    spark.sql("INSERT INTO tm VALUES (1, map('x', 1))");
    String plain = "SELECT id, v FROM t";
    String mapped = "SELECT id, m['x'] AS mx FROM tm";
    String ranked =
        "SELECT id, k, row_number() OVER (PARTITION BY CAST(s AS INT) ORDER BY id) AS rn"
            + " FROM (SELECT id, s, CAST(s AS INT) AS k FROM t WHERE s <> 'bad') q";
    spark.sql("CREATE MATERIALIZED VIEW plain AS " + plain);
    spark.sql("CREATE MATERIALIZED VIEW mapped AS " + mapped);
    spark.sql("CREATE MATERIALIZED VIEW ranked AS " + ranked);

    spark.sql("ALTER TABLE t ADD COLUMN w INT");
    assertThat(ExplainedRefresh.detail(spark, "plain", "source "))
        .endsWith("; schema 0 → 1, changed in columns the view does not read");
    assertThat(explainStrategy("plain"))
        .isEqualTo("INCREMENTAL: no source has new data; the refresh records the sources' new state and writes no rows");
    Row recorded = refresh("plain");
    assertThat(recorded.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(recorded.getLong(4) + recorded.getLong(5)).as("rows written and removed").isZero();
    assertThat(explainStrategy("plain")).startsWith("NO_CHANGE: ");

    spark.sql("INSERT INTO tm VALUES (2, map('x', 2))");
    String predicted = explainStrategy("mapped");
    Row mappedRefresh = refresh("mapped");
    assertThat(mappedRefresh.getString(1)).isEqualTo("FULL");
    assertThat(mappedRefresh.getString(2)).contains("column m of ").contains("tm").contains("is of type map");
    assertThat(predicted).isEqualTo("FULL: " + mappedRefresh.getString(2));
    assertMatches("mapped", mapped);

    // A row the window's filter leaves out, on which its partition expression fails.
    spark.sql("INSERT INTO t VALUES (3, 30, 'bad', NULL)");
    assertThat(explainStrategy("ranked"))
        .startsWith("INCREMENTAL: ")
        .contains("; FULL instead when the partition expression fails on a changed source row the definition may leave out");
    assertRefreshedInFull("ranked", ranked, "the partition expression of the view failed on a changed source row");

    spark.sql("ALTER TABLE t RENAME COLUMN v TO v2");
    assertThatThrownBy(() -> spark.sql("EXPLAIN REFRESH MATERIALIZED VIEW plain").collectAsList())
        .hasMessageStartingWith("Cannot explain the refresh of lake." + ns + ".plain: its definition no longer resolves"
            + " against its sources (" + ns + ".t schema changed (schema 1 → 2) since the last refresh): ")
        .hasMessageContaining("`v`");
    assertThatThrownBy(() -> refresh("plain"))
        .hasMessageStartingWith("Cannot refresh lake." + ns + ".plain: its definition no longer resolves");
  }

  /** Names are quoted wherever a refresh builds columns from them: a backtick is a character like any other. */
  @Test
  void aggregateColumnsNamedWithBackticksRefreshIncrementally() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmbacktick");
    spark.sql("CREATE TABLE bt (k STRING, v INT, w STRING) USING iceberg");
    spark.sql("INSERT INTO bt VALUES ('a', 1, 'x'), ('b', 2, 'y'), ('a', 3, 'y')");
    String[][] views = {
      {"extremes", "SELECT k AS `k``k`, min(v) AS `m``n`, max(v) AS `x`, sum(v) AS `s``t`, avg(v) AS `a``v` FROM bt GROUP BY k"},
      {"distinct_values", "SELECT k AS `k``k`, count(DISTINCT w) AS `d``w`, count(*) AS `n``n` FROM bt GROUP BY k"}
    };
    createIncremental(views);
    spark.sql("INSERT INTO bt VALUES ('a', 0, 'z'), ('c', 3, 'x')");
    spark.sql("DELETE FROM bt WHERE v = 2");
    assertEachRefreshedIncrementally(views);
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void minAndMaxFollowInsertsFromTheChangeAloneAndRecomputeOnlyGroupsThatMayHaveLostTheirExtreme(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmextremes");
    spark.sql("CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2), s STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.00, 'x'), (2, 'a', 5.00, 'y'), (3, 'a', 5.00, 'z'), (4, 'b', 2.00, NULL), (5, 'c', NULL, NULL)");
    String extremes = "SELECT k, COUNT(*) AS n, MIN(v) AS low, MAX(v) AS high, MAX(s) AS last_s FROM t GROUP BY k";
    spark.sql("CREATE MATERIALIZED VIEW ext REFRESH POLICY INCREMENTAL AS " + extremes);

    // Inserts only: the new extremes come from the stored ones and the change; no source is read.
    spark.sql("INSERT INTO t VALUES (6, 'a', 0.50, 'w'), (7, 'b', 9.00, 'q'), (8, 'd', 3.00, 'r'), (9, 'c', NULL, 's')");
    Row inserted = refresh("ext");
    assertThat(inserted.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(inserted.<Long>getAs("rows_read")).isEqualTo(4L);
    assertMatches("ext", extremes);

    // 'a' loses one of its two tied maxima and a value above its minimum, 'b' loses its maximum:
    // both are recomputed, and 'a' keeps 5.00.
    spark.sql("DELETE FROM t WHERE id IN (2, 7)");
    spark.sql("UPDATE t SET v = 4.00 WHERE id = 1");
    assertThat(explainStrategy("ext")).contains("recompute a group whose MIN or MAX may have been deleted");
    assertRefreshedIncrementally("ext", extremes);
    assertThat(spark.sql("SELECT high FROM ext WHERE k = 'a'").first().getDecimal(0)).isEqualByComparingTo("5.00");

    // A group whose values all turn NULL, and a group that empties out.
    spark.sql("UPDATE t SET v = NULL WHERE k = 'd'");
    spark.sql("DELETE FROM t WHERE k = 'c'");
    assertRefreshedIncrementally("ext", extremes);
    assertThat(spark.sql("SELECT * FROM ext WHERE k = 'c'").count()).isZero();
    assertThat(spark.sql("SELECT low FROM ext WHERE k = 'd'").first().isNullAt(0)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void selfJoinsTakeOneTermOfTheChangePerRead(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmself");
    spark.sql("CREATE TABLE t (id INT, k STRING, v INT, parent INT) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 10, NULL), (2, 'a', 20, 1), (3, 'b', 30, 1), (4, 'b', NULL, 3)");
    String tree = "SELECT c.id, c.v, p.id AS parent_id, p.v AS parent_v FROM t c JOIN t p ON c.parent = p.id";
    String pairs = "SELECT a.k, COUNT(*) AS pairs, SUM(b.v) AS total FROM t a JOIN t b ON a.k = b.k AND a.id <> b.id GROUP BY a.k";
    String both = "SELECT id, k FROM t WHERE v > 15 UNION ALL SELECT id, k FROM t WHERE k = 'a'";
    String keys = "SELECT DISTINCT a.k FROM t a JOIN t b ON a.parent = b.id";
    String twiceThroughCte = "WITH x AS (SELECT id, k FROM t) SELECT a.id, b.id AS other FROM x a JOIN x b ON a.k = b.k";
    spark.sql("CREATE MATERIALIZED VIEW tree REFRESH POLICY INCREMENTAL AS " + tree);
    spark.sql("CREATE MATERIALIZED VIEW pairs REFRESH POLICY INCREMENTAL AS " + pairs);
    spark.sql("CREATE MATERIALIZED VIEW both_ REFRESH POLICY INCREMENTAL AS " + both);
    spark.sql("CREATE MATERIALIZED VIEW keys REFRESH POLICY INCREMENTAL AS " + keys);
    spark.sql("CREATE MATERIALIZED VIEW twice AS " + twiceThroughCte);

    // New rows joining each other (the change joined with itself) and old rows, an update of a
    // parent seen through its children, and a deleted parent whose children lose their match.
    spark.sql("INSERT INTO t VALUES (5, 'c', 50, NULL), (6, 'c', 60, 5), (7, 'a', 70, 2)");
    spark.sql("UPDATE t SET v = 11 WHERE id = 1");
    spark.sql("DELETE FROM t WHERE id = 3");
    for (String[] mv : new String[][] {{"tree", tree}, {"pairs", pairs}, {"both_", both}, {"keys", keys}}) {
      assertRefreshedIncrementally(mv[0], mv[1]);
    }
    spark.sql("DELETE FROM t WHERE k = 'c'");
    spark.sql("UPDATE t SET k = 'b', parent = 7 WHERE id = 2");
    for (String[] mv : new String[][] {{"tree", tree}, {"pairs", pairs}, {"both_", both}, {"keys", keys}}) {
      assertRefreshedIncrementally(mv[0], mv[1]);
    }

    // A common table expression read twice reads its source twice from one reference.
    Row full = refresh("twice");
    assertThat(full.getString(1)).isEqualTo("FULL");
    assertThat(full.getString(2)).contains("self-join");
    assertMatches("twice", twiceThroughCte);
  }

  @org.junit.jupiter.api.Test
  void aChangeOfRecentRowsReadsOnlyTheStorageFilesHoldingThem() throws Exception {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmcluster");
    String zone = spark.conf().get("spark.sql.session.timeZone");
    // Bounds of timestamps are written as literals: they must mean the same in any session zone.
    spark.conf().set("spark.sql.session.timeZone", "America/Los_Angeles");
    // Spark's grammar reads a hyphenated key only backquoted; Floe's SET takes it as written.
    spark.sql("SET floe.storage.clustered-rows-per-file = 1000;");
    assertThat(spark.sql("SET floe.storage.clustered-rows-per-file").first().getString(1)).isEqualTo("1000");
    try {
      spark.sql("CREATE TABLE ev (id BIGINT, name STRING, at TIMESTAMP, amount DECIMAL(10,2), ratio DOUBLE) USING iceberg");
      spark.sql(
          "INSERT INTO ev SELECT /*+ REPARTITION(3) */ id, concat('n', id), timestamp_seconds(1700000000 + id * 60),"
              + " CAST(id % 100 AS DECIMAL(10,2)), id / 7.0D FROM range(1, 4001)");
      // Clustered by its first column, a timestamp; by_name by a string.
      String definition = "SELECT at, id, name, amount * 2 AS amount2, ratio FROM ev WHERE id % 10 <> 0";
      String byName = "SELECT name, id FROM ev";
      spark.sql("CREATE MATERIALIZED VIEW recent AS " + definition);
      spark.sql("CREATE MATERIALIZED VIEW by_name AS " + byName);
      // A full refresh writes the rows in ranges of the first column, 1000 source rows a file.
      assertThat(spark.sql("SELECT * FROM lake." + ns + ".recent__storage.files").count()).isEqualTo(4);

      // Late corrections to the newest rows and new rows: only the newest range can match them.
      spark.sql("UPDATE ev SET amount = amount + 1 WHERE id IN (3950, 3991)");
      spark.sql("DELETE FROM ev WHERE id = 3962");
      spark.sql("INSERT INTO ev VALUES (4001, 'n4001', timestamp_seconds(1700240060), 1.00, 0.5D)");
      Row[] refreshed = new Row[1];
      List<org.apache.spark.sql.execution.datasources.v2.BatchScanExec> scans =
          storageScansBy(() -> refreshed[0] = refresh("recent"), "recent__storage");
      assertThat(refreshed[0].getString(1)).isEqualTo("INCREMENTAL");
      assertMatches("recent", definition);
      assertThat(scans).as("storage scans").isNotEmpty();
      assertThat(scans).as("data files read by each scan of the storage").allMatch(scan -> filesRead(scan) == 1L);
      assertThat(scans).as("columns read by each scan of the storage").allMatch(scan -> columnsRead(scan).contains("at"));

      // A change at both ends of the range leaves out no storage file: the MERGE does not read the
      // clustering column then, to test a range that every stored row is in.
      spark.sql("UPDATE ev SET amount = amount + 1 WHERE id IN (5, 3993)");
      scans = storageScansBy(() -> refreshed[0] = refresh("recent"), "recent__storage");
      assertThat(refreshed[0].getString(1)).isEqualTo("INCREMENTAL");
      assertMatches("recent", definition);
      assertThat(scans).as("storage scans").isNotEmpty();
      assertThat(scans).as("columns read by each scan of the storage").noneMatch(scan -> columnsRead(scan).contains("at"));

      // NULLs, a non-ASCII string and an old row: the bounds widen, the result stays exact.
      spark.sql("INSERT INTO ev VALUES (NULL, 'ñandú', NULL, NULL, NULL), (4002, NULL, timestamp_seconds(1700000000), 2.00, 1.0D)");
      spark.sql("UPDATE ev SET name = 'Ωmega' WHERE id = 7");
      assertRefreshedIncrementally("recent", definition);
      assertRefreshedIncrementally("by_name", byName);
      spark.sql("DELETE FROM ev WHERE id IS NULL OR id = 4002");
      spark.sql("UPDATE ev SET at = at + INTERVAL 1 HOUR WHERE id = 3001");
      spark.sql("UPDATE ev SET name = 'n3' WHERE id = 3002");
      assertRefreshedIncrementally("recent", definition);
      assertRefreshedIncrementally("by_name", byName);

      spark.sql("SET floe.storage.clustered-rows-per-file=none");
      assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> spark.sql("REFRESH MATERIALIZED VIEW recent FULL")))
          .hasMessageContaining(io.floe.spark.refresh.RefreshExecutor.ROWS_PER_CLUSTERED_FILE)
          .hasMessageContaining("'none'");
      assertMatches("recent", definition);
    } finally {
      spark.conf().set("spark.sql.session.timeZone", zone);
      spark.conf().unset(io.floe.spark.refresh.RefreshExecutor.ROWS_PER_CLUSTERED_FILE);
    }
  }

  /**
   * The MERGE that applies a linear change keeps, of the stored rows it scans, only those whose key
   * the change lists, before they meet the change in its join: the rows the change touches at both
   * ends of the table, not every stored row.
   */
  @org.junit.jupiter.api.Test
  void aLinearRefreshJoinsOnlyTheStoredRowsWhoseKeysTheChangeLists() throws Exception {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmlisted");
    spark.sql("CREATE TABLE lt (id BIGINT, name STRING, amount INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO lt SELECT id, concat('n', id), CAST(id % 97 AS INT) FROM range(1, 2001)");
    String definition = "SELECT id, upper(name) AS name, amount + 1 AS amount FROM lt WHERE amount <> 5";
    spark.sql("CREATE MATERIALIZED VIEW listed AS " + definition);
    spark.sql("UPDATE lt SET amount = amount + 1000 WHERE id IN (3, 1998)");

    Row[] refreshed = new Row[1];
    List<Long> joined = storageRowsKeptBy(() -> refreshed[0] = refresh("listed"), "listed__storage");

    assertThat(refreshed[0].getString(1)).as(refreshed[0].getString(2)).isEqualTo("INCREMENTAL");
    assertMatches("listed", definition);
    assertThat(joined).as("stored rows each filter over a storage scan kept").isNotEmpty().allMatch(rows -> rows <= 2);
  }

  /**
   * Rows each filter over a scan of {@code storageTable} passed on, in the statements {@code action}
   * ran: the stored rows a MERGE went on to join with the change.
   */
  private List<Long> storageRowsKeptBy(Runnable action, String storageTable) throws java.util.concurrent.TimeoutException {
    List<Long> kept = new java.util.concurrent.CopyOnWriteArrayList<>();
    onExecutedPlans(action, plan -> collectFilters(plan, storageTable, kept));
    return kept;
  }

  private static void collectFilters(org.apache.spark.sql.execution.SparkPlan plan, String storageTable, List<Long> kept) {
    io.floe.spark.TableScans.forEachNode(
        plan,
        node -> {
          if (node instanceof org.apache.spark.sql.execution.FilterExec filter) {
            boolean[] overStorage = {false};
            io.floe.spark.TableScans.forEach(filter.child(), scan -> overStorage[0] |= scan.table().name().contains(storageTable));
            if (overStorage[0]) {
              kept.add(filter.metrics().get("numOutputRows").get().value());
            }
          }
        });
  }

  /**
   * A linear view's storage keeps one row per distinct row with a 128-bit key of its values, so a
   * refresh finds the stored rows a change matches by that key alone: it reads their keys and
   * counts, never their values, through new rows, deleted rows, a row that loses some of its copies,
   * and NULLs. A storage table an earlier Floe created with one 64-bit key is refreshed in full
   * once, which adds the second key; the refreshes after it are incremental again.
   */
  @org.junit.jupiter.api.Test
  void aLinearRefreshMatchesStoredRowsByTheirKeyWithoutReadingTheirValues() throws Exception {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmkey");
    spark.sql("CREATE TABLE kt (id BIGINT, name STRING, city STRING, amount DECIMAL(10,2), note STRING) USING iceberg"
        + " TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO kt SELECT id, concat('n', id % 50), CASE WHEN id % 7 = 0 THEN NULL ELSE concat('c', id % 5) END,"
        + " CAST(id % 13 AS DECIMAL(10,2)), repeat('x', 40) FROM range(1, 2001)");
    // Many source rows give one view row: the storage keeps it once, with its count.
    String definition = "SELECT city, name, note, amount * 2 AS doubled FROM kt WHERE id % 11 <> 0";
    spark.sql("CREATE MATERIALIZED VIEW keyed AS " + definition);
    String[] steps = {
      // A new row, a row of NULLs and one more copy of a stored row.
      "INSERT INTO kt VALUES (3001, 'new', 'c9', 1.00, 'y'), (3002, NULL, NULL, NULL, NULL), (3004, 'n1', 'c1', 1.00, repeat('x', 40))",
      // Two of the four copies of a view row go: its count falls.
      "DELETE FROM kt WHERE id IN (1, 3004)",
      "UPDATE kt SET amount = amount + 100 WHERE id % 50 = 2",
      "DELETE FROM kt WHERE name = 'n3' OR id = 3002",
      "MERGE INTO kt USING (SELECT 4 AS id UNION ALL SELECT 4001 AS id) s ON kt.id = s.id"
          + " WHEN MATCHED THEN UPDATE SET city = NULL WHEN NOT MATCHED THEN INSERT (id, name, city, amount, note)"
          + " VALUES (s.id, 'n4', NULL, 4.00, 'w')",
      // Two rows that differ only in which column is NULL: Spark's hash skips NULLs, the key does not.
      "INSERT INTO kt VALUES (6001, NULL, 'c1', 1.00, 'zz')",
      "INSERT INTO kt VALUES (6002, 'zz', 'c1', 1.00, NULL)",
      "DELETE FROM kt WHERE id = 6001",
    };
    List<String> scanned = new java.util.ArrayList<>();
    for (String step : steps) {
      spark.sql(step);
      Row[] refreshed = new Row[1];
      List<String> read = storageColumnsScannedBy(() -> refreshed[0] = refresh("keyed"), "keyed__storage");
      assertThat(refreshed[0].getString(1)).as("refresh after %s: %s", step, refreshed[0].getString(2)).isEqualTo("INCREMENTAL");
      assertMatches("keyed", definition);
      // A scan that finds no row to match is dropped from the final plan: only new rows, nothing read.
      assertThat(read)
          .as("columns of the stored rows read to refresh after %s", step)
          .allMatch(c -> c.startsWith("_") || c.equals("city"), "a hidden column, a row position or the clustering column");
      scanned.addAll(read);
    }
    assertThat(scanned).as("columns of the stored rows read by all the refreshes").contains(StorageLayout.KEY2);

    spark.sql("ALTER TABLE lake." + ns + ".keyed__storage DROP COLUMN " + StorageLayout.KEY2);
    spark.sql("INSERT INTO kt VALUES (5001, 'n5', 'c5', 5.00, 'v')");
    Row upgrade = refresh("keyed");
    assertThat(upgrade.getString(1)).isEqualTo("FULL");
    assertThat(upgrade.getString(2)).contains("lacks the bookkeeping column(s) " + StorageLayout.KEY2);
    assertMatches("keyed", definition);
    assertThat(spark.sql("SELECT count(*) FROM lake." + ns + ".keyed__storage WHERE " + StorageLayout.KEY2 + " IS NULL").first().getLong(0))
        .isZero();
    spark.sql("DELETE FROM kt WHERE id IN (5001, 12)");
    assertRefreshedIncrementally("keyed", definition);

    // An upgrade that added the column and then failed to write the rows leaves it empty: the
    // schema the last refresh wrote with lacks it, so the next refresh is full again.
    spark.sql("ALTER TABLE lake." + ns + ".keyed__storage DROP COLUMN " + StorageLayout.KEY2);
    spark.sql("ALTER TABLE lake." + ns + ".keyed__storage ADD COLUMN " + StorageLayout.KEY2 + " BIGINT");
    spark.sql("DELETE FROM kt WHERE id = 13");
    Row unfilled = refresh("keyed");
    assertThat(unfilled.getString(1)).isEqualTo("FULL");
    assertThat(unfilled.getString(2)).contains("before the bookkeeping column(s) " + StorageLayout.KEY2 + " existed");
    assertMatches("keyed", definition);
    spark.sql("DELETE FROM kt WHERE id = 14");
    assertRefreshedIncrementally("keyed", definition);
  }

  /**
   * Nested values hash alike when their NULLs or elements shift ({@code [a, b], []} and {@code [a],
   * [b]}; a struct's NULL moving between fields), so the MERGE compares such columns by value on
   * top of the key: each such row stays its own.
   */
  @org.junit.jupiter.api.Test
  void nestedColumnsThatHashAlikeStayApart() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmnested");
    spark.sql("CREATE TABLE nt (id INT, a ARRAY<STRING>, b ARRAY<STRING>, s STRUCT<p: STRING, q: STRING>) USING iceberg"
        + " TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO nt VALUES (1, array('x', 'y'), array(), named_struct('p', 'u', 'q', CAST(NULL AS STRING)))");
    String definition = "SELECT a, b, s FROM nt";
    spark.sql("CREATE MATERIALIZED VIEW nested AS " + definition);
    String[] steps = {
      "INSERT INTO nt VALUES (2, array('x'), array('y'), named_struct('p', 'u', 'q', CAST(NULL AS STRING)))",
      "INSERT INTO nt VALUES (3, array('x', 'y'), array(), named_struct('p', CAST(NULL AS STRING), 'q', 'u'))",
      "DELETE FROM nt WHERE id = 1",
      "UPDATE nt SET b = array('y') WHERE id = 3",
    };
    for (String step : steps) {
      spark.sql(step);
      assertRefreshedIncrementally("nested", definition);
    }
  }

  /** The columns each scan of {@code storageTable} read in the statements {@code action} ran. */
  private List<String> storageColumnsScannedBy(Runnable action, String storageTable) throws java.util.concurrent.TimeoutException {
    List<String> read = new java.util.concurrent.CopyOnWriteArrayList<>();
    onStorageScans(action, storageTable, scan -> read.addAll(List.of(scan.scan().readSchema().fieldNames())));
    return read;
  }

  /** The scans of {@code storageTable} in the statements {@code action} ran. */
  private List<org.apache.spark.sql.execution.datasources.v2.BatchScanExec> storageScansBy(Runnable action, String storageTable)
      throws java.util.concurrent.TimeoutException {
    List<org.apache.spark.sql.execution.datasources.v2.BatchScanExec> scans = new java.util.concurrent.CopyOnWriteArrayList<>();
    onStorageScans(action, storageTable, scans::add);
    return scans;
  }

  private static long filesRead(org.apache.spark.sql.execution.datasources.v2.BatchScanExec scan) {
    return scan.metrics().get("resultDataFiles").get().value();
  }

  private static List<String> columnsRead(org.apache.spark.sql.execution.datasources.v2.BatchScanExec scan) {
    return scala.jdk.javaapi.CollectionConverters.asJava(scan.output()).stream()
        .map(org.apache.spark.sql.catalyst.expressions.Attribute::name)
        .collect(java.util.stream.Collectors.toList());
  }

  /** Runs {@code action}, passing each scan of {@code storageTable} its statements ran to {@code onScan}. */
  private void onStorageScans(
      Runnable action,
      String storageTable,
      java.util.function.Consumer<org.apache.spark.sql.execution.datasources.v2.BatchScanExec> onScan)
      throws java.util.concurrent.TimeoutException {
    onExecutedPlans(
        action,
        plan ->
            io.floe.spark.TableScans.forEach(
                plan,
                scan -> {
                  if (scan.table().name().contains(storageTable)) {
                    onScan.accept(scan);
                  }
                }));
  }

  /** Runs {@code action}, passing the executed plan of each statement it ran to {@code onPlan}. */
  private void onExecutedPlans(Runnable action, java.util.function.Consumer<org.apache.spark.sql.execution.SparkPlan> onPlan)
      throws java.util.concurrent.TimeoutException {
    org.apache.spark.sql.util.QueryExecutionListener listener =
        new org.apache.spark.sql.util.QueryExecutionListener() {
          @Override
          public void onSuccess(String funcName, org.apache.spark.sql.execution.QueryExecution qe, long durationNs) {
            onPlan.accept(qe.executedPlan());
          }

          @Override
          public void onFailure(String funcName, org.apache.spark.sql.execution.QueryExecution qe, Exception exception) {}
        };
    spark.listenerManager().register(listener);
    try {
      action.run();
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } finally {
      spark.listenerManager().unregister(listener);
    }
  }

  /**
   * A source that had no snapshot at the last refresh was read as empty: Spark then replaces the
   * join with NULLs in that term, and a change of both sources took two terms whose UNION failed.
   */
  @org.junit.jupiter.api.Test
  void anOuterJoinOverATableWithoutSnapshotRefreshesWhenBothSidesChange() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmouterempty");
    spark.sql("CREATE TABLE o (id INT, cust INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE e (cust INT, x INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO o VALUES (1, 1), (2, 9)");
    String left = "SELECT e.x, COUNT(*) AS n FROM o LEFT JOIN e ON o.cust = e.cust GROUP BY e.x";
    String full = "SELECT e.x, COUNT(o.id) AS n FROM e FULL JOIN o ON o.cust = e.cust GROUP BY e.x";
    spark.sql("CREATE MATERIALIZED VIEW left_x AS " + left);
    spark.sql("CREATE MATERIALIZED VIEW full_x AS " + full);
    spark.sql("INSERT INTO e VALUES (9, 3), (5, 4)");
    spark.sql("INSERT INTO o VALUES (3, 9)");
    assertRefreshedIncrementally("left_x", left);
    assertRefreshedIncrementally("full_x", full);
  }

  /**
   * A change on a side of an outer join that may not match reads the join's other side whole, as
   * a full refresh does: an aggregate of few groups refreshes in full then, while a change of the
   * side that keeps its rows (linear) and a view storing a row per joined row stay incremental.
   */
  @org.junit.jupiter.api.Test
  void anOuterJoinChangeReadingTheOtherSideWholeRefreshesFewGroupsInFull() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmouterscan");
    // The check applies from a million rows by default; here from the first.
    spark.conf().set(SizeChecks.SCAN_FLOOR, "0");
    try {
      spark.sql("CREATE TABLE orders (id INT, cust INT, amount INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
      spark.sql("CREATE TABLE customers (cust INT, region STRING) USING iceberg TBLPROPERTIES (" + MOR + ")");
      spark.sql("INSERT INTO orders VALUES (1, 10, 5), (2, 10, 7), (3, 20, 1), (4, 30, 2), (5, 30, 3), (6, 40, 4)");
      spark.sql("INSERT INTO customers VALUES (10, 'east'), (20, 'west'), (30, 'west')");
      String perRegion =
          "SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o LEFT JOIN customers c ON o.cust = c.cust"
              + " GROUP BY c.region";
      String fullPerRegion =
          "SELECT c.region, COUNT(o.id) AS n FROM orders o FULL JOIN customers c ON o.cust = c.cust GROUP BY c.region";
      String pairs = "SELECT o.id, c.region FROM orders o FULL JOIN customers c ON o.cust = c.cust";
      spark.sql("CREATE MATERIALIZED VIEW per_region AS " + perRegion);
      spark.sql("CREATE MATERIALIZED VIEW full_per_region AS " + fullPerRegion);
      spark.sql("CREATE MATERIALIZED VIEW pairs AS " + pairs);

      // A dimension change: 3 groups stored of 10 source rows (those a scan reads: the updated
      // row's old version stays in its data file, deleted by position).
      spark.sql("UPDATE customers SET region = 'north' WHERE cust = 20");
      assertThat(explainStrategy("per_region"))
          .startsWith("INCREMENTAL: ")
          .endsWith("; FULL instead when the size checks find a full refresh costs less for the change ("
              + SizeChecks.DELTA_THRESHOLD_CHECK + "=false turns them off)");
      Row dimension = refresh("per_region");
      assertThat(dimension.getString(1)).isEqualTo("FULL");
      assertThat(dimension.getString(2))
          .contains("the change of")
          .contains("customers is on a side of an outer join that may not match")
          .contains("stores 3 groups of 10 source rows, so a full refresh costs less");
      assertMatches("per_region", perRegion);
      assertRefreshedIncrementally("pairs", pairs);
      // Under a FULL JOIN a change of either side reads the other whole.
      spark.sql("INSERT INTO orders VALUES (7, 40, 6)");
      Row fact = refresh("full_per_region");
      assertThat(fact.getString(1)).isEqualTo("FULL");
      assertThat(fact.getString(2)).contains("orders is on a side of an outer join that may not match");
      assertMatches("full_per_region", fullPerRegion);
      // A change of the side that keeps its rows is linear: it reads no other side whole.
      assertRefreshedIncrementally("per_region", perRegion);
      assertRefreshedIncrementally("pairs", pairs);

      spark.conf().set(SizeChecks.DELTA_THRESHOLD_CHECK, "false");
      spark.sql("DELETE FROM customers WHERE cust = 10");
      assertThat(explainStrategy("per_region")).startsWith("INCREMENTAL: ").doesNotContain("size checks");
      assertRefreshedIncrementally("per_region", perRegion);
      assertRefreshedIncrementally("full_per_region", fullPerRegion);
      assertRefreshedIncrementally("pairs", pairs);
    } finally {
      spark.conf().unset(SizeChecks.SCAN_FLOOR);
      spark.conf().unset(SizeChecks.DELTA_THRESHOLD_CHECK);
    }
  }

  @Test
  void aDimensionChangeReadsOnlyTheFactPartitionsItCanMatch() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmouternarrow");
    // 600 facts, a partition (a data file) per day, one without a day.
    spark.sql("CREATE TABLE orders (id INT, day DATE, amount INT) USING iceberg PARTITIONED BY (day)");
    spark.sql("CREATE TABLE dates (day DATE, holiday BOOLEAN) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO orders SELECT CAST(id AS INT), CASE WHEN id = 0 THEN NULL"
        + " ELSE date_add(DATE'2026-01-01', CAST(id % 30 AS INT)) END, CAST(id % 100 AS INT) FROM range(600) t(id)");
    spark.sql("INSERT INTO dates SELECT date_add(DATE'2026-01-01', CAST(id AS INT)), id % 7 = 0 FROM range(30) t(id)");
    String perHoliday =
        "SELECT d.holiday, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o LEFT JOIN dates d ON o.day = d.day"
            + " GROUP BY d.holiday";
    String days = "SELECT DISTINCT o.amount, d.holiday FROM orders o LEFT JOIN dates d USING (day)";
    spark.sql("CREATE MATERIALIZED VIEW per_holiday AS " + perHoliday);
    spark.sql("CREATE MATERIALIZED VIEW days AS " + days);

    // One day's flag flips, and another day moves: the changed keys are three days, whose
    // partitions hold 60 facts.
    spark.sql("UPDATE dates SET holiday = true WHERE day = DATE'2026-01-02'");
    spark.sql("UPDATE dates SET day = DATE'2026-01-05' WHERE day = DATE'2026-01-04'");
    for (String[] mv : new String[][] {{"per_holiday", perHoliday}, {"days", days}}) {
      Row[] result = new Row[1];
      List<Long> files = ScanReports.dataFiles(ScanReports.during(() -> result[0] = refresh(mv[0])), "orders");
      assertThat(result[0].getString(1)).as("refresh type of %s: %s", mv[0], result[0].getString(2)).isEqualTo("INCREMENTAL");
      assertThat(files).as("data files of orders each scan of %s's refresh planned, of 31", mv[0]).isNotEmpty().allMatch(n -> n <= 3);
      assertMatches(mv[0], mv[1]);
    }

    // A change of the facts is linear; a dimension row deleted leaves its facts unmatched.
    spark.sql("INSERT INTO orders VALUES (600, NULL, 5), (601, DATE'2026-01-03', 7)");
    spark.sql("DELETE FROM dates WHERE day = DATE'2026-01-03'");
    assertRefreshedIncrementally("per_holiday", perHoliday);
    assertRefreshedIncrementally("days", days);
  }

  @org.junit.jupiter.api.Test
  void aChangeReadFromMoreRowsThanAFullRefreshNeedsRefreshesInFullWithTheReason() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmspread");
    // The check applies from a million rows by default; here from the first.
    spark.conf().set(SizeChecks.SCAN_FLOOR, "0");
    try {
      // Copy-on-write: an UPDATE rewrites the table's one data file, so its change is read from
      // both versions of it, twice the rows a full refresh reads.
      spark.sql("CREATE TABLE t (id INT, k STRING, d STRING) USING iceberg TBLPROPERTIES (" + COW + ")");
      spark.sql(
          "INSERT INTO t SELECT /*+ REPARTITION(1) */ * FROM VALUES"
              + " (1, 'a', 'x'), (2, 'a', 'y'), (3, 'b', 'x'), (4, 'b', 'y'), (5, 'c', 'z'), (6, 'c', 'z')");
      String linear = "SELECT id, upper(k) AS k, d FROM t";
      // SUM(DISTINCT) is recomputed for the groups a change touches.
      String averaged = "SELECT k, SUM(DISTINCT id) AS id_sum FROM t GROUP BY k";
      spark.sql("CREATE MATERIALIZED VIEW lin AS " + linear);
      spark.sql("CREATE MATERIALIZED VIEW mean AS " + averaged);
      // Every id is its own distinct value: the value counts are as many as the source's rows.
      String distinctIds = "SELECT COUNT(DISTINCT id) AS ids FROM t";
      spark.sql("CREATE MATERIALIZED VIEW ids AS " + distinctIds);

      spark.sql("UPDATE t SET d = 'w' WHERE id = 1");
      Row lin = refresh("lin");
      assertThat(lin.getString(1)).isEqualTo("FULL");
      assertThat(lin.getString(2)).contains("spread over data files holding 12 rows, more than a full refresh reads (6)");
      // Recomputing the touched groups reads every source row on top of the change: the change
      // must also be read from fewer rows than the view stores (3 groups).
      Row mean = refresh("mean");
      assertThat(mean.getString(1)).isEqualTo("FULL");
      assertThat(mean.getString(2)).contains("more than 3 (the rows the view stores");
      assertMatches("lin", linear);
      assertMatches("mean", averaged);

      // An append is read from its new file only: small enough for both.
      spark.sql("INSERT INTO t VALUES (7, 'a', 'q')");
      assertRefreshedIncrementally("lin", linear);
      assertRefreshedIncrementally("mean", averaged);
      // The one group keeps 7 values for the 8 source rows' ids: merging a change into them still
      // costs less than a full refresh, which packs them all anew.
      refresh("ids");
      spark.sql("INSERT INTO t VALUES (11, 'a', 'q')");
      assertRefreshedIncrementally("ids", distinctIds);
      assertRefreshedIncrementally("mean", averaged);

      // A change touching most groups: recomputing them would aggregate every row and merge them.
      spark.sql("INSERT INTO t VALUES (9, 'b', 'q'), (10, 'c', 'q')");
      assertRefreshedIncrementally("lin", linear);
      Row most = refresh("mean");
      assertThat(most.getString(1)).isEqualTo("FULL");
      assertThat(most.getString(2)).contains("touches 2 of the 3 groups");
      assertMatches("mean", averaged);

      // Glue's key turns the check off: the same kind of change refreshes incrementally.
      spark.conf().set(SizeChecks.DELTA_THRESHOLD_CHECK, "false");
      spark.sql("UPDATE t SET d = 'v' WHERE id = 2");
      assertRefreshedIncrementally("lin", linear);
      assertRefreshedIncrementally("mean", averaged);
      assertRefreshedIncrementally("ids", distinctIds);

      spark.conf().unset(SizeChecks.DELTA_THRESHOLD_CHECK);
      spark.conf().set(SizeChecks.SCAN_FLOOR, "many");
      spark.sql("INSERT INTO t VALUES (8, 'b', 'q')");
      assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> refresh("lin")))
          .hasMessageContaining(SizeChecks.SCAN_FLOOR)
          .hasMessageContaining("'many'");
    } finally {
      spark.conf().unset(SizeChecks.SCAN_FLOOR);
      spark.conf().unset(SizeChecks.DELTA_THRESHOLD_CHECK);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void aggregatesWithoutGroupByKeepTheirOneRowAsTheInputEmptiesAndRefills(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmglobal");
    spark.sql("CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.00), (2, 'a', NULL), (3, 'b', 3.00), (4, 'z', 4.00)");
    String totals =
        "SELECT COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS total, SUM(id) AS ids, MAX(v) AS top, COUNT(DISTINCT k) AS ks"
            + " FROM t WHERE k <> 'z'";
    spark.sql("CREATE MATERIALIZED VIEW totals REFRESH POLICY INCREMENTAL AS " + totals);
    assertMatches("totals", totals);

    spark.sql("INSERT INTO t VALUES (5, 'c', 5.00), (6, 'z', 6.00)");
    spark.sql("UPDATE t SET v = 10.00 WHERE id = 2");
    spark.sql("DELETE FROM t WHERE id = 1");
    assertRefreshedIncrementally("totals", totals);
    Row row = refresh("totals");
    assertThat(row.getString(1)).isEqualTo("NO_CHANGE");

    // The input empties: the one row stays, counting zero with NULL sums, as the query returns.
    spark.sql("DELETE FROM t WHERE k <> 'z'");
    assertRefreshedIncrementally("totals", totals);
    assertThat(spark.sql("SELECT * FROM totals").collectAsList())
        .singleElement()
        .satisfies(r -> {
          assertThat(r.getLong(0)).isZero();
          assertThat(r.getLong(1)).isZero();
          assertThat(r.isNullAt(2)).isTrue();
          assertThat(r.isNullAt(3)).isTrue();
          assertThat(r.isNullAt(4)).isTrue();
          assertThat(r.getLong(5)).isZero();
        });
    spark.sql("INSERT INTO t VALUES (7, 'a', 7.00), (8, 'a', NULL)");
    assertRefreshedIncrementally("totals", totals);
    assertThat(spark.sql("SELECT n, total FROM totals").first().getLong(0)).isEqualTo(2L);

    // SUM(DISTINCT) would be recomputed from every row: a full refresh, and INCREMENTAL refuses.
    String mean = "SELECT COUNT(*) AS n, SUM(DISTINCT v) AS distinct_total FROM t";
    assertThat(org.assertj.core.api.Assertions.catchThrowable(
            () -> spark.sql("CREATE MATERIALIZED VIEW mean_inc REFRESH POLICY INCREMENTAL AS " + mean)))
        .hasMessageContaining("mean_inc")
        .hasMessageContaining("sum(DISTINCT v)")
        .hasMessageContaining("without GROUP BY");
    spark.sql("CREATE MATERIALIZED VIEW mean AS " + mean);
    spark.sql("INSERT INTO t VALUES (9, 'b', 9.00)");
    Row full = refresh("mean");
    assertThat(full.getString(1)).isEqualTo("FULL");
    assertThat(full.getString(2)).contains("without GROUP BY");
    assertMatches("mean", mean);
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void havingGroupsEnterAndLeaveTheViewAsTheirAggregatesCrossTheCondition(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmhaving");
    spark.sql("CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.00), (2, 'a', 2.00), (3, 'b', 3.00), (4, NULL, 4.00), (5, NULL, 5.00), (6, 'c', 6.00)");
    String big = "SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS top FROM t GROUP BY k HAVING COUNT(*) > 1";
    String unselected = "SELECT k, SUM(v) AS total FROM t GROUP BY k HAVING MIN(v) < 3";
    spark.sql("CREATE MATERIALIZED VIEW big REFRESH POLICY INCREMENTAL AS " + big);
    spark.sql("CREATE MATERIALIZED VIEW unselected AS " + unselected);
    assertMatches("big", big);

    // 'b' reaches two rows and enters; 'a' loses one and leaves; the NULL group stays.
    spark.sql("INSERT INTO t VALUES (7, 'b', 1.00)");
    spark.sql("DELETE FROM t WHERE id = 1");
    assertThat(explainStrategy("big")).startsWith("INCREMENTAL: recompute the view rows of each group");
    assertRefreshedIncrementally("big", big);
    assertRefreshedIncrementally("unselected", unselected);
    assertThat(spark.sql("SELECT k FROM big").collectAsList()).hasSize(2);

    // Deleting every row of a group that passed HAVING removes it; untouched groups stay as they are.
    spark.sql("DELETE FROM t WHERE k IS NULL");
    spark.sql("UPDATE t SET v = 0.50 WHERE id = 6");
    assertRefreshedIncrementally("big", big);
    assertRefreshedIncrementally("unselected", unselected);
    assertThat(spark.sql("SELECT k FROM big").collectAsList()).hasSize(1);
    spark.sql("DELETE FROM t");
    assertRefreshedIncrementally("big", big);
    assertThat(spark.sql("SELECT * FROM big").count()).isZero();
  }

  /**
   * A window partitioned by an expression is keyed by it only where every row of a partition is a
   * row of the one source read the expression is over, and whatever the filters above the window
   * keep: a filter equating the key with another column (above the window) must not narrow the
   * read, a UNION's other input must refresh in full, and an expression that fails on a changed
   * row the definition filters out (a CAST under ANSI mode) refreshes in full instead of failing.
   */
  @Test
  void aWindowPartitionedByAnExpressionStaysRightAroundFiltersUnionsAndFailingRows() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmwindowexpr");
    spark.sql("CREATE TABLE e (id INT, code STRING, label STRING, ts INT) USING iceberg");
    spark.sql("INSERT INTO e VALUES (1, ' x', 'X', 1), (2, 'x', 'Y', 2), (3, '7', 'Z', 3), (4, 'y', 'Y', 4)");
    spark.sql("CREATE TABLE f (id INT, code STRING, label STRING, ts INT) USING iceberg");
    spark.sql("INSERT INTO f VALUES (1, 'X', 'Q', 3), (2, ' y', 'X', 1)");
    String filteredAbove =
        "SELECT * FROM (SELECT id, upper(trim(code)) AS clean, label, ts, row_number() OVER (PARTITION BY"
            + " upper(trim(code)) ORDER BY ts DESC) AS rn FROM e) WHERE clean = label";
    String union =
        "SELECT clean, ts, row_number() OVER (PARTITION BY upper(trim(code)) ORDER BY ts, clean) AS rn FROM"
            + " (SELECT upper(trim(code)) AS clean, code, ts FROM e UNION ALL SELECT label AS clean, code, ts FROM f)";
    String cast =
        "SELECT c, ts, row_number() OVER (PARTITION BY CAST(code AS INT) ORDER BY ts) AS rn FROM"
            + " (SELECT CAST(code AS INT) AS c, code, ts FROM e WHERE code RLIKE '^[0-9]+$')";
    spark.sql("CREATE MATERIALIZED VIEW filtered_above AS " + filteredAbove);
    spark.sql("CREATE MATERIALIZED VIEW unioned AS " + union);
    spark.sql("CREATE MATERIALIZED VIEW cast_key AS " + cast);

    spark.sql("UPDATE e SET ts = 0 WHERE id = 1");
    assertRefreshedIncrementally("filtered_above", filteredAbove);
    assertRefreshedInFull("unioned", union, "partitioning a window by the expression upper(trim(code))");

    spark.sql("INSERT INTO e VALUES (5, 'abc', 'W', 5)");
    assertRefreshedInFull("cast_key", cast, "expression of the view failed on a changed source row");
    spark.sql("INSERT INTO e VALUES (6, '7', 'V', 6)");
    assertRefreshedIncrementally("cast_key", cast);
    assertRefreshedIncrementally("filtered_above", filteredAbove);
  }

  /**
   * A window partitioned by an expression is recomputed over the touched partitions' rows alone:
   * no file bounds hold the expression's values, so the source is read whole, but the window's
   * input is filtered to the touched values, above the definition's own filters.
   */
  @Test
  void aWindowPartitionedByAnExpressionIsComputedOverTheTouchedPartitionsAlone() throws Exception {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmwindowexprnarrow");
    spark.sql("CREATE TABLE n (id INT, code STRING, ts INT) USING iceberg");
    spark.sql("INSERT INTO n VALUES (1, ' a', 1), (2, 'A', 2), (3, 'b', 3), (4, 'abc', 4), (5, '7', 5), (6, '07', 6)");
    String latest =
        "SELECT clean, id FROM (SELECT upper(trim(code)) AS clean, id, row_number() OVER (PARTITION BY"
            + " upper(trim(code)) ORDER BY ts DESC) AS rn FROM n) WHERE rn = 1";
    assertThat(narrowed(latest, "SELECT 'A' AS k UNION ALL SELECT 'C'")).containsExactly("[A,2]");
    // CAST('abc' AS INT) fails under ANSI mode: the filter must run after the definition's own.
    String cast =
        "SELECT c, id, row_number() OVER (PARTITION BY CAST(code AS INT) ORDER BY ts) AS rn FROM"
            + " (SELECT CAST(code AS INT) AS c, code, id, ts FROM n WHERE code RLIKE '^[0-9]+$')";
    assertThat(narrowed(cast, "SELECT 7 AS k")).containsExactlyInAnyOrder("[7,5,1]", "[7,6,2]");
  }

  /** The rows of {@code definition} narrowed to the keys {@code touched} gives, as text. */
  private List<String> narrowed(String definition, String touched) throws Exception {
    org.apache.spark.sql.catalyst.plans.logical.LogicalPlan analyzed = spark.sql(definition).queryExecution().analyzed();
    KeyedShape shape =
        DefinitionShape.of(spark.sessionState().sqlParser().parsePlan(definition), analyzed).keyed().orElseThrow();
    assertThat(shape.keys()).hasSize(1);
    assertThat(shape.keys().get(0).computed()).isTrue();
    KeyNarrowing narrowing = KeyNarrowing.of(analyzed, shape.keys().get(0), spark.sql(touched)).orElseThrow();
    return org.apache.spark.sql.classic.Dataset.ofRows((org.apache.spark.sql.classic.SparkSession) spark, narrowing.plan())
        .collectAsList().stream().map(Row::toString).toList();
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void windowPartitionsTouchedByTheChangeAreRecomputed(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmwindow");
    spark.sql("CREATE TABLE t (id INT, k STRING, g INT, v DOUBLE) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1, 1.0), (2, 'a', 2, 2.0), (3, 'b', 1, 3.0), (4, NULL, 2, 4.0), (5, 'c', NULL, 5.0)");
    String ranked =
        "SELECT id, k, v, rank() OVER (PARTITION BY k ORDER BY v DESC) AS r, SUM(v) OVER (PARTITION BY k) AS k_total FROM t";
    String twoKeys =
        "SELECT id, k, g, COUNT(*) OVER (PARTITION BY k) AS per_k, MAX(v) OVER (PARTITION BY g) AS g_max FROM t";
    String latest =
        "SELECT id, k, v FROM (SELECT id, k, v, row_number() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM t) WHERE rn = 1";
    String global = "SELECT id, rank() OVER (ORDER BY v) AS r FROM t";
    spark.sql("CREATE MATERIALIZED VIEW ranked REFRESH POLICY INCREMENTAL AS " + ranked);
    spark.sql("CREATE MATERIALIZED VIEW two_keys AS " + twoKeys);
    spark.sql("CREATE MATERIALIZED VIEW latest AS " + latest);
    spark.sql("CREATE MATERIALIZED VIEW global_rank AS " + global);
    // The seed tutorial's dedup on a cleaned key: a changed row tells its partition by the expression.
    String byExpression =
        "SELECT ck, v FROM (SELECT upper(trim(k)) AS ck, v, row_number() OVER (PARTITION BY upper(trim(k))"
            + " ORDER BY v DESC, id) AS rn FROM t) WHERE rn = 1";
    String byComputed =
        "WITH c AS (SELECT id, upper(trim(k)) AS ck, v FROM t) SELECT ck, v FROM (SELECT ck, v,"
            + " row_number() OVER (PARTITION BY ck ORDER BY v DESC, id) AS rn FROM c) WHERE rn = 1";
    spark.sql("CREATE MATERIALIZED VIEW by_expression AS " + byExpression);
    spark.sql("CREATE MATERIALIZED VIEW by_computed AS " + byComputed);

    spark.sql("INSERT INTO t VALUES (6, 'a', 2, 9.0), (7, NULL, 1, 0.5)");
    spark.sql("UPDATE t SET v = 0.0 WHERE id = 3");
    String[][] keyed = {
      {"ranked", ranked}, {"two_keys", twoKeys}, {"latest", latest}, {"by_expression", byExpression}, {"by_computed", byComputed}
    };
    assertThat(explainStrategy("two_keys")).contains("reading every source row (a row has several partitions)");
    assertEachRefreshedIncrementally(keyed);
    assertRefreshedInFull("global_rank", global, "without PARTITION BY");
    assertThat(ExplainedRefresh.detail(spark, "by_expression", "definition")).contains("recomputed by partition (ck)");

    // A partition disappears: its rows leave, the other partitions keep theirs.
    spark.sql("DELETE FROM t WHERE k = 'a'");
    spark.sql("UPDATE t SET k = 'b' WHERE id = 5");
    assertEachRefreshedIncrementally(keyed);
    assertThat(spark.sql("SELECT * FROM ranked WHERE k = 'a'").count()).isZero();
    assertThat(explainStrategy("ranked")).startsWith("NO_CHANGE");
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void outerJoinRowsLoseAndGainTheirMatchesByJoinKey(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmouter");
    spark.sql("CREATE TABLE orders (id INT, cust INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE customers (cust INT, region STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO orders VALUES (1, 10, 5.00), (2, 10, 7.00), (3, 20, 1.00), (4, NULL, 2.00), (5, 50, 3.00)");
    spark.sql("INSERT INTO customers VALUES (10, 'east'), (20, 'west'), (30, 'west'), (NULL, 'nowhere'), (10, 'east')");
    String left =
        "SELECT o.id, o.cust, o.amount, c.region FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    String right =
        "SELECT o.id, c.cust, c.region FROM orders o RIGHT JOIN customers c ON o.cust = c.cust WHERE o.amount IS NULL OR o.amount > 1";
    String full =
        "SELECT o.id, o.cust, c.cust AS c_cust, c.region FROM orders o FULL JOIN customers c ON o.cust = c.cust AND c.region <> 'x'";
    String using = "SELECT cust, id, region FROM orders FULL JOIN customers USING (cust)";
    String rightKeyOnly = "SELECT o.id, c.cust, c.region FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    String nonEqui = "SELECT o.id, c.region FROM orders o LEFT JOIN customers c ON o.cust < c.cust";
    // Aggregates over outer joins, grouped by the join key from the side that keeps unmatched rows
    // (and by more columns); grouped by the other side's columns alone, they follow the outer
    // join's own delta rule (outerJoinGroupedByTheJoinedTablesColumnsFollowsItsDeltaRule).
    String perCustomer =
        "SELECT o.cust, c.region, COUNT(*) AS n, SUM(o.amount) AS total, COUNT(DISTINCT c.region) AS regions"
            + " FROM orders o LEFT JOIN customers c ON o.cust = c.cust GROUP BY o.cust, c.region";
    String perMatch =
        "SELECT o.cust, c.cust AS c_cust, COUNT(o.id) AS orders, MAX(c.region) AS region"
            + " FROM orders o FULL JOIN customers c ON o.cust = c.cust GROUP BY o.cust, c.cust HAVING COUNT(*) > 0";
    // Both sides' key columns grouped: the key is the preserved side's, even when the other is
    // selected first or alone (the preserved one then kept hidden).
    String bothKeys =
        "SELECT c.cust AS cc, o.cust AS oc, SUM(o.amount) AS total FROM orders o LEFT JOIN customers c ON o.cust = c.cust"
            + " GROUP BY o.cust, c.cust";
    String otherKeyOnly =
        "SELECT c.cust, c.region, SUM(o.amount) AS total FROM orders o LEFT JOIN customers c ON o.cust = c.cust"
            + " GROUP BY o.cust, c.cust, c.region";
    String fullKeys =
        "SELECT c.cust AS cc, o.cust AS oc, COUNT(*) AS n FROM orders o FULL JOIN customers c ON o.cust = c.cust GROUP BY c.cust, o.cust";
    String otherKeyWindow =
        "SELECT c.cust, o.id, COUNT(*) OVER (PARTITION BY o.cust) AS n FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    // Windows over outer joins, partitioned by the join key (or by the other side's column: in full).
    String ranked =
        "SELECT o.id, o.cust, c.region, row_number() OVER (PARTITION BY o.cust ORDER BY o.amount DESC, o.id, c.region) AS rn,"
            + " COUNT(*) OVER (PARTITION BY o.cust) AS per_cust FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    String perRegionWindow =
        "SELECT o.id, c.region, COUNT(*) OVER (PARTITION BY c.region) AS n FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    spark.sql("CREATE MATERIALIZED VIEW per_customer REFRESH POLICY INCREMENTAL AS " + perCustomer);
    spark.sql("CREATE MATERIALIZED VIEW per_match REFRESH POLICY INCREMENTAL AS " + perMatch);
    spark.sql("CREATE MATERIALIZED VIEW ranked REFRESH POLICY INCREMENTAL AS " + ranked);
    spark.sql("CREATE MATERIALIZED VIEW per_region_window AS " + perRegionWindow);
    assertThat(ExplainedRefresh.detail(spark, "per_customer", "definition")).isEqualTo("GROUP BY over an outer join, recomputed by group (cust)");
    spark.sql("CREATE MATERIALIZED VIEW lft REFRESH POLICY INCREMENTAL AS " + left);
    spark.sql("CREATE MATERIALIZED VIEW rgt AS " + right);
    spark.sql("CREATE MATERIALIZED VIEW fll AS " + full);
    spark.sql("CREATE MATERIALIZED VIEW usng AS " + using);
    spark.sql("CREATE MATERIALIZED VIEW right_key_only AS " + rightKeyOnly);
    spark.sql("CREATE MATERIALIZED VIEW non_equi AS " + nonEqui);
    // right_key_only selects the key from the side that does not keep unmatched rows: its storage
    // keeps o.cust in a hidden column (HiddenKeys).
    String[][] keyed = {
      {"lft", left}, {"rgt", right}, {"fll", full}, {"usng", using}, {"right_key_only", rightKeyOnly},
      {"per_customer", perCustomer}, {"per_match", perMatch}, {"ranked", ranked},
      {"both_keys", bothKeys}, {"other_key_only", otherKeyOnly}, {"full_keys", fullKeys}, {"other_key_window", otherKeyWindow}
    };
    for (String[] mv : java.util.Arrays.copyOfRange(keyed, keyed.length - 4, keyed.length)) {
      spark.sql("CREATE MATERIALIZED VIEW " + mv[0] + " REFRESH POLICY INCREMENTAL AS " + mv[1]);
    }
    // cc is o.cust's or NULL, so the first non-null of the two is o.cust's.
    assertThat(ExplainedRefresh.detail(spark, "both_keys", "definition"))
        .isEqualTo("GROUP BY over an outer join, recomputed by group (coalesce(oc, cc))");
    assertThat(ExplainedRefresh.detail(spark, "full_keys", "definition"))
        .isEqualTo("GROUP BY over an outer join, recomputed by group (coalesce(cc, oc))");

    // Order 5 gains a customer, orders of 20 lose theirs, customer 10's duplicate goes, a NULL key arrives.
    spark.sql("INSERT INTO customers VALUES (50, 'north'), (NULL, 'void')");
    spark.sql("DELETE FROM customers WHERE cust = 20");
    spark.sql("DELETE FROM customers WHERE cust = 10 AND region = 'east'");
    spark.sql("INSERT INTO customers VALUES (10, 'south')");
    spark.sql("INSERT INTO orders VALUES (6, NULL, 8.00), (7, 30, 1.50), (7, 30, 1.50)");
    assertThat(explainStrategy("fll")).startsWith("INCREMENTAL: recompute the view rows of each join key");
    assertEachRefreshedIncrementally(keyed);
    assertRefreshedInFull("non_equi", nonEqui, "equi-join key");
    assertRefreshedInFull("per_region_window", perRegionWindow, "partitioned by the equi-join key");

    // Matches move between keys; NULL keys never match, on either side.
    spark.sql("UPDATE orders SET cust = NULL WHERE id = 1");
    spark.sql("UPDATE orders SET cust = 10 WHERE id = 4");
    spark.sql("DELETE FROM customers WHERE cust IS NULL AND region = 'nowhere'");
    spark.sql("DELETE FROM orders WHERE cust = 30");
    assertEachRefreshedIncrementally(keyed);
    spark.sql("DELETE FROM customers");
    assertEachRefreshedIncrementally(keyed);
  }

  /**
   * Gold from several facts: aggregates of each, joined on the key they all group by (FULL, LEFT or
   * inner), or an aggregate joined back to the rows it summarises; and rollups, a GROUP BY over
   * another (with HAVING too). The rows of a key come from the source rows of that key alone, so a
   * change recomputes the keys it touches: keys that appear on one side only, leave one side, move
   * between keys, and the NULL key, whose groups never match. An aggregate not grouped by the join
   * key, or a rollup by an inner aggregate's value, refreshes in full, and REFRESH POLICY
   * INCREMENTAL refuses it.
   */
  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void aggregatesJoinedOrRolledUpOnTheirGroupingKeyRecomputeTheTouchedKeys(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmjoinedagg");
    spark.sql("CREATE TABLE trips (id INT, day STRING, city STRING, fare DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE pays (id INT, day STRING, amount DOUBLE) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO trips VALUES (1, 'd1', 'a', 1.00), (2, 'd1', 'b', 2.00), (3, 'd2', 'a', 3.00), (4, NULL, 'a', 1.50)");
    spark.sql("INSERT INTO pays VALUES (1, 'd1', 1.0), (2, 'd2', 2.0), (3, 'd2', 2.5), (8, NULL, 4.0), (9, 'd5', 1.0)");
    String daily =
        "SELECT coalesce(t.day, p.day) AS day, t.n, t.fares, p.total, p.biggest"
            + " FROM (SELECT day, COUNT(*) AS n, SUM(fare) AS fares FROM trips GROUP BY day) t"
            + " FULL JOIN (SELECT day, SUM(amount) AS total, MAX(amount) AS biggest FROM pays GROUP BY day) p ON t.day = p.day";
    String both =
        "SELECT t.day, t.city, t.n, p.total FROM (SELECT day, city, COUNT(*) AS n FROM trips GROUP BY day, city) t"
            + " JOIN (SELECT day, SUM(amount) AS total FROM pays WHERE amount > 1 GROUP BY day) p ON t.day = p.day";
    String enriched =
        "SELECT t.id, t.day, t.fare, d.payments, d.total FROM trips t"
            + " LEFT JOIN (SELECT day, COUNT(*) AS payments, SUM(amount) AS total FROM pays GROUP BY day) d ON t.day = d.day";
    String rollup =
        "SELECT city, COUNT(*) AS days, SUM(n) AS trips, MAX(n) AS busiest FROM"
            + " (SELECT city, day, COUNT(*) AS n FROM trips GROUP BY city, day) GROUP BY city";
    String busyCities =
        "SELECT city, SUM(n) AS trips FROM (SELECT city, day, COUNT(*) AS n FROM trips GROUP BY city, day)"
            + " GROUP BY city HAVING SUM(n) > 1";
    String[][] keyed = {
      {"daily", daily}, {"both_days", both}, {"enriched", enriched}, {"per_city", rollup}, {"busy_cities", busyCities}
    };
    createIncremental(keyed);
    assertThat(ExplainedRefresh.detail(spark, "daily", "definition")).isEqualTo("outer join, recomputed by join key (day)");
    assertThat(ExplainedRefresh.detail(spark, "both_days", "definition")).isEqualTo("join of aggregates, recomputed by join key (day)");
    assertThat(ExplainedRefresh.detail(spark, "per_city", "definition")).isEqualTo("GROUP BY over an aggregate, recomputed by group (city)");
    // Grouped by an inner aggregate's value: a changed trip may move its day to any group.
    String byTrips = "SELECT n, COUNT(*) AS days FROM (SELECT day, COUNT(*) AS n FROM trips GROUP BY day) GROUP BY n";
    assertThatThrownBy(() -> spark.sql("CREATE MATERIALIZED VIEW by_trips REFRESH POLICY INCREMENTAL AS " + byTrips))
        .hasMessageContaining("an aggregate over another aggregate is maintained incrementally only when");
    spark.sql("CREATE MATERIALIZED VIEW by_trips AS " + byTrips);
    // Grouped by city, not by the day it is joined on: any day may change.
    String byCity =
        "SELECT p.day, t.n, p.total FROM (SELECT city, COUNT(*) AS n, MAX(day) AS day FROM trips GROUP BY city) t"
            + " FULL JOIN (SELECT day, SUM(amount) AS total FROM pays GROUP BY day) p ON t.day = p.day";
    assertThatThrownBy(() -> spark.sql("CREATE MATERIALIZED VIEW by_city REFRESH POLICY INCREMENTAL AS " + byCity))
        .hasMessageContaining("which every aggregate it joins groups by");
    spark.sql("CREATE MATERIALIZED VIEW by_city AS " + byCity);

    // A day on one side only, a day leaving one side, a NULL day on both.
    spark.sql("INSERT INTO trips VALUES (5, 'd4', 'c', 4.00), (6, 'd5', 'c', 1.00), (7, NULL, 'b', 2.00)");
    spark.sql("DELETE FROM pays WHERE id = 1");
    assertEachRefreshedIncrementally(keyed);
    assertRefreshedInFull("by_city", byCity, "which every aggregate it joins groups by");
    assertRefreshedInFull("by_trips", byTrips, "an aggregate over another aggregate");

    // Rows move between days, the largest payment of a day goes, a day empties on both sides.
    spark.sql("UPDATE trips SET day = 'd2' WHERE id = 1");
    spark.sql("UPDATE pays SET day = 'd9' WHERE id = 9");
    spark.sql("DELETE FROM pays WHERE id = 3");
    spark.sql("DELETE FROM trips WHERE day = 'd4'");
    spark.sql("INSERT INTO pays VALUES (10, NULL, 0.5)");
    assertEachRefreshedIncrementally(keyed);
    spark.sql("DELETE FROM trips WHERE day IS NULL OR day = 'd2'");
    spark.sql("DELETE FROM pays WHERE day = 'd2'");
    assertEachRefreshedIncrementally(keyed);
  }

  /**
   * The star schema's Gold: facts LEFT JOINed to a dimension and grouped by the dimension's
   * columns, not by the join key. A change of the facts is linear; a change of the dimension
   * recomputes, new minus old, only the facts matching a changed dimension row. Dimension rows
   * appear for orphaned facts, vanish from under matched ones, move between regions and arrive
   * twice (each matching fact then counted twice); facts with NULL keys never match. COUNT, SUM,
   * AVG, MIN/MAX, COUNT(DISTINCT), DISTINCT, a RIGHT JOIN, a USING join, a left-deep chain of two
   * LEFT JOINs and a select list without the key take the same rule, and so do FULL
   * JOINs, a change of either side restricting the other. Outer joins nested on a side that may not
   * match and joins without an equality refresh in full.
   */
  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void outerJoinGroupedByTheJoinedTablesColumnsFollowsItsDeltaRule(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmouterdelta");
    spark.sql("CREATE TABLE orders (id INT, cust INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE customers (cust INT, region STRING, tier INT) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE regions (region STRING, manager STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO orders VALUES (1, 10, 5.00), (2, 10, 7.00), (3, 20, 1.00), (4, NULL, 2.00), (5, 50, 3.00), (6, 30, 4.00)");
    spark.sql("INSERT INTO customers VALUES (10, 'east', 1), (20, 'west', 2), (30, 'west', 1), (NULL, 'nowhere', 3)");
    spark.sql("INSERT INTO regions VALUES ('east', 'ann'), ('west', 'bob'), ('west', 'bea')");
    String perRegion =
        "SELECT c.region, COUNT(*) AS n, COUNT(c.cust) AS matched, SUM(o.amount) AS total, AVG(o.amount) AS mean,"
            + " MIN(o.amount) AS low, MAX(o.id) AS last_id, COUNT(DISTINCT o.cust) AS customers"
            + " FROM orders o LEFT JOIN customers c ON o.cust = c.cust GROUP BY c.region";
    String perTier =
        "SELECT c.tier * 10 AS tier10, SUM(o.amount) AS total FROM orders o LEFT JOIN customers c ON o.cust = c.cust AND c.tier < 3"
            + " WHERE o.amount > 1 GROUP BY c.tier * 10";
    String regionsSeen = "SELECT DISTINCT c.region FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    String rightJoin =
        "SELECT c.region, COUNT(o.id) AS n FROM customers c RIGHT JOIN orders o ON c.cust = o.cust GROUP BY c.region";
    String using = "SELECT region, COUNT(*) AS n FROM orders LEFT JOIN customers USING (cust) GROUP BY region";
    String natural = "SELECT region, tier, COUNT(*) AS n FROM orders NATURAL LEFT JOIN customers GROUP BY region, tier";
    String perManager =
        "SELECT r.manager, c.region, SUM(o.amount) AS total FROM orders o LEFT JOIN customers c ON o.cust = c.cust"
            + " LEFT JOIN regions r ON c.region = r.region GROUP BY r.manager, c.region";
    String withoutKey = "SELECT o.id, c.region FROM orders o LEFT JOIN customers c ON o.cust = c.cust";
    // Common table expressions (a pipeline's temporary views) are inlined, one referenced twice read twice.
    String throughCtes =
        "WITH f AS (SELECT * FROM orders WHERE amount > 0), d AS (SELECT cust, region FROM customers)"
            + " SELECT d.region, COUNT(*) AS n, SUM(f.amount) AS total FROM f LEFT JOIN d ON f.cust = d.cust GROUP BY d.region";
    String cteTwice =
        "WITH d AS (SELECT cust, region FROM customers WHERE tier < 3)"
            + " SELECT d1.region, d2.region AS again, COUNT(*) AS n FROM orders o LEFT JOIN d d1 ON o.cust = d1.cust"
            + " LEFT JOIN d d2 ON d1.cust = d2.cust GROUP BY d1.region, d2.region";
    String nested =
        "SELECT r.manager, COUNT(*) AS n FROM regions r LEFT JOIN (customers c LEFT JOIN orders o ON o.cust = c.cust)"
            + " ON c.region = r.region GROUP BY r.manager";
    // FULL JOINs not grouped by their key: a change of either side recomputes, new minus old, the
    // other side's rows it matches; unmatched rows on both sides come and go.
    String fullByRegion =
        "SELECT c.region, COUNT(*) AS n, COUNT(o.id) AS orders, SUM(o.amount) AS total, COUNT(DISTINCT c.cust) AS customers,"
            + " MAX(c.tier) AS top FROM orders o FULL JOIN customers c ON o.cust = c.cust GROUP BY c.region";
    String fullByAmount =
        "SELECT o.amount > 2 AS big, c.tier, COUNT(*) AS n FROM orders o FULL OUTER JOIN customers c ON o.cust = c.cust"
            + " GROUP BY o.amount > 2, c.tier";
    String fullPairs = "SELECT o.id, c.region FROM orders o FULL JOIN customers c ON c.cust = o.cust AND c.tier < 3";
    String fullDistinct = "SELECT DISTINCT region, amount FROM orders FULL JOIN customers USING (cust)";
    String fullThenLeft =
        "SELECT r.manager, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o FULL JOIN customers c ON o.cust = c.cust"
            + " LEFT JOIN regions r ON c.region = r.region GROUP BY r.manager";
    String fullNested =
        "SELECT c.region, COUNT(*) AS n FROM orders o LEFT JOIN (customers c FULL JOIN regions r ON c.region = r.region)"
            + " ON o.cust = c.cust GROUP BY c.region";
    String nonEqui = "SELECT c.region, COUNT(*) AS n FROM orders o LEFT JOIN customers c ON o.cust < c.cust GROUP BY c.region";
    String orEquality =
        "SELECT c.region, COUNT(*) AS n FROM orders o LEFT JOIN customers c ON o.cust = c.cust OR o.id = c.tier GROUP BY c.region";
    String having =
        "SELECT c.region, COUNT(*) AS n FROM orders o LEFT JOIN customers c ON o.cust = c.cust GROUP BY c.region HAVING COUNT(*) > 1";
    String[][] views = {
      {"per_region", perRegion}, {"per_tier", perTier}, {"regions_seen", regionsSeen}, {"right_join", rightJoin},
      {"using_join", using}, {"natural_join", natural}, {"per_manager", perManager}, {"without_key", withoutKey}, {"through_ctes", throughCtes},
      {"cte_twice", cteTwice}, {"full_by_region", fullByRegion}, {"full_by_amount", fullByAmount}, {"full_pairs", fullPairs},
      {"full_distinct", fullDistinct}, {"full_then_left", fullThenLeft}
    };
    createIncremental(views);
    spark.sql("CREATE MATERIALIZED VIEW nested AS " + nested);
    spark.sql("CREATE MATERIALIZED VIEW full_nested AS " + fullNested);
    spark.sql("CREATE MATERIALIZED VIEW non_equi AS " + nonEqui);
    spark.sql("CREATE MATERIALIZED VIEW or_equality AS " + orEquality);
    spark.sql("CREATE MATERIALIZED VIEW region_having AS " + having);
    assertThatThrownBy(() -> spark.sql("CREATE MATERIALIZED VIEW nested_incremental REFRESH POLICY INCREMENTAL AS " + nested))
        .hasMessageContaining("on the side of another outer join that may not match");
    // No hidden key: the rule needs none.
    assertThat(spark.table("without_key").columns()).containsExactly("id", "region");
    assertThat(ExplainedRefresh.detail(spark, "per_manager", "definition"))
        .startsWith("GROUP BY over joins (LEFT OUTER, LEFT OUTER); a change of an outer join's side that may not match");

    // Order 5's customer arrives, customer 20 leaves (order 3 is orphaned), customer 10 arrives a
    // second time (orders 1 and 2 count twice), a fact arrives for a missing customer.
    spark.sql("INSERT INTO customers VALUES (50, 'north', 1), (10, 'east', 2)");
    spark.sql("DELETE FROM customers WHERE cust = 20");
    spark.sql("INSERT INTO orders VALUES (7, 60, 9.00), (8, NULL, 1.50)");
    assertEachRefreshedIncrementally(views);
    assertRefreshedInFull("nested", nested, "on the side of another outer join that may not match");
    assertRefreshedInFull("full_nested", fullNested, "on the side of another outer join that may not match");
    assertRefreshedInFull("non_equi", nonEqui, "equi-join key");
    assertRefreshedInFull("or_equality", orEquality, "one under OR does not");
    assertRefreshedInFull("region_having", having, "an aggregate with HAVING over an outer join");

    // A customer moves region, a region changes managers, NULL keys never match on either side.
    spark.sql("UPDATE customers SET region = 'north' WHERE cust = 30");
    spark.sql("UPDATE regions SET manager = 'cy' WHERE manager = 'bea'");
    spark.sql("INSERT INTO customers VALUES (NULL, 'void', 1)");
    spark.sql("UPDATE orders SET cust = 60 WHERE id = 1");
    assertEachRefreshedIncrementally(views);

    // The dimension empties: every fact stands unmatched; then it comes back.
    spark.sql("DELETE FROM customers");
    assertEachRefreshedIncrementally(views);
    spark.sql("INSERT INTO customers VALUES (10, 'east', 1), (60, 'south', 1)");
    spark.sql("DELETE FROM orders WHERE id = 2");
    assertEachRefreshedIncrementally(views);
  }

  /**
   * INTERSECT and EXCEPT, with ALL or not, keep a row as often as their inputs' equal rows say: a
   * change recomputes the rows whose selected source columns it carries, under duplicates, NULLs
   * (which set operators treat as equal), a table read on both sides, and columns an input
   * computes (left out of the key). A view whose every column is computed refreshes in full. A
   * UNION ALL carries the key of either input by position, under a set operator, HAVING or a
   * window alike, so a change to its second table is incremental too. The key recompute is the
   * same for copy-on-write sources; the oracle draws both.
   */
  @org.junit.jupiter.api.Test
  void intersectAndExceptRowsFollowTheirInputsEqualRows() {
    String properties = MOR;
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmsetop");
    spark.sql("CREATE TABLE cur (id INT, k STRING, n INT) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE prev (id INT, k STRING, n INT) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO cur VALUES (1, 'a', 1), (2, 'b', 2), (3, 'b', 2), (4, NULL, 3), (5, 'c', NULL), (6, 'd', 4)");
    spark.sql("INSERT INTO prev VALUES (7, 'a', 1), (8, 'b', 2), (9, NULL, 3), (10, 'c', NULL), (11, 'e', 5)");
    String kept = "SELECT k, n FROM cur INTERSECT SELECT k, n FROM prev";
    String gone = "SELECT k, n FROM prev EXCEPT SELECT k, n FROM cur WHERE id < 100";
    String keptAll = "SELECT k, n FROM cur INTERSECT ALL SELECT k, n FROM prev";
    String newAll = "SELECT k, n, upper(k) AS uk FROM cur EXCEPT ALL SELECT k, n, upper(k) FROM prev";
    String nested = "SELECT k FROM cur INTERSECT SELECT k FROM prev EXCEPT SELECT k FROM cur WHERE n > 3";
    String self = "SELECT k, n FROM cur WHERE id % 2 = 0 EXCEPT ALL SELECT k, n FROM cur WHERE id % 3 = 0";
    String computed = "SELECT upper(k) AS uk FROM cur INTERSECT SELECT upper(k) FROM prev";
    // UNION ALL passes the key on by position too, to set operators, HAVING and windows above it.
    String overUnion = "SELECT k, n FROM cur WHERE n < 9 UNION ALL SELECT k, n FROM prev EXCEPT ALL SELECT k, n FROM cur WHERE n > 1";
    String having = "SELECT k, COUNT(*) AS c FROM (SELECT k, n FROM cur UNION ALL SELECT k, n FROM prev) GROUP BY k HAVING COUNT(*) > 2";
    String window = "SELECT k, n, COUNT(*) OVER (PARTITION BY k) AS per_k FROM (SELECT k, n FROM cur UNION ALL SELECT k, n FROM prev)";
    String[][] keyed = {
      {"kept", kept}, {"gone", gone}, {"kept_all", keptAll}, {"new_all", newAll}, {"nested", nested}, {"self", self},
      {"over_union", overUnion}, {"union_having", having}, {"union_window", window}
    };
    createIncremental(keyed);
    spark.sql("CREATE MATERIALIZED VIEW computed AS " + computed);
    // The computed column is left out of the key.
    assertThat(ExplainedRefresh.detail(spark, "new_all", "definition")).isEqualTo("INTERSECT or EXCEPT, recomputed by key (k, n)");
    assertThatThrownBy(() -> spark.sql("CREATE MATERIALIZED VIEW computed_incremental REFRESH POLICY INCREMENTAL AS " + computed))
        .hasMessageContaining("reads unchanged from a source table");

    // 'b' gains a third copy in cur, 'd' appears in prev, the NULL row leaves cur, 'a' changes its n.
    spark.sql("INSERT INTO cur VALUES (12, 'b', 2)");
    spark.sql("INSERT INTO prev VALUES (13, 'd', 4), (14, 'b', 2)");
    spark.sql("DELETE FROM cur WHERE k IS NULL");
    spark.sql("UPDATE cur SET n = 9 WHERE k = 'a'");
    assertThat(explainStrategy("kept")).startsWith("INCREMENTAL: recompute the view rows of each key");
    assertEachRefreshedIncrementally(keyed);
    assertRefreshedInFull("computed", computed, "reads unchanged from a source table");

    // Rows move between keys and sides; one side empties.
    spark.sql("UPDATE prev SET k = NULL, n = NULL WHERE id = 10");
    spark.sql("UPDATE cur SET k = NULL, n = NULL WHERE id = 5");
    spark.sql("DELETE FROM cur WHERE id IN (2, 3)");
    assertEachRefreshedIncrementally(keyed);
    spark.sql("DELETE FROM prev");
    assertEachRefreshedIncrementally(without(keyed, "self"));
    assertThat(refresh("self").getString(1)).isEqualTo("NO_CHANGE");
  }

  /**
   * A filter by IN or EXISTS (NOT EXISTS too), or by their join forms LEFT SEMI and LEFT ANTI JOIN,
   * keeps a row by the subquery rows matched on its key: a change to either table recomputes the
   * view rows of the keys it carries, NULL keys (which match nothing) included, and so does a GROUP
   * BY of the matched column over such a filter. A scalar subquery and an aggregate grouped by
   * another column depend on rows of any key, and refresh in full; so does NOT IN when its subquery
   * gains a NULL ({@link #notInIsMaintainedByKeyWhileItsSubqueryKeepsItsNullsAndRows}).
   */
  @org.junit.jupiter.api.Test
  void inAndExistsSubqueriesRecomputeTheRowsOfTheKeysTheChangeTouches() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmsemi");
    spark.sql("CREATE TABLE orders (id INT, cust INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE vip (cust INT, tier STRING) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO orders VALUES (1, 10, 5.00), (2, 10, 7.00), (3, 20, 1.00), (4, NULL, 2.00), (5, 30, 9.00)");
    spark.sql("INSERT INTO vip VALUES (10, 'gold'), (20, 'silver'), (10, 'gold')");
    String[][] keyed = {
      {"in_vip", "SELECT id, cust, amount FROM orders WHERE cust IN (SELECT cust FROM vip WHERE tier <> 'x')"},
      {"gold", "SELECT o.id, o.cust FROM orders o WHERE EXISTS (SELECT 1 FROM vip v WHERE v.cust = o.cust AND v.tier = 'gold')"},
      {"not_vip", "SELECT id, cust, amount FROM orders o WHERE NOT EXISTS (SELECT 1 FROM vip v WHERE v.cust = o.cust)"},
      {"big_or_vip", "SELECT id, cust FROM orders WHERE amount > 6 OR cust IN (SELECT cust FROM vip)"},
      // Each customer's largest orders: the table on both sides.
      {"top_order", "SELECT id, cust, amount FROM orders o WHERE NOT EXISTS (SELECT 1 FROM orders p WHERE p.cust = o.cust AND p.amount > o.amount)"},
      // The join forms of EXISTS and NOT EXISTS.
      {"semi_vip", "SELECT o.id, o.cust, o.amount FROM orders o LEFT SEMI JOIN vip v ON o.cust = v.cust AND v.tier <> 'x'"},
      {"anti_vip", "SELECT o.id, o.cust FROM orders o LEFT ANTI JOIN vip v ON v.cust = o.cust"},
      {"top_order_join", "SELECT o.id, o.cust, o.amount FROM orders o LEFT ANTI JOIN orders p ON p.cust = o.cust AND p.amount > o.amount"},
      // Aggregates over them, grouped by the matched column (and another: the key is the matched one).
      {"vip_totals", "SELECT cust, COUNT(*) AS n, SUM(amount) AS total FROM orders WHERE cust IN (SELECT cust FROM vip WHERE tier <> 'x') GROUP BY cust"},
      {"other_amounts", "SELECT o.cust, o.amount, COUNT(*) AS n FROM orders o LEFT ANTI JOIN vip v ON v.cust = o.cust GROUP BY o.cust, o.amount"},
      // A window partitioned by the matched column.
      {"ranked_vip", "SELECT o.id, o.cust, o.amount, rank() OVER (PARTITION BY o.cust ORDER BY o.amount DESC) AS r"
          + " FROM orders o LEFT SEMI JOIN vip v ON v.cust = o.cust"},
    };
    createIncremental(keyed);
    String notIn = "SELECT id, cust FROM orders WHERE cust NOT IN (SELECT cust FROM vip)";
    String scalar = "SELECT id, cust FROM orders WHERE amount > (SELECT AVG(amount) FROM orders)";
    String unselected = "SELECT id, amount FROM orders WHERE cust IN (SELECT cust FROM vip)";
    String byAmount = "SELECT amount, COUNT(*) AS n FROM orders WHERE cust IN (SELECT cust FROM vip) GROUP BY amount";
    String perAmount = "SELECT id, amount, COUNT(*) OVER (PARTITION BY amount) AS n FROM orders WHERE cust IN (SELECT cust FROM vip)";
    spark.sql("CREATE MATERIALIZED VIEW not_in AS " + notIn);
    spark.sql("CREATE MATERIALIZED VIEW scalar AS " + scalar);
    spark.sql("CREATE MATERIALIZED VIEW unselected AS " + unselected);
    spark.sql("CREATE MATERIALIZED VIEW by_amount AS " + byAmount);
    spark.sql("CREATE MATERIALIZED VIEW per_amount AS " + perAmount);
    // Matched on columns of different types, Spark casts one side, and no key follows a cast.
    spark.sql("CREATE TABLE vip_wide (cust BIGINT) USING iceberg");
    spark.sql("INSERT INTO vip_wide VALUES (10), (30)");
    String castJoin = "SELECT o.id, o.cust FROM orders o LEFT SEMI JOIN vip_wide w ON w.cust = o.cust";
    String castIn = "SELECT id, cust FROM orders WHERE cust IN (SELECT cust FROM vip_wide)";
    spark.sql("CREATE MATERIALIZED VIEW cast_join AS " + castJoin);
    spark.sql("CREATE MATERIALIZED VIEW cast_in AS " + castIn);
    assertThat(ExplainedRefresh.detail(spark, "gold", "definition")).isEqualTo("IN, NOT IN or EXISTS subquery or semi join, recomputed by key (cust)");
    assertThat(ExplainedRefresh.detail(spark, "anti_vip", "definition")).isEqualTo("IN, NOT IN or EXISTS subquery or semi join, recomputed by key (cust)");
    assertThat(ExplainedRefresh.detail(spark, "other_amounts", "definition"))
        .isEqualTo("GROUP BY over an IN, NOT IN or EXISTS subquery or semi join, recomputed by group (cust)");
    // A NOT IN of two values: a row with a NULL in one depends on the rows matching the other.
    assertThatThrownBy(() -> spark.sql("CREATE MATERIALIZED VIEW not_in_pairs REFRESH POLICY INCREMENTAL AS"
            + " SELECT id, cust FROM orders WHERE (id, cust) NOT IN (SELECT cust, cust FROM vip)"))
        .hasMessageContaining("NOT IN of several values");

    // 30 becomes a VIP, 20 stops being one, a NULL customer arrives on both sides, orders move.
    spark.sql("INSERT INTO vip VALUES (30, 'gold'), (NULL, 'gold')");
    spark.sql("DELETE FROM vip WHERE cust = 20");
    spark.sql("INSERT INTO orders VALUES (6, NULL, 8.00), (7, 20, 3.00)");
    spark.sql("UPDATE orders SET cust = 30 WHERE id = 2");
    assertThat(explainStrategy("in_vip")).startsWith("INCREMENTAL: recompute the view rows of each key");
    assertEachRefreshedIncrementally(keyed);
    assertRefreshedInFull("not_in", notIn, "NOT IN");
    assertThat(spark.sql("SELECT * FROM not_in").count()).as("NOT IN with a NULL in the subquery keeps no row").isZero();
    assertRefreshedInFull("scalar", scalar, "scalar subqueries");
    assertRefreshedIncrementally("unselected", unselected);
    assertRefreshedInFull("by_amount", byAmount, "groups by a column the subquery's or the joined table's rows are matched on");
    assertRefreshedInFull("per_amount", perAmount, "partitioned by a column the subquery's or the joined table's rows are matched on");
    assertRefreshedInFull("cast_join", castJoin, "cust is matched through a CAST from INT to BIGINT (the columns' types differ)");
    assertRefreshedInFull("cast_in", castIn, "cust is matched through a CAST from INT to BIGINT (the columns' types differ)");

    // 10 turns silver (a VIP still, gold no more), 30 turns 'x', then every VIP goes.
    spark.sql("DELETE FROM vip WHERE cust = 10");
    spark.sql("INSERT INTO vip VALUES (10, 'silver')");
    spark.sql("UPDATE vip SET tier = 'x' WHERE cust = 30");
    spark.sql("DELETE FROM orders WHERE id = 1");
    assertEachRefreshedIncrementally(keyed);
    spark.sql("DELETE FROM vip");
    assertEachRefreshedIncrementally(without(without(keyed, "top_order"), "top_order_join"));
    assertThat(refresh("top_order").getString(1)).isEqualTo("NO_CHANGE");
    assertThat(refresh("top_order_join").getString(1)).isEqualTo("NO_CHANGE");
    assertThat(spark.sql("SELECT * FROM not_vip").count()).isEqualTo(spark.sql("SELECT * FROM orders").count());
    assertThat(spark.sql("SELECT * FROM anti_vip").count()).isEqualTo(spark.sql("SELECT * FROM orders").count());
  }

  /**
   * {@code x NOT IN (subquery)} keeps a row by the subquery rows equal to x, except that an empty
   * subquery keeps every row and one holding a NULL keeps none, a NULL x included: a change that
   * leaves the subquery as empty, or as NULL-free, as it was recomputes the rows of the values it
   * touches, and one that changes that state refreshes in full, saying why.
   */
  @org.junit.jupiter.api.Test
  void notInIsMaintainedByKeyWhileItsSubqueryKeepsItsNullsAndRows() {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmnotin");
    spark.sql("CREATE TABLE trips (id INT, driver INT, fare DOUBLE) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE banned (driver INT, since DATE) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO trips VALUES (1, 10, 5.0), (2, 10, 7.0), (3, 20, 1.0), (4, NULL, 2.0), (5, 30, 9.0), (6, 40, 3.0)");
    spark.sql("INSERT INTO banned VALUES (20, DATE'2025-01-01'), (50, DATE'2025-02-01')");
    String[][] views = {
      {"allowed", "SELECT id, driver, fare FROM trips WHERE driver NOT IN (SELECT driver FROM banned WHERE since < DATE'2026-01-01')"},
      {"allowed_or_cheap", "SELECT id, driver FROM trips WHERE fare < 2 OR driver NOT IN (SELECT driver FROM banned)"},
      {"allowed_fares", "SELECT driver, COUNT(*) AS n, SUM(fare) AS total FROM trips WHERE driver NOT IN (SELECT driver FROM banned) GROUP BY driver"},
      // The key unselected: kept hidden.
      {"allowed_ids", "SELECT id, fare FROM trips WHERE driver NOT IN (SELECT driver FROM banned)"},
      // The filter inside a common table expression.
      {"allowed_cte", "WITH open_trips AS (SELECT id, driver FROM trips WHERE driver NOT IN (SELECT driver FROM banned))"
          + " SELECT id, driver FROM open_trips"},
    };
    createIncremental(views);

    // Drivers are banned and pardoned, trips come and go, a trip's driver changes: no NULL, never empty.
    spark.sql("INSERT INTO banned VALUES (30, DATE'2025-03-01'), (60, DATE'2027-01-01')");
    spark.sql("DELETE FROM banned WHERE driver = 20");
    spark.sql("INSERT INTO trips VALUES (7, NULL, 4.0), (8, 20, 6.0), (9, 30, 1.5)");
    spark.sql("UPDATE trips SET driver = 50 WHERE id = 2");
    spark.sql("DELETE FROM trips WHERE id = 6");
    assertThat(explainStrategy("allowed"))
        .startsWith("INCREMENTAL: recompute the view rows of each key")
        .endsWith("; FULL instead when a NOT IN subquery empties or gets its first row, or gets its first NULL or loses its last");
    assertEachRefreshedIncrementally(views);
    assertThat(refresh("allowed").getString(1)).isEqualTo("NO_CHANGE");
    assertThat(spark.sql("SELECT id FROM allowed ORDER BY id").collectAsList().stream().map(r -> r.getInt(0)).toList())
        .as("trips of drivers not banned before 2026, and no trip without a driver").containsExactly(1, 3, 8);
    // A trip without a driver alone: no banned driver matches it, yet the bans drop it.
    spark.sql("INSERT INTO trips VALUES (13, NULL, 1.0)");
    assertEachRefreshedIncrementally(views);
    assertThat(spark.sql("SELECT * FROM allowed WHERE id = 13").count()).isZero();
    spark.sql("DELETE FROM trips WHERE id = 13");

    // A NULL among the banned drivers: no trip passes NOT IN, whatever its driver.
    spark.sql("INSERT INTO banned VALUES (NULL, DATE'2025-04-01')");
    // EXPLAIN REFRESH reads the subquery at both snapshots as the refresh does, and says so first.
    for (String[] view : views) {
      assertThat(explainStrategy(view[0]))
          .as(view[0])
          .startsWith("FULL: the NOT IN subquery over")
          .contains("went from without a NULL to holding a NULL");
      assertRefreshedInFull(view[0], view[1], "the NOT IN subquery over");
    }
    assertThat(refresh("allowed").getString(1)).isEqualTo("NO_CHANGE");
    assertThat(spark.sql("SELECT * FROM allowed").count()).isZero();
    // With the NULL still there, trips change: each change is maintained by key again.
    spark.sql("INSERT INTO trips VALUES (10, 70, 8.0), (11, NULL, 0.5)");
    spark.sql("UPDATE trips SET fare = fare + 1 WHERE id = 1");
    assertEachRefreshedIncrementally(views);
    assertThat(spark.sql("SELECT id FROM allowed_or_cheap ORDER BY id").collectAsList().stream().map(r -> r.getInt(0)).toList())
        .as("only the cheap trips").containsExactly(3, 9, 11);

    // The NULL leaves, then every ban is lifted (the subquery empties): each a full refresh, the
    // reason saying which state the subquery left and entered.
    spark.sql("DELETE FROM banned WHERE driver IS NULL");
    Row lifted = refresh("allowed");
    assertThat(lifted.getString(1)).isEqualTo("FULL");
    assertThat(lifted.getString(2)).contains("went from holding a NULL to without a NULL");
    assertMatches("allowed", views[0][1]);
    spark.sql("DELETE FROM banned");
    String predicted = explainStrategy("allowed");
    Row emptied = refresh("allowed");
    assertThat(predicted).as("EXPLAIN REFRESH before the refresh").isEqualTo("FULL: " + emptied.getString(2));
    assertThat(emptied.getString(1)).isEqualTo("FULL");
    assertThat(emptied.getString(2)).contains("went from without a NULL to empty");
    assertMatches("allowed", views[0][1]);
    assertThat(spark.sql("SELECT * FROM allowed WHERE driver IS NULL").count()).as("an empty subquery keeps NULL drivers").isEqualTo(3);
    // Empty at both snapshots: incremental, NULL drivers kept.
    spark.sql("INSERT INTO trips VALUES (12, NULL, 2.5)");
    assertRefreshedIncrementally("allowed", views[0][1]);
    assertThat(spark.sql("SELECT * FROM allowed WHERE driver IS NULL").count()).isEqualTo(4);
    // A ban dated after the filter's cut-off leaves the subquery empty: still incremental.
    spark.sql("INSERT INTO banned VALUES (10, DATE'2026-06-01')");
    assertRefreshedIncrementally("allowed", views[0][1]);
    // 50 more such bans: the rows read are the 50 of the change, the 1 and 51 of the two reads of
    // the subquery that check its state, the 51 of the recomputation's (whole) read of it, and at
    // most every trip for the recomputed drivers.
    spark.sql("INSERT INTO banned SELECT CAST(id AS INT), DATE'2027-01-01' FROM range(1000, 1050)");
    long tripRecords = spark.sql("SELECT sum(record_count) FROM lake." + ns + ".trips.files WHERE content = 0").first().getLong(0);
    Row moreBans = refresh("allowed");
    assertThat(moreBans.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(moreBans.getLong(3)).as("rows read").isBetween(50L + 1 + 51 + 51, 50L + 1 + 51 + 51 + tripRecords);
    assertMatches("allowed", views[0][1]);
    // A first ban that counts: full again, NULL drivers gone.
    spark.sql("INSERT INTO banned VALUES (10, DATE'2025-06-01')");
    assertRefreshedInFull("allowed", views[0][1], "went from empty to without a NULL");
    assertThat(spark.sql("SELECT * FROM allowed WHERE driver IS NULL OR driver = 10").count()).isZero();
  }

  /**
   * Merge-on-read tables written one key range per file: ev (id 0 to 3999, k = id DIV 4, 4 rows a
   * key, 1,000 a file) and dim (k 0 to 999 with its label, 250 a file).
   */
  private void createKeyRangeTables(String ns) {
    spark.sql("CREATE TABLE ev (id INT, k INT, v INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE dim (k INT, label STRING) USING iceberg TBLPROPERTIES (" + MOR + ")");
    for (int range = 0; range < 4; range++) {
      spark.sql("INSERT INTO ev SELECT /*+ REPARTITION(1) */ CAST(id AS INT), CAST(id DIV 4 AS INT), CAST(id % 7 AS INT)"
          + " FROM range(" + range * 1000 + ", " + (range + 1) * 1000 + ")");
      spark.sql("INSERT INTO dim SELECT /*+ REPARTITION(1) */ CAST(id AS INT), concat('k', id)"
          + " FROM range(" + range * 250 + ", " + (range + 1) * 250 + ")");
    }
    assertThat(spark.sql("SELECT * FROM lake." + ns + ".ev.files").count()).isEqualTo(4);
  }

  /**
   * A keyed recomputation reads, of each source column equal to the key, the rows holding a touched
   * key: the filter sits on the read, so Iceberg skips the data files whose bounds (or null counts)
   * hold no touched key. Each table here is written one key range per file; a change in the newest
   * range reads that range's files, not the table, under every keyed operator, a NULL key, a table
   * on both sides, two tables and aggregates joined on the key (filtered below their GROUP BY); a
   * change spread over every range reads them all and stays exact.
   */
  @org.junit.jupiter.api.Test
  void aKeyedRecomputeReadsOnlyTheSourceFilesHoldingTheTouchedKeys() {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmnarrow");
    createKeyRangeTables(ns);
    String[][] keyed = {
      {"latest", "SELECT id, k, v FROM (SELECT id, k, v, row_number() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM ev) WHERE rn = 1"},
      {"busy", "SELECT k, COUNT(*) AS n, SUM(v) AS total FROM ev GROUP BY k HAVING SUM(v) > 25"},
      {"labelled", "SELECT e.id, e.k, d.label FROM ev e LEFT JOIN dim d ON e.k = d.k"},
      {"unlabelled", "SELECT k FROM ev EXCEPT SELECT k FROM dim"},
      {"top", "SELECT id, k, v FROM ev o WHERE NOT EXISTS (SELECT 1 FROM ev p WHERE p.k = o.k AND p.v > o.v)"},
      {"per_key", "SELECT coalesce(e.k, d.k) AS k, e.n, e.total, d.labels FROM (SELECT k, COUNT(*) AS n, SUM(v) AS total FROM ev"
          + " GROUP BY k) e FULL JOIN (SELECT k, COUNT(*) AS labels FROM dim GROUP BY k) d ON e.k = d.k"},
    };
    createIncremental(keyed);

    // Late changes in the newest range of keys (750 to 999): one file of each table holds them.
    spark.sql("UPDATE ev SET v = v + 10 WHERE id IN (3950, 3991)");
    spark.sql("DELETE FROM ev WHERE id = 3962");
    spark.sql("INSERT INTO ev VALUES (4000, 999, 1)");
    spark.sql("UPDATE dim SET label = 'late' WHERE k = 998");
    assertThat(explainStrategy("latest")).contains("reading the source rows of those partitions alone");
    // Without the filter, each would read the 4,003 rows of ev (and dim's 1,001) once more.
    assertEachReads(keyed, 2 * 1003 + 2 * 251);

    // A NULL key: only files holding NULLs in k can hold rows of it.
    spark.sql("INSERT INTO ev VALUES (4001, NULL, 5), (4002, NULL, 6)");
    assertEachReads(without(keyed, "labelled"), 2 + 2 + 2);
    assertRefreshedIncrementally("labelled", keyed[2][1]);

    // 250 keys, more than Iceberg compares one by one with a file's bounds: their range prunes.
    spark.sql("UPDATE ev SET v = v + 1 WHERE id >= 3000 AND id < 4000 AND id % 4 = 0");
    assertEachReads(keyed, 4000);

    // A change in every range reads every file, and stays exact.
    spark.sql("UPDATE ev SET v = v + 1 WHERE id % 1000 = 5");
    spark.sql("DELETE FROM dim WHERE k % 100 = 7");
    assertEachRefreshedIncrementally(keyed);
  }

  /**
   * An aggregate that recomputes the groups a change touches (a BOOL_OR, a SUM(DISTINCT), a MAX that
   * lost its value) reads, of each source column equal to a grouping column, the files that can
   * hold a touched group: from a join's both sides, for the COUNT(DISTINCT) value counts too, and
   * for the NULL group by null counts. A group computed from an expression is recomputed from
   * every row.
   */
  @org.junit.jupiter.api.Test
  void aGroupRecomputeReadsOnlyTheSourceFilesHoldingTheTouchedGroups() {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmgroupnarrow");
    createKeyRangeTables(ns);
    String[][] grouped = {
      {"flags", "SELECT k, bool_or(v > 5) AS high, COUNT(*) AS n FROM ev GROUP BY k"},
      {"dsum", "SELECT k, SUM(DISTINCT v) AS vs, COUNT(DISTINCT v) AS dv FROM ev GROUP BY k"},
      {"joined", "SELECT e.k, d.label, MAX(e.v) AS top, COUNT(*) AS n FROM ev e JOIN dim d ON e.k = d.k GROUP BY e.k, d.label"},
    };
    String[] byExpression = {"by_rest", "SELECT k % 10 AS r, SUM(DISTINCT v) AS vs FROM ev GROUP BY k % 10"};
    createIncremental(grouped);
    createIncremental(new String[][] {byExpression});

    // Late changes in the newest range of keys (750 to 999): one file of each table holds them.
    // Row 3961 holds the maximum of group 990, so that group of joined is recomputed.
    spark.sql("UPDATE ev SET v = v + 10 WHERE id = 3950");
    spark.sql("DELETE FROM ev WHERE id = 3961");
    spark.sql("INSERT INTO ev VALUES (4000, 999, 1)");
    assertThat(explainStrategy("flags")).contains("recompute the groups the change touches, reading the source rows of those groups alone");
    assertThat(explainStrategy("joined")).contains("recompute a group whose MIN or MAX may have been deleted, reading the source rows");
    assertThat(explainStrategy("by_rest")).contains("reading every source row (no grouping column is a source column)");
    // The change (the rewritten file, read by position, and two new rows) and the recomputation
    // (that file and the new rows again); without the filter, the 4,002 rows of ev.
    assertEachReads(without(grouped, "joined"), 2 * 1002);
    // joined recomputes group 990 alone, whose MAX went: ev's file of the range and dim's.
    Row rechecked = refresh("joined");
    assertThat(rechecked.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(rechecked.<Long>getAs("rows_read")).isEqualTo(1002 + 1000 + 250);
    assertMatches("joined", grouped[2][1]);
    Row whole = refresh(byExpression[0]);
    assertThat(whole.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(whole.<Long>getAs("rows_read")).isGreaterThan(4000);
    assertMatches(byExpression[0], byExpression[1]);

    // A NULL group: only files holding NULLs in k can hold its rows.
    spark.sql("INSERT INTO ev VALUES (4001, NULL, 5), (4002, NULL, 6)");
    assertEachReads(without(grouped, "joined"), 2 + 2);
    assertRefreshedIncrementally("joined", grouped[2][1]);

    // A change in every range reads every file, and stays exact.
    spark.sql("UPDATE ev SET v = v + 1 WHERE id % 1000 = 5");
    spark.sql("DELETE FROM ev WHERE id % 1000 = 6");
    spark.sql("DELETE FROM dim WHERE k % 100 = 7");
    assertEachRefreshedIncrementally(grouped);
    assertRefreshedIncrementally(byExpression[0], byExpression[1]);
  }

  /**
   * Beyond the keys that are listed in the reads' filter, the reads are still narrowed to the
   * touched keys' range: a change of 51,000 keys in the newest of four key ranges reads that
   * range's file, for a window, a HAVING and a recomputed aggregate alike, and stays exact.
   */
  @org.junit.jupiter.api.Test
  void beyondTheListedKeysTheReadsAreNarrowedToTheTouchedKeysRange() {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmrangenarrow");
    spark.sql("CREATE TABLE big (k INT, v INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    int perFile = 55_000;
    for (int range = 0; range < 4; range++) {
      spark.sql("INSERT INTO big SELECT /*+ REPARTITION(1) */ CAST(id AS INT), CAST(id % 7 AS INT)"
          + " FROM range(" + range * perFile + ", " + (range + 1) * perFile + ")");
    }
    assertThat(spark.sql("SELECT * FROM lake." + ns + ".big.files").count()).isEqualTo(4);
    String[][] keyed = {
      {"latest", "SELECT k, v FROM (SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM big) WHERE rn = 1"},
      {"kept", "SELECT k, SUM(v) AS total FROM big GROUP BY k HAVING SUM(v) > 2"},
      {"flags", "SELECT k, bool_or(v > 5) AS high FROM big GROUP BY k"},
    };
    createIncremental(keyed);

    int touched = 51_000;
    assertThat(touched).isGreaterThan(KeyNarrowing.MAX_LISTED_KEYS);
    spark.sql("UPDATE big SET v = v + 1 WHERE k >= " + 3 * perFile + " AND k < " + (3 * perFile + touched));
    // The change (the newest file, read for its deleted positions, and the updated rows) and the
    // recomputation (that file and the updated rows again); reading the table whole would add the
    // 165,000 rows of the three older files.
    assertEachReads(keyed, 2L * (perFile + touched));
  }

  /** Refreshes each of {@code views}, asserting it is incremental, right, and read at most {@code rows} rows. */
  private void assertEachReads(String[][] views, long rows) {
    for (String[] mv : views) {
      Row result = refresh(mv[0]);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv[0], result.getString(2)).isEqualTo("INCREMENTAL");
      assertThat(result.<Long>getAs("rows_read")).as("rows read by %s", mv[0]).isLessThanOrEqualTo(rows);
      assertMatches(mv[0], mv[1]);
    }
  }

  /**
   * COUNT(DISTINCT) is kept from a hidden count per group and value: the refresh reads only the
   * change (and the touched groups' counts), never the source in full, under inserts, duplicates,
   * deletes of one copy or the last copy of a value, updates, NULL values and keys, emptied groups,
   * and alongside MAX (rechecked groups) and SUM(DISTINCT) (recomputed groups). Without GROUP BY: {@link
   * #aggregatesWithoutGroupByKeepTheirOneRowAsTheInputEmptiesAndRefills}.
   */
  @org.junit.jupiter.api.Test
  void countDistinctFollowsChangesFromPerValueCounts() {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmdistinct");
    spark.sql("CREATE TABLE t (id INT, k STRING, d STRING, v INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql(
        "INSERT INTO t VALUES (1, 'a', 'x', 1), (2, 'a', 'x', 2), (3, 'a', 'y', 3), (4, 'b', 'x', 4), (5, NULL, 'z', 5),"
            + " (6, 'b', NULL, 6), (7, 'c', 'w', 7)");
    String[][] views = {
      {"ds", "SELECT upper(k) AS uk, COUNT(*) AS n, COUNT(DISTINCT d) AS ds, COUNT(DISTINCT v % 2) AS parities FROM t GROUP BY 1"},
      {"ds_max", "SELECT k, MAX(d) AS top, COUNT(DISTINCT d) AS ds FROM t WHERE id < 100 GROUP BY k"},
      {"ds_dsum", "SELECT k, SUM(DISTINCT v) AS vs, COUNT(DISTINCT d) AS ds FROM t GROUP BY k"},
      // MVs over the first: its change is read in its view columns, without the maps.
      {"ds_over", "SELECT uk, ds, n FROM ds WHERE n > 1"},
      {"ds_total", "SELECT COUNT(*) AS groups, SUM(ds) AS total FROM ds"},
    };
    for (String[] view : views) {
      spark.sql("CREATE MATERIALIZED VIEW " + view[0] + " AS " + view[1]);
    }
    // The maps are hidden from readers: only the view's columns show.
    assertThat(spark.sql("SELECT * FROM ds").columns()).containsExactly("uk", "n", "ds", "parities");
    assertThat(stateOf(ns, "ds", 2, "A")).isEqualTo("x=2,y=1");

    String[] steps = {
      // A second copy of a value, a new value, a new group.
      "INSERT INTO t VALUES (8, 'a', 'x', 8), (9, 'a', 'v', 9), (10, 'd', 'q', 10)",
      // One of the copies of x in a goes: still counted. The only y goes: no longer counted.
      "DELETE FROM t WHERE id IN (1, 3)",
      // An update moves a value between groups and turns one into NULL.
      "UPDATE t SET k = 'b', d = CASE WHEN id = 9 THEN NULL ELSE d END WHERE id IN (2, 9)",
      // Group c empties out, then comes back with another value; the NULL key group changes.
      "DELETE FROM t WHERE k = 'c'",
      "INSERT INTO t VALUES (11, 'c', 'u', 11), (12, NULL, 'z', 12), (13, NULL, 'r', 13)",
      "MERGE INTO t USING (SELECT 4 AS id, 'y' AS d UNION ALL SELECT 14 AS id, 'x' AS d) s ON t.id = s.id"
          + " WHEN MATCHED THEN UPDATE SET d = s.d WHEN NOT MATCHED THEN INSERT (id, k, d, v) VALUES (s.id, 'a', s.d, 14)",
    };
    for (String step : steps) {
      spark.sql(step);
      java.util.Map<String, Long> read;
      if (step.equals(steps[0])) {
        // Once ds moved, EXPLAIN says how an MV over it reads its change.
        read = refreshIncrementally(new String[][] {views[0]}, step);
        assertThat(explainedSource("ds_over")).contains("in 3 of its 4 view columns (ds, n, uk)");
        read.putAll(refreshIncrementally(without(views, "ds"), step));
      } else {
        read = refreshIncrementally(views, step);
      }
      // SUM(DISTINCT) recomputes the touched groups from every source row on top of the change (as MAX does
      // for a group that may have lost its maximum); the distinct counts are kept from the change.
      assertThat(read.get("ds")).as("rows ds read after %s", step).isLessThan(read.get("ds_dsum"));
    }
    // The state holds exactly the values left in each group, with their row counts.
    assertThat(stateOf(ns, "ds", 2, "A")).isEqualTo("x=2");
    assertThat(stateOf(ns, "ds", 2, "B")).isEqualTo("x=1,y=1");
    assertThat(stateOf(ns, "ds", 2, "C")).isEqualTo("u=1");
    assertThat(stateOf(ns, "ds", 2, null)).isEqualTo("r=1,z=2");

    // A storage table without the map (as an earlier Floe created it) is refreshed in full once,
    // which adds the map; the refreshes after it are incremental again.
    spark.sql("ALTER TABLE lake." + ns + ".ds__storage DROP COLUMN " + StorageLayout.distinctState(2));
    spark.sql("INSERT INTO t VALUES (15, 'a', 'p', 15)");
    Row upgrade = refresh("ds");
    assertThat(upgrade.getString(1)).isEqualTo("FULL");
    assertThat(upgrade.getString(2)).contains("lacks the bookkeeping column(s) " + StorageLayout.distinctState(2));
    assertMatches("ds", views[0][1]);
    assertThat(stateOf(ns, "ds", 2, "A")).isEqualTo("p=1,x=2");
    spark.sql("DELETE FROM t WHERE id = 15");
    assertRefreshedIncrementally("ds", views[0][1]);
    assertThat(stateOf(ns, "ds", 2, "A")).isEqualTo("x=2");

    // An earlier Floe kept the values in a map column of the same name: refreshed in full once,
    // which writes the column anew, packed.
    String state = StorageLayout.distinctState(2);
    spark.sql("ALTER TABLE lake." + ns + ".ds__storage DROP COLUMN " + state);
    spark.sql("ALTER TABLE lake." + ns + ".ds__storage ADD COLUMN " + state + " MAP<STRING, BIGINT>");
    spark.sql("INSERT INTO t VALUES (16, 'a', 'q', 16)");
    Row packed = refresh("ds");
    assertThat(packed.getString(1)).isEqualTo("FULL");
    assertThat(packed.getString(2)).contains("keeps the bookkeeping column(s) " + state + " in the form an earlier Floe wrote");
    assertMatches("ds", views[0][1]);
    assertThat(stateOf(ns, "ds", 2, "A")).isEqualTo("q=1,x=2");
    spark.sql("DELETE FROM t WHERE id = 16");
    assertRefreshedIncrementally("ds", views[0][1]);
    assertThat(stateOf(ns, "ds", 2, "A")).isEqualTo("x=2");
  }

  /**
   * A DOUBLE or FLOAT sum cannot take back by subtraction what it absorbed: a NaN or an infinity
   * stays in it, and 1e16 + 1 − 1e16 gives 0. The groups where a change removes such a value, or
   * removes from such a sum, or removes values that cancel most of it, are recomputed from their
   * rows, as a group whose MIN was removed is; the others still follow the change alone.
   */
  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void floatingSumsAreRecomputedWhereSubtractionCannotUndoWhatTheyAbsorbed(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmfloat");
    spark.sql("CREATE TABLE f (id INT, g STRING, x DOUBLE, y FLOAT) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql(
        "INSERT INTO f VALUES (1, 'big', 1e16, 1e8), (2, 'big', 1.0, 1.0), (3, 'nan', double('NaN'), 1.0),"
            + " (4, 'nan', 2.0, 1.0), (5, 'inf', double('Infinity'), float('Infinity')), (6, 'inf', 3.0, 3.0),"
            + " (7, 'both', double('Infinity'), 1.0), (8, 'both', double('-Infinity'), 1.0), (9, 'both', 4.0, 1.0),"
            + " (10, 'plain', 0.5, 0.5), (11, 'plain', 0.25, 0.25)");
    String grouped = "SELECT g, SUM(x) AS sx, AVG(x) AS ax, SUM(y) AS sy, COUNT(*) AS c FROM f GROUP BY g";
    String overall = "SELECT SUM(x) AS sx, AVG(x) AS ax FROM f";
    spark.sql("CREATE MATERIALIZED VIEW sums AS " + grouped);
    spark.sql("CREATE MATERIALIZED VIEW total AS " + overall);

    spark.sql("DELETE FROM f WHERE id IN (1, 3, 5, 8, 11)");
    for (String mv : new String[] {"sums", "total"}) {
      Row result = refresh(mv);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertThat(spark.sql("SELECT g, sx, ax, sy FROM sums ORDER BY g").collectAsList().stream().map(Row::toString))
        .containsExactly("[big,1.0,1.0,1.0]", "[both,Infinity,Infinity,2.0]", "[inf,3.0,3.0,3.0]", "[nan,2.0,2.0,1.0]",
            "[plain,0.5,0.5,0.5]");
    assertThat(spark.sql("SELECT sx FROM total").first().getDouble(0)).isInfinite();
    assertMatches("sums", grouped);
    assertMatches("total", overall);

    spark.sql("DELETE FROM f WHERE id = 7");
    spark.sql("INSERT INTO f VALUES (12, 'plain', 0.125, 0.125)");
    for (String mv : new String[] {"sums", "total"}) {
      Row result = refresh(mv);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertThat(spark.sql("SELECT sx FROM total").first().getDouble(0)).isEqualTo(10.625);
    assertMatches("sums", grouped);
    assertMatches("total", overall);
  }

  /**
   * AVG is kept from a hidden running sum and non-null count: a refresh reads the change alone (as
   * many rows as a view of SUMs and COUNTs over the same change), and the column is Spark's own AVG
   * of the two, so DECIMAL averages round as a full refresh rounds them, through inserts, updates,
   * deletes, NULL values, a group that empties out and comes back, and without GROUP BY.
   */
  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void averagesFollowChangesFromARunningSumAndCount(String properties) {
    spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("ivmavg");
    spark.sql(
        "CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2), d DOUBLE, n INT) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql(
        "INSERT INTO t VALUES (1, 'a', 1.00, 0.5, 1), (2, 'a', 2.00, NULL, 2), (3, 'a', 2.00, 1.25, NULL),"
            + " (4, 'b', 0.01, -2.0, 7), (5, NULL, 3.33, 4.0, 3)");
    String[][] views = {
      {"means", "SELECT k, AVG(v) AS v_avg, AVG(d) AS d_avg, MEAN(n) AS n_avg, COUNT(*) AS c FROM t GROUP BY k"},
      {"sums", "SELECT k, SUM(v) AS v_sum, SUM(d) AS d_sum, COUNT(n) AS n_count, COUNT(*) AS c FROM t GROUP BY k"},
      {"overall", "SELECT AVG(v) AS v_avg, AVG(n + id) AS mixed_avg, MAX(v) AS top FROM t WHERE id < 100"},
    };
    for (String[] view : views) {
      // INCREMENTAL refuses a definition it cannot maintain: these it can, AVG without GROUP BY too.
      spark.sql("CREATE MATERIALIZED VIEW " + view[0] + " REFRESH POLICY INCREMENTAL AS " + view[1]);
    }
    // The running sums and counts are hidden from readers.
    assertThat(spark.sql("SELECT * FROM means").columns()).containsExactly("k", "v_avg", "d_avg", "n_avg", "c");
    assertThat(spark.sql("DESCRIBE means").collectAsList()).noneMatch(r -> r.getString(0).startsWith(StorageLayout.HIDDEN_PREFIX));

    String[] steps = {
      "INSERT INTO t VALUES (6, 'a', 0.01, 0.25, 4), (7, 'c', NULL, NULL, NULL)",
      "UPDATE t SET v = v + 1.00, d = NULL WHERE id IN (1, 4)",
      "DELETE FROM t WHERE id IN (2, 5)",
      // Group b empties out and comes back; the NULL key group with it.
      "DELETE FROM t WHERE k = 'b'",
      "INSERT INTO t VALUES (8, 'b', 9.99, 1.5, 2), (9, NULL, 1.00, 2.0, 5)",
      "MERGE INTO t USING (SELECT 3 AS id, 0.07 AS v UNION ALL SELECT 10 AS id, 5.55 AS v) s ON t.id = s.id"
          + " WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (id, k, v, d, n) VALUES (s.id, 'c', s.v, 0.75, 1)",
      // Every row goes: the view without GROUP BY keeps its one row, its averages NULL.
      "DELETE FROM t",
      "INSERT INTO t VALUES (11, 'a', 1.00, 1.0, 1), (12, 'a', 1.00, 2.0, 2), (13, 'a', 2.00, 2.0, 2)",
    };
    for (String step : steps) {
      spark.sql(step);
      if (step.equals(steps[0])) {
        assertThat(spark.sql("EXPLAIN REFRESH MATERIALIZED VIEW means").collectAsList())
            .anyMatch(r -> r.getString(0).equals("definition") && r.getString(1).contains("v_avg: avg"))
            .anyMatch(r -> r.getString(0).equals("strategy") && r.getString(1).contains("divide each AVG's running sum by its count"));
      }
      java.util.Map<String, Long> read = refreshIncrementally(views, step);
      assertThat(read.get("means")).as("rows means read after %s", step).isEqualTo(read.get("sums"));
    }
    // 4.00 / 3 rounded to AVG's DECIMAL(14,6), from the stored sum and count.
    assertThat(spark.sql("SELECT v_avg FROM means WHERE k = 'a'").first().getDecimal(0)).isEqualByComparingTo("1.333333");
    Row state =
        spark.sql("SELECT __floe_sum_1, __floe_nn_1 FROM lake." + ns + ".means__storage WHERE k = 'a'").first();
    assertThat(state.getDecimal(0)).isEqualByComparingTo("4.00");
    assertThat(state.getLong(1)).isEqualTo(3L);

    // A storage table without the running sums (as an earlier Floe created it, when AVG recomputed
    // its groups) is refreshed in full once, which adds them; the refreshes after it are incremental.
    for (String column : List.of("__floe_nn_1", "__floe_sum_1", "__floe_nn_2", "__floe_sum_2", "__floe_nn_3", "__floe_sum_3")) {
      spark.sql("ALTER TABLE lake." + ns + ".means__storage DROP COLUMN " + column);
    }
    spark.sql("INSERT INTO t VALUES (14, 'a', 0.50, 3.0, 3)");
    Row upgrade = refresh("means");
    assertThat(upgrade.getString(1)).isEqualTo("FULL");
    assertThat(upgrade.getString(2)).contains("lacks the bookkeeping column(s) __floe_nn_1, __floe_sum_1");
    assertMatches("means", views[0][1]);
    spark.sql("DELETE FROM t WHERE id = 11");
    assertRefreshedIncrementally("means", views[0][1]);
  }

  /**
   * Refreshes each of {@code views} (name, definition) after {@code step}, asserting that the refresh
   * was incremental and the view then matches its definition; the rows each refresh read, by view.
   */
  private java.util.Map<String, Long> refreshIncrementally(String[][] views, String step) {
    java.util.Map<String, Long> read = new java.util.HashMap<>();
    for (String[] view : views) {
      Row result = refresh(view[0]);
      assertThat(result.getString(1)).as("%s after %s: %s", view[0], step, result.getString(2)).isEqualTo("INCREMENTAL");
      read.put(view[0], result.getLong(3));
      assertMatches(view[0], view[1]);
    }
    return read;
  }

  /** The map of group {@code key}'s COUNT(DISTINCT) in column {@code position}, as sorted value=count pairs. */
  private String stateOf(String ns, String mv, int position, String key) {
    Row row =
        spark.sql(
                "SELECT " + StorageLayout.distinctState(position) + " AS state FROM lake." + ns + "." + mv + "__storage"
                    + " WHERE uk <=> " + (key == null ? "NULL" : "'" + key + "'"))
            .select(org.apache.spark.sql.classic.ExpressionUtils.column(new ValueCounts.Unpack(
                org.apache.spark.sql.classic.ExpressionUtils.expression(org.apache.spark.sql.functions.col("state")),
                org.apache.spark.sql.types.DataTypes.StringType)).as("m"))
            .selectExpr("array_join(array_sort(transform(map_entries(m), e -> concat(e.key, '=', e.value))), ',')")
            .first();
    return row.getString(0);
  }
}
