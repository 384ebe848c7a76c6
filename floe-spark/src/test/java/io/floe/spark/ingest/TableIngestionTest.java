package io.floe.spark.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.refresh.RefreshType;
import io.floe.spark.mv.MvTestSupport;
import io.floe.sql.QualifiedName;
import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Streaming tables fed by tables and flows, through SQL, on real Iceberg tables. */
class TableIngestionTest extends MvTestSupport {
  private static final String SILVER =
      "CREATE STREAMING TABLE silver_events AS SELECT id, upper(kind) AS kind FROM STREAM(bronze_events) WHERE id IS NOT NULL";
  private static final String EXPECTED = "SELECT id, upper(kind) FROM bronze_events WHERE id IS NOT NULL";

  @Override
  protected String prefix() {
    return "stream";
  }

  @BeforeEach
  void bronze() {
    sql("CREATE TABLE bronze_events (id INT, kind STRING) USING iceberg");
    sql("INSERT INTO bronze_events VALUES (1, 'click'), (2, 'view'), (NULL, 'broken')");
  }

  /** The result row of a statement: refresh_type, rows_read, rows_written, flows, warnings, duration, snapshot. */
  private Row run(String statement) {
    List<Row> rows = sql(statement);
    assertThat(rows).as("result of [%s]", statement).hasSize(1);
    return rows.get(0);
  }

  private String checkpoint(String table, String flow) {
    return table(table).properties().get(StreamFlow.checkpointKey(flow));
  }

  @Test
  void theFirstRunReadsExistingRowsAndLaterRunsOnlyTheAppendedOnes() {
    Row first = run(SILVER);
    assertThat(first.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(first.getLong(2)).isEqualTo(3);
    assertThat(first.getLong(3)).isEqualTo(2);
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 2);
    assertThat(checkpoint("silver_events", "silver_events")).isEqualTo(Long.toString(currentSnapshotId("bronze_events")));

    sql("INSERT INTO bronze_events VALUES (3, 'buy'), (4, 'view')");
    Row second = run("REFRESH STREAMING TABLE silver_events");
    assertThat(second.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(second.getLong(2)).isEqualTo(2);
    assertThat(second.getLong(3)).isEqualTo(2);
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 4);

    long snapshot = currentSnapshotId("silver_events");
    Row idle = run("REFRESH STREAMING TABLE silver_events");
    assertThat(idle.getString(1)).isEqualTo("NO_CHANGE");
    assertThat(idle.getLong(2)).isZero();
    assertThat(currentSnapshotId("silver_events")).isEqualTo(snapshot);

    sql("INSERT INTO bronze_events VALUES (NULL, 'dropped')");
    Row filtered = run("REFRESH STREAMING TABLE silver_events");
    assertThat(filtered.getLong(2)).isEqualTo(1);
    assertThat(filtered.getLong(3)).isZero();
    assertThat(currentSnapshotId("silver_events")).as("no empty snapshot published").isEqualTo(snapshot);
    assertThat(checkpoint("silver_events", "silver_events")).isEqualTo(Long.toString(currentSnapshotId("bronze_events")));
    assertThat(table("silver_events").refs()).containsOnlyKeys("main");
  }

  @Test
  void anUpdateOrDeleteOfTheSourceFailsTheRefreshUnlessChangeCommitsAreSkipped() {
    run(SILVER);
    run("CREATE STREAMING TABLE tolerant AS SELECT id FROM STREAM(bronze_events) WITH ('skipChangeCommits' = 'true')");
    String before = checkpoint("silver_events", "silver_events");
    long snapshot = currentSnapshotId("silver_events");
    sql("DELETE FROM bronze_events WHERE id = 1");
    sql("INSERT INTO bronze_events VALUES (4, 'late')");
    Row tolerant = run("REFRESH STREAMING TABLE tolerant");
    assertThat(tolerant.getLong(2)).isEqualTo(1);
    assertThat(tolerant.getString(5)).contains("skipped 1 commit of lake." + ns + ".bronze_events");
    long deleteSnapshot = table("bronze_events").currentSnapshot().parentId();
    String error = errorOf("REFRESH STREAMING TABLE silver_events");
    assertThat(error)
        .contains("lake." + ns + ".bronze_events")
        .contains("snapshot " + deleteSnapshot)
        .contains("REFRESH STREAMING TABLE lake." + ns + ".silver_events FULL")
        .contains("'skipChangeCommits' = 'true'");
    assertThat(checkpoint("silver_events", "silver_events")).isEqualTo(before);
    assertThat(currentSnapshotId("silver_events")).isEqualTo(snapshot);

    sql("ALTER TABLE silver_events SET TBLPROPERTIES ('skipChangeCommits' = 'true')");
    sql("UPDATE bronze_events SET kind = 'changed' WHERE id = 2");
    sql("INSERT INTO bronze_events VALUES (5, 'new')");
    Row skipped = run("REFRESH STREAMING TABLE silver_events");
    assertThat(skipped.getLong(2)).isEqualTo(2);
    assertThat(skipped.getString(5)).contains("skipped 2 commits");
    assertSameRows("SELECT * FROM silver_events",
        "SELECT * FROM VALUES (1, 'CLICK'), (2, 'VIEW'), (4, 'LATE'), (5, 'NEW') AS t(id, kind)", 4);
  }

  @Test
  void compactionOfTheSourceIsPassedOver() {
    sql("INSERT INTO bronze_events VALUES (3, 'buy')");
    run(SILVER);
    long snapshot = currentSnapshotId("silver_events");
    sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".bronze_events', options => map('min-input-files', '2'))");
    assertThat(table("bronze_events").currentSnapshot().operation()).isEqualTo("replace");
    Row result = run("REFRESH STREAMING TABLE silver_events");
    assertThat(result.getLong(2)).isZero();
    assertThat(currentSnapshotId("silver_events")).isEqualTo(snapshot);
    sql("INSERT INTO bronze_events VALUES (4, 'view')");
    assertThat(run("REFRESH STREAMING TABLE silver_events").getLong(2)).isEqualTo(1);
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 4);
  }

  @Test
  void twoFlowsIntoOneTargetEachKeepTheirCheckpoint() {
    sql("CREATE TABLE web_raw (id INT, amount DOUBLE) USING iceberg");
    sql("CREATE TABLE shop_raw (id INT, amount DOUBLE, store STRING) USING iceberg");
    sql("INSERT INTO web_raw VALUES (1, 10.0), (2, 20.0)");
    sql("INSERT INTO shop_raw VALUES (3, 5.0, 'north')");
    assertThat(sql("CREATE STREAMING TABLE all_orders")).singleElement()
        .satisfies(r -> assertThat(r.getString(1)).isEqualTo("NO_CHANGE"));
    run("CREATE FLOW web_orders AS INSERT INTO all_orders BY NAME SELECT * FROM STREAM(web_raw)");
    run("CREATE FLOW shop_orders AS INSERT INTO all_orders BY NAME SELECT * FROM STREAM(shop_raw)");
    assertSameRows("SELECT id, amount, store FROM all_orders",
        "SELECT id, amount, NULL FROM web_raw UNION ALL SELECT id, amount, store FROM shop_raw", 3);
    String shopCheckpoint = checkpoint("all_orders", "shop_orders");

    sql("INSERT INTO web_raw VALUES (4, 1.5)");
    Row result = run("REFRESH STREAMING TABLE all_orders");
    assertThat(result.getLong(2)).isEqualTo(1);
    assertThat(result.getString(4)).contains("web_orders: lake." + ns + ".web_raw").contains("shop_orders");
    assertThat(checkpoint("all_orders", "shop_orders")).isEqualTo(shopCheckpoint);
    assertThat(checkpoint("all_orders", "web_orders")).isEqualTo(Long.toString(currentSnapshotId("web_raw")));
    assertSameRows("SELECT id, amount, store FROM all_orders",
        "SELECT id, amount, NULL FROM web_raw UNION ALL SELECT id, amount, store FROM shop_raw", 4);

    sql("INSERT INTO shop_raw VALUES (5, 2.0, 'south')");
    sql("INSERT INTO web_raw VALUES (6, 3.0)");
    assertThat(run("REFRESH STREAMING TABLE all_orders").getLong(2)).isEqualTo(2);
    assertSameRows("SELECT id, amount, store FROM all_orders",
        "SELECT id, amount, NULL FROM web_raw UNION ALL SELECT id, amount, store FROM shop_raw", 6);
  }

  /**
   * A flow whose first run fails on the data (a cast the values do not fit) is not added: the table
   * keeps its flows and columns, and its other flows go on running.
   */
  @Test
  void aFlowWhoseFirstRunFailsIsNotAdded() {
    sql("CREATE TABLE live_raw (id INT, v STRING) USING iceberg");
    sql("CREATE TABLE other_raw (id STRING, extra STRING) USING iceberg");
    sql("INSERT INTO live_raw VALUES (1, 'a')");
    sql("INSERT INTO other_raw VALUES ('x', 'b')");
    sql("CREATE STREAMING TABLE merged");
    run("CREATE FLOW live AS INSERT INTO merged BY NAME SELECT * FROM STREAM(live_raw)");
    String flows = table("merged").properties().get(StreamFlow.FLOWS);

    assertThat(errorOf("CREATE FLOW other AS INSERT INTO merged BY NAME SELECT CAST(id AS INT) AS id, extra FROM STREAM(other_raw)"))
        .contains("Cannot create flow other into lake." + ns + ".merged: its first run failed, so the flow was not added")
        .contains("CAST_INVALID_INPUT");
    assertThat(table("merged").properties()).containsEntry(StreamFlow.FLOWS, flows)
        .doesNotContainKey(StreamFlow.checkpointKey("other"));
    assertThat(spark.table("merged").columns()).containsExactly("id", "v");

    sql("INSERT INTO live_raw VALUES (2, 'c')");
    assertThat(run("REFRESH STREAMING TABLE merged").getLong(2)).isEqualTo(1);
    assertSameRows("SELECT * FROM merged", "SELECT * FROM live_raw", 2);
  }

  /**
   * A flow inserting by position whose query gives another number of columns than the table has is
   * refused before it is recorded, so the table's other flows keep running.
   */
  @Test
  void aFlowWithTheWrongNumberOfColumnsIsRefusedAndNotRecorded() {
    sql("CREATE TABLE web_raw (id INT, amount DOUBLE) USING iceberg");
    sql("INSERT INTO web_raw VALUES (1, 10.0)");
    sql("CREATE STREAMING TABLE orders_by_position");
    run("CREATE FLOW web AS INSERT INTO orders_by_position SELECT * FROM STREAM(web_raw)");
    String flows = table("orders_by_position").properties().get(StreamFlow.FLOWS);

    assertThat(errorOf("CREATE FLOW narrow AS INSERT INTO orders_by_position SELECT amount FROM STREAM(web_raw)"))
        .contains("Cannot create flow narrow of streaming table lake." + ns + ".orders_by_position")
        .contains("it produces 1 columns [amount] but the table has 2 [id, amount]");
    assertThat(table("orders_by_position").properties()).containsEntry(StreamFlow.FLOWS, flows)
        .doesNotContainKey(StreamFlow.checkpointKey("narrow"));

    sql("INSERT INTO web_raw VALUES (2, 20.0)");
    assertThat(run("REFRESH STREAMING TABLE orders_by_position").getLong(2)).isEqualTo(1);
    assertSameRows("SELECT * FROM orders_by_position", "SELECT * FROM web_raw", 2);

    // A flow by name that would add a column breaks the flow by position, so it is refused too.
    sql("CREATE TABLE notes_raw (id INT, note STRING) USING iceberg");
    assertThat(errorOf("CREATE FLOW notes AS INSERT INTO orders_by_position BY NAME SELECT id, note FROM STREAM(notes_raw)"))
        .contains("flow web of streaming table lake." + ns + ".orders_by_position")
        .contains("it produces 2 columns [id, amount] but the table would have, with the columns its flows by name add,"
            + " 3 [id, amount, note]");
    assertThat(table("orders_by_position").properties()).containsEntry(StreamFlow.FLOWS, flows);
    assertThat(spark.table("orders_by_position").columns()).containsExactly("id", "amount");

    // Flows by name add their new columns when they are defined, not when their source first has rows.
    sql("CREATE STREAMING TABLE orders_by_name");
    run("CREATE FLOW web_named AS INSERT INTO orders_by_name BY NAME SELECT * FROM STREAM(web_raw)");
    run("CREATE FLOW notes_named AS INSERT INTO orders_by_name BY NAME SELECT id, note FROM STREAM(notes_raw)");
    assertThat(spark.table("orders_by_name").columns()).containsExactly("id", "amount", "note");
    run("CREATE FLOW wide AS INSERT INTO orders_by_name SELECT id, amount, 'wide' FROM STREAM(web_raw)");
    sql("INSERT INTO web_raw VALUES (3, 30.0)");
    run("REFRESH STREAMING TABLE orders_by_name");
    assertSameRows("SELECT * FROM orders_by_name WHERE id = 3",
        "SELECT 3, 30.0D, CAST(NULL AS STRING) UNION ALL SELECT 3, 30.0D, 'wide'", 2);
  }

  /** A source dropped and created again is named as a possible cause, with both ways to a full refresh. */
  @Test
  void aSourceCreatedAgainAsksForAFullRefresh() {
    run(SILVER);
    sql("DROP TABLE bronze_events");
    sql("CREATE TABLE bronze_events (id INT, kind STRING) USING iceberg");
    sql("INSERT INTO bronze_events VALUES (7, 'buy')");
    assertThat(errorOf("REFRESH STREAMING TABLE silver_events"))
        .contains("Cannot refresh streaming table lake." + ns + ".silver_events")
        .contains("the table was dropped and created again")
        .contains("REFRESH STREAMING TABLE lake." + ns + ".silver_events FULL")
        .contains("floe run --full-refresh silver_events");
    run("REFRESH STREAMING TABLE silver_events FULL");
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 1);
  }

  @Test
  void aFullRefreshReplacesTheRowsAndResetsTheCheckpoint() {
    run(SILVER);
    sql("INSERT INTO bronze_events VALUES (3, 'buy')");
    run("REFRESH STREAMING TABLE silver_events");
    sql("DELETE FROM bronze_events WHERE id = 2");
    Row full = run("REFRESH STREAMING TABLE silver_events FULL");
    assertThat(full.getString(1)).isEqualTo("FULL");
    assertThat(full.getLong(3)).isEqualTo(2);
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 2);
    assertThat(checkpoint("silver_events", "silver_events")).isEqualTo(Long.toString(currentSnapshotId("bronze_events")));
    sql("INSERT INTO bronze_events VALUES (7, 'view')");
    assertThat(run("REFRESH STREAMING TABLE silver_events").getLong(2)).isEqualTo(1);
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 3);
  }

  @Test
  void aFailingQueryLeavesTheTableAndItsCheckpointUnchanged() {
    run("CREATE STREAMING TABLE checked AS SELECT id, kind FROM STREAM(bronze_events)"
        + " WHERE assert_true(coalesce(id, 0) < 100, 'id too large') IS NULL");
    long snapshot = currentSnapshotId("checked");
    String before = checkpoint("checked", "checked");
    sql("INSERT INTO bronze_events VALUES (500, 'huge')");
    assertThat(errorOf("REFRESH STREAMING TABLE checked")).contains("id too large");
    assertThat(currentSnapshotId("checked")).isEqualTo(snapshot);
    assertThat(checkpoint("checked", "checked")).isEqualTo(before);
    assertThat(table("checked").refs()).containsOnlyKeys("main");
    assertThat(count("SELECT * FROM checked")).isEqualTo(3);
  }

  @Test
  void aStreamingTableMayJoinStaticTablesAndFeedAnother() {
    sql("CREATE TABLE kinds (kind STRING, weight INT) USING iceberg");
    sql("INSERT INTO kinds VALUES ('click', 1), ('view', 2)");
    run("CREATE STREAMING TABLE weighted AS SELECT e.id, e.kind, k.weight FROM STREAM(bronze_events) e"
        + " JOIN kinds k ON e.kind = k.kind");
    run("CREATE STREAMING TABLE heavy AS SELECT id, weight FROM STREAM weighted WHERE weight > 1");
    sql("INSERT INTO bronze_events VALUES (3, 'view')");
    run("REFRESH STREAMING TABLE weighted");
    assertThat(run("REFRESH STREAMING TABLE heavy").getLong(2)).isEqualTo(1);
    assertSameRows("SELECT * FROM heavy", "SELECT id, 2 FROM bronze_events WHERE kind = 'view'", 2);

    // A view's own DISTINCT is no concern of a stream that joins it.
    sql("CREATE MATERIALIZED VIEW known_kinds AS SELECT DISTINCT kind FROM kinds");
    run("CREATE STREAMING TABLE known AS SELECT e.id FROM STREAM(bronze_events) e JOIN known_kinds k ON e.kind = k.kind");
    assertSameRows("SELECT * FROM known", "SELECT id FROM bronze_events WHERE kind IN ('click', 'view')", 3);
  }

  @Test
  void queriesThatAreNotAppendOnlyAreRefusedAtCreate() {
    assertThat(errorOf("CREATE STREAMING TABLE by_kind AS SELECT kind, count(*) AS n FROM STREAM(bronze_events) GROUP BY kind"))
        .contains("Cannot create streaming table lake." + ns + ".by_kind").contains("an aggregate");
    assertThat(tableExists("by_kind")).isFalse();
    assertThat(errorOf("CREATE STREAMING TABLE d AS SELECT DISTINCT kind FROM STREAM(bronze_events)")).contains("DISTINCT");
    assertThat(errorOf("CREATE STREAMING TABLE w AS SELECT id, row_number() OVER (ORDER BY id) AS r FROM STREAM(bronze_events)"))
        .contains("a window function");
    assertThat(errorOf("CREATE STREAMING TABLE l AS SELECT * FROM STREAM(bronze_events) LIMIT 1")).contains("LIMIT");
    assertThat(errorOf("CREATE STREAMING TABLE n AS SELECT * FROM bronze_events")).contains("reads no table with STREAM");
    assertThat(errorOf("CREATE STREAMING TABLE j AS SELECT a.id FROM bronze_events a LEFT JOIN STREAM(bronze_events) b ON a.id = b.id"))
        .contains("LEFT OUTER JOIN");
    sql("CREATE MATERIALIZED VIEW events_mv AS SELECT id, kind FROM bronze_events");
    assertThat(errorOf("CREATE STREAMING TABLE s AS SELECT * FROM STREAM(events_mv)"))
        .contains("streams materialized view lake." + ns + ".events_mv");
    assertThat(errorOf("CREATE FLOW f AS INSERT INTO bronze_events SELECT * FROM STREAM(bronze_events)"))
        .contains("Cannot create flow f").contains("not a streaming table fed by tables");
  }

  @Test
  void aRefreshThatLosesARaceStartsOverAndAppendsEachRowOnce() {
    run(SILVER);
    sql("INSERT INTO bronze_events VALUES (3, 'buy')");
    org.apache.spark.sql.classic.SparkSession session = (org.apache.spark.sql.classic.SparkSession) spark;
    QualifiedName silver = new QualifiedName(List.of(ns, "silver_events"));
    int[] races = {0};
    TableIngestion loser = new TableIngestion(session).beforePublish(() -> {
      if (races[0]++ == 0) {
        assertThat(new TableIngestion(session).refresh(silver, false).rowsWritten()).isEqualTo(1);
      }
    });
    StreamingRefreshResult result = loser.refresh(silver, false);
    assertThat(races[0]).isEqualTo(1);
    assertThat(result.type()).isEqualTo(RefreshType.NO_CHANGE);
    assertSameRows("SELECT * FROM silver_events", EXPECTED, 3);
    assertThat(table("silver_events").refs()).containsOnlyKeys("main");
  }
}
