package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Freshness after source changes, and materialized views that read materialized views. */
class FreshnessAndNestingTest extends MvTestSupport {
  private static final String SILVER_QUERY = "SELECT id, upper(city) AS city, fare FROM bronze WHERE fare > 0";
  private static final String GOLD_QUERY = "SELECT city, count(*) AS trips, sum(fare) AS fares FROM silver GROUP BY city";
  /** Gold's query over Bronze directly, to compare Gold with. */
  private static final String GOLD_DIRECT =
      "SELECT city, count(*) AS trips, sum(fare) AS fares FROM (" + SILVER_QUERY + ") GROUP BY city";

  @Override
  protected String prefix() {
    return "fresh";
  }

  @BeforeEach
  void bronzeSilverGold() {
    sql("CREATE TABLE bronze (id INT, city STRING, fare INT) USING iceberg");
    sql("INSERT INTO bronze VALUES (1, 'tokyo', 10), (2, 'osaka', 0), (3, 'tokyo', 7), (4, 'kobe', 3)");
    sql("CREATE MATERIALIZED VIEW silver AS " + SILVER_QUERY);
    sql("CREATE MATERIALIZED VIEW gold AS " + GOLD_QUERY);
  }

  @Test
  void freshlyCreatedViewsAreFresh() {
    assertThat(freshness("silver")).isEqualTo("FRESH");
    assertThat(freshness("gold")).isEqualTo("FRESH");
  }

  @Test
  void insertIntoASourceMakesTheViewStaleNamingTheSourceAndRefreshMakesItFresh() {
    sql("INSERT INTO bronze VALUES (5, 'nara', 4)");

    assertThat(freshness("silver")).startsWith("STALE: ").contains("source " + q("bronze") + " has new commits");

    sql("REFRESH MATERIALIZED VIEW silver");

    assertThat(freshness("silver")).isEqualTo("FRESH");
    assertSameRows("SELECT * FROM silver", SILVER_QUERY, 4);
  }

  @Test
  void compactingASourceLeavesTheViewFreshWithANoteUntilARefreshRecordsTheNewSnapshot() {
    sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".bronze', options => map('rewrite-all', 'true'))");

    assertThat(freshness("silver"))
        .startsWith("FRESH (")
        .contains("source " + q("bronze") + " was compacted since the last refresh")
        .contains("no row changed");
    assertThat(sql("SHOW MATERIALIZED VIEWS"))
        .filteredOn(r -> r.getString(1).equals("silver"))
        .singleElement()
        .satisfies(r -> assertThat(r.getString(4)).startsWith("FRESH (").contains(q("bronze")));
    assertThat(freshness("gold")).as("silver's storage did not move").isEqualTo("FRESH");

    Row refreshed = sql("REFRESH MATERIALIZED VIEW silver").get(0);

    assertThat(refreshed.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(refreshed.getLong(4)).as("rows written").isZero();
    assertThat(freshness("silver")).isEqualTo("FRESH");
    assertSameRows("SELECT * FROM silver", SILVER_QUERY, 3);
  }

  @Test
  void aCompactionAndAnInsertMakeTheViewStale() {
    sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".bronze', options => map('rewrite-all', 'true'))");
    sql("INSERT INTO bronze VALUES (5, 'nara', 4)");

    assertThat(freshness("silver")).startsWith("STALE: ").contains("source " + q("bronze") + " has new commits");
  }

  @Test
  void aViewOverAViewOfAnotherCatalogIsFreshAfterItsRefreshAndStaleAfterItsSourceMoved(@TempDir Path dir) {
    String other = "other_" + ns;
    java.util.Map<String, String> conf = java.util.Map.of(
        "spark.sql.catalog." + other, "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog." + other + ".type", "jdbc",
        "spark.sql.catalog." + other + ".uri", "jdbc:sqlite:" + dir.resolve("other.db"),
        "spark.sql.catalog." + other + ".jdbc.schema-version", "V1",
        "spark.sql.catalog." + other + ".warehouse", dir.resolve("warehouse").toUri().toString());
    conf.forEach(spark.conf()::set);
    try {
      acrossCatalogs(other);
    } finally {
      // The catalog's files go with the test; later tests must not look for its views.
      conf.keySet().forEach(spark.conf()::unset);
    }
  }

  private void acrossCatalogs(String other) {
    sql("CREATE NAMESPACE " + other + ".x");
    sql("CREATE TABLE " + other + ".x.t (a INT) USING iceberg");
    sql("INSERT INTO " + other + ".x.t VALUES (1), (2)");
    sql("CREATE MATERIALIZED VIEW " + other + ".x.total AS SELECT sum(a) AS s FROM " + other + ".x.t");
    sql("CREATE MATERIALIZED VIEW across AS SELECT s FROM " + other + ".x.total");

    assertThat(freshness("across")).isEqualTo("FRESH");

    sql("INSERT INTO " + other + ".x.t VALUES (3)");
    sql("REFRESH MATERIALIZED VIEW " + other + ".x.total");

    assertThat(freshness("across")).startsWith("STALE: ").contains("x.total__storage has new commits");
    sql("REFRESH MATERIALIZED VIEW across");
    assertThat(freshness("across")).isEqualTo("FRESH");
    assertThat(sql("SELECT s FROM across").get(0).getLong(0)).isEqualTo(6L);

    // CASCADE reaches the reader in the other catalog, and DROP refuses to strand it.
    sql("INSERT INTO " + other + ".x.t VALUES (4)");
    assertThat(sql("REFRESH MATERIALIZED VIEW " + other + ".x.total CASCADE")).extracting(r -> r.getString(0))
        .containsExactly(other + ".x.total", "lake." + q("across"));
    assertThat(sql("SELECT s FROM across").get(0).getLong(0)).isEqualTo(10L);
    assertThat(errorOf("DROP MATERIALIZED VIEW " + other + ".x.total")).contains(q("across"));
  }

  @Test
  void showMaterializedViewsReportsStaleness() {
    sql("INSERT INTO bronze VALUES (5, 'nara', 4)");

    assertThat(sql("SHOW MATERIALIZED VIEWS"))
        .filteredOn(r -> r.getString(1).equals("silver"))
        .singleElement()
        .satisfies(r -> assertThat(r.getString(4)).startsWith("STALE").contains(q("bronze")));
  }

  @Test
  void schemaChangeOfASourceWithoutDataChangeMakesTheViewStale() {
    long snapshot = currentSnapshotId("bronze");

    sql("ALTER TABLE bronze ADD COLUMN note STRING");

    assertThat(currentSnapshotId("bronze")).as("no data change").isEqualTo(snapshot);
    assertThat(freshness("silver")).startsWith("STALE").contains(q("bronze") + " schema changed");

    sql("REFRESH MATERIALIZED VIEW silver");

    assertThat(freshness("silver")).isEqualTo("FRESH");
    assertSameRows("SELECT * FROM silver", SILVER_QUERY, 3);
  }

  /**
   * Iceberg reads a snapshot by id in the schema it was written with; after columns are renamed
   * and nothing written since, the table is read today under the new names. A refresh reads the
   * pinned snapshot in the current schema, so the view follows the rename, and until it has, a
   * query over the table is never answered from it.
   */
  @Test
  void columnsRenamedWithoutNewDataAreReadUnderTheirNewNames() {
    sql("CREATE TABLE swap (id INT, a STRING, b STRING, n INT) USING iceberg");
    sql("INSERT INTO swap VALUES (1, 'a1', 'b1', 10), (2, 'a2', 'b2', 20), (3, 'a1', 'b2', 5)");
    String query = "SELECT a, SUM(n) AS s, COUNT(*) AS c FROM swap GROUP BY a";
    sql("CREATE MATERIALIZED VIEW by_a AS " + query);
    long snapshot = currentSnapshotId("swap");
    sql("ALTER TABLE swap RENAME COLUMN a TO tmp");
    sql("ALTER TABLE swap RENAME COLUMN b TO a");
    sql("ALTER TABLE swap RENAME COLUMN tmp TO b");
    assertThat(currentSnapshotId("swap")).as("no data change").isEqualTo(snapshot);
    assertThat(freshness("by_a")).startsWith("STALE").contains(q("swap") + " schema changed");

    spark.conf().set("spark.sql.optimizer.answerQueriesWithMVs.enabled", "true");
    try {
      assertThat(sql(query + " ORDER BY a").stream().map(Row::toString).toList())
          .as("a stale view over the old schema does not answer")
          .containsExactly("[b1,10,1]", "[b2,25,2]");

      assertThat(sql("EXPLAIN REFRESH MATERIALIZED VIEW by_a"))
          .anyMatch(r -> r.getString(0).equals("strategy") && r.getString(1).startsWith("FULL: the schema of source"));
      Row refreshed = sql("REFRESH MATERIALIZED VIEW by_a").get(0);
      assertThat(refreshed.getString(1)).isEqualTo("FULL");
      assertThat(refreshed.getString(2))
          .contains("the schema of source")
          .contains("changed since the last refresh: column a of")
          .contains("in schema 0 and");
      assertThat(freshness("by_a")).isEqualTo("FRESH");
      assertSameRows("SELECT * FROM by_a", query, 2);
      assertThat(sql(query + " ORDER BY a").stream().map(Row::toString).toList()).containsExactly("[b1,10,1]", "[b2,25,2]");

      // An added column, still no data written: the snapshot's own old schema is no change of the
      // view's, so the refresh is not full and blames no column.
      sql("ALTER TABLE swap ADD COLUMN z INT");
      Row added = sql("REFRESH MATERIALIZED VIEW by_a").get(0);
      assertThat(added.getString(1)).as(added.getString(2)).isNotEqualTo("FULL");
      assertThat(added.getString(2)).doesNotContain("column a");
      assertSameRows("SELECT * FROM by_a", query, 2);

      // The next commit is read in the schema the view was refreshed in: incremental again, though
      // its snapshot range starts at a snapshot written in the old schema.
      sql("INSERT INTO swap VALUES (4, 'x', 'b1', 1, NULL), (5, 'y', 'b3', 2, NULL)");
      sql("DELETE FROM swap WHERE id = 2");
      Row incremental = sql("REFRESH MATERIALIZED VIEW by_a").get(0);
      assertThat(incremental.getString(1)).as(incremental.getString(2)).isEqualTo("INCREMENTAL");
      assertSameRows("SELECT * FROM by_a", query, 3);
    } finally {
      spark.conf().unset("spark.sql.optimizer.answerQueriesWithMVs.enabled");
    }
  }

  /** A source rolled back to an older snapshot is said to be, not to have new commits. */
  @Test
  void aSourceRolledBackIsSaidToBe() {
    sql("CREATE TABLE rolled (id INT) USING iceberg");
    sql("INSERT INTO rolled VALUES (1)");
    long first = currentSnapshotId("rolled");
    sql("INSERT INTO rolled VALUES (2)");
    sql("CREATE MATERIALIZED VIEW rolled_count AS SELECT count(*) AS n FROM rolled");
    sql("CALL lake.system.rollback_to_snapshot('lake." + ns + ".rolled', " + first + ")");
    assertThat(freshness("rolled_count")).startsWith("STALE: ")
        .contains("source " + q("rolled") + " was rolled back or its history rewritten")
        .doesNotContain("new commits");
    assertThat(sql("REFRESH MATERIALIZED VIEW rolled_count").get(0).getString(1)).isEqualTo("FULL");
    assertThat(freshness("rolled_count")).isEqualTo("FRESH");
    assertSameRows("SELECT * FROM rolled_count", "SELECT count(*) AS n FROM rolled", 1);
  }

  /**
   * A schema change that leaves every column the definition reads the same field (an added column,
   * an unread one renamed) changes nothing the view computes: its refreshes stay incremental.
   */
  @Test
  void aSchemaChangeOfUnreadColumnsKeepsTheRefreshIncremental() {
    // JOIN ... USING projects every column of both tables, the added one too, which the view does not read.
    sql("CREATE TABLE zones (city STRING, zone STRING) USING iceberg");
    sql("INSERT INTO zones VALUES ('tokyo', 'east'), ('kobe', 'west')");
    String byZone = "SELECT zone, sum(fare) AS fares FROM bronze JOIN zones USING (city) GROUP BY zone";
    sql("CREATE MATERIALIZED VIEW by_zone AS " + byZone);
    sql("ALTER TABLE bronze ADD COLUMN note STRING");
    Row metadataOnly = sql("REFRESH MATERIALIZED VIEW silver").get(0);
    assertThat(metadataOnly.getString(1)).as(metadataOnly.getString(2)).isEqualTo("INCREMENTAL");
    assertThat(freshness("silver")).isEqualTo("FRESH");

    sql("INSERT INTO bronze VALUES (5, 'nara', 4, 'new')");
    sql("ALTER TABLE bronze RENAME COLUMN note TO remark");
    sql("UPDATE bronze SET fare = fare + 1 WHERE id = 1");
    assertThat(sql("EXPLAIN REFRESH MATERIALIZED VIEW silver"))
        .anyMatch(r -> r.getString(0).equals("strategy") && r.getString(1).startsWith("INCREMENTAL"));
    Row refreshed = sql("REFRESH MATERIALIZED VIEW silver").get(0);
    assertThat(refreshed.getString(1)).as(refreshed.getString(2)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM silver", SILVER_QUERY, 4);
    assertThat(freshness("silver")).isEqualTo("FRESH");

    Row joined = sql("REFRESH MATERIALIZED VIEW by_zone").get(0);
    assertThat(joined.getString(1)).as(joined.getString(2)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM by_zone", byZone, 2);
  }

  /**
   * A view's columns are fixed when it is created, as Spark fixes those of a view: a {@code SELECT *}
   * over a source that has gained a column since keeps the columns it had, incrementally and in
   * full, and one whose column is gone is refused by name, keeping its rows.
   */
  @Test
  void aSelectStarViewKeepsItsColumnsWhenItsSourceGainsOne() {
    sql("CREATE MATERIALIZED VIEW every_trip AS SELECT * FROM bronze");
    sql("ALTER TABLE bronze ADD COLUMN note STRING");
    sql("INSERT INTO bronze VALUES (5, 'nara', 4, 'new')");
    sql("DELETE FROM bronze WHERE id = 2");

    Row refreshed = sql("REFRESH MATERIALIZED VIEW every_trip").get(0);
    assertThat(refreshed.getString(1)).as(refreshed.getString(2)).isEqualTo("INCREMENTAL");
    assertThat(spark.table("every_trip").columns()).containsExactly("id", "city", "fare");
    assertSameRows("SELECT * FROM every_trip", "SELECT id, city, fare FROM bronze", 4);
    spark.conf().set("spark.sql.optimizer.answerQueriesWithMVs.enabled", "true");
    try {
      assertThat(spark.sql("SELECT * FROM bronze").columns()).as("not answered from the view").containsExactly("id", "city", "fare", "note");
      assertThat(sql("SELECT * FROM bronze WHERE note = 'new'")).hasSize(1);
    } finally {
      spark.conf().unset("spark.sql.optimizer.answerQueriesWithMVs.enabled");
    }

    Row full = sql("REFRESH MATERIALIZED VIEW every_trip FULL").get(0);
    assertThat(full.getString(1)).isEqualTo("FULL");
    assertSameRows("SELECT * FROM every_trip", "SELECT id, city, fare FROM bronze", 4);

    sql("ALTER TABLE bronze DROP COLUMN fare");
    sql("ALTER TABLE bronze DROP COLUMN note");
    sql("INSERT INTO bronze VALUES (6, 'kyoto')");
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("REFRESH MATERIALIZED VIEW every_trip")))
        .hasMessageContaining(q("every_trip"))
        .hasMessageContaining("no longer gives its column fare");
    assertThat(sql("SELECT * FROM every_trip")).hasSize(4);
  }

  /**
   * A view reads its definition's columns by the names the definition gave them at CREATE, not by
   * position: a source column moved keeps its values in its column, and a source column renamed, or
   * dropped and replaced by another of the same count, is refused instead of filling the view's
   * column with another column's values. A column list at CREATE still renames by position.
   */
  @Test
  void aSelectStarViewReadsItsSourceColumnsByName() {
    sql("CREATE MATERIALIZED VIEW every_trip AS SELECT * FROM bronze");
    sql("CREATE MATERIALIZED VIEW renamed_trip (trip, town, price) AS SELECT * FROM bronze");
    sql("ALTER TABLE bronze ALTER COLUMN fare FIRST");
    sql("INSERT INTO bronze (id, city, fare) VALUES (5, 'nara', 4)");
    sql("UPDATE bronze SET fare = 11 WHERE id = 1");

    for (String view : new String[] {"every_trip", "renamed_trip"}) {
      Row refreshed = sql("REFRESH MATERIALIZED VIEW " + view).get(0);
      assertThat(refreshed.getString(1)).as(view + ": " + refreshed.getString(2)).isEqualTo("INCREMENTAL");
      assertSameRows("SELECT * FROM " + view, "SELECT id, city, fare FROM bronze", 5);
      Row full = sql("REFRESH MATERIALIZED VIEW " + view + " FULL").get(0);
      assertThat(full.getString(1)).isEqualTo("FULL");
      assertSameRows("SELECT * FROM " + view, "SELECT id, city, fare FROM bronze", 5);
    }
    assertThat(spark.table("every_trip").columns()).containsExactly("id", "city", "fare");
    assertThat(spark.table("renamed_trip").columns()).containsExactly("trip", "town", "price");
    spark.conf().set("spark.sql.optimizer.answerQueriesWithMVs.enabled", "true");
    try {
      assertThat(spark.sql("SELECT * FROM bronze").columns()).containsExactly("fare", "id", "city");
      assertThat(sql("SELECT * FROM bronze WHERE id = 1")).singleElement()
          .satisfies(r -> assertThat(List.of(r.get(0), r.get(1), r.get(2))).containsExactly(11, 1, "tokyo"));
    } finally {
      spark.conf().unset("spark.sql.optimizer.answerQueriesWithMVs.enabled");
    }

    sql("ALTER TABLE bronze RENAME COLUMN city TO town");
    sql("INSERT INTO bronze (id, town, fare) VALUES (6, 'kyoto', 2)");
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("REFRESH MATERIALIZED VIEW every_trip")))
        .hasMessageContaining(q("every_trip"))
        .hasMessageContaining("no longer gives its column city");
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("REFRESH MATERIALIZED VIEW renamed_trip")))
        .hasMessageContaining(q("renamed_trip"))
        .hasMessageContaining("no longer gives its column city (the view's column town)");

    sql("ALTER TABLE bronze RENAME COLUMN town TO city");
    sql("ALTER TABLE bronze DROP COLUMN fare");
    sql("ALTER TABLE bronze ADD COLUMN passengers INT");
    sql("INSERT INTO bronze (id, city, passengers) VALUES (7, 'nara', 3)");
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("REFRESH MATERIALIZED VIEW every_trip FULL")))
        .hasMessageContaining(q("every_trip"))
        .hasMessageContaining("no longer gives its column fare");
    assertThat(sql("SELECT * FROM every_trip WHERE fare IS NOT NULL")).hasSize(5);
  }

  /**
   * A source column widened in place (int to bigint, float to double, a decimal's precision) widens
   * the view's columns that carry it, and their storage, in the full refresh it brings, instead of
   * narrowing the wider values (overflow, lost digits); the aggregate's bookkeeping follows, and the
   * refreshes after it are incremental again. A column whose type changes in a way Iceberg cannot
   * widen (a decimal's scale) is refused, naming it, and the view keeps its rows.
   */
  @Test
  void aWidenedSourceColumnWidensTheViewsColumns() {
    sql("CREATE TABLE typed (id INT, x FLOAT, n INT, p DECIMAL(10,2)) USING iceberg");
    sql("INSERT INTO typed VALUES (1, 1.5, 10, 1.25), (2, 2.5, 20, 2.50), (3, 0.5, 10, 0.75)");
    String plain = "SELECT id, x, n, p FROM typed";
    String grouped = "SELECT id % 2 AS k, sum(x) AS sx, sum(n) AS sn, count(DISTINCT n) AS dn, min(n) AS mn, avg(p) AS ap"
        + " FROM typed GROUP BY id % 2";
    String thirds = "SELECT id, p / id AS third FROM typed";
    sql("CREATE MATERIALIZED VIEW typed_rows AS " + plain);
    sql("CREATE MATERIALIZED VIEW typed_groups AS " + grouped);
    sql("CREATE MATERIALIZED VIEW typed_top AS SELECT max(mn) AS top FROM typed_groups");
    sql("CREATE MATERIALIZED VIEW typed_thirds AS " + thirds);
    sql("ALTER TABLE typed ALTER COLUMN x TYPE DOUBLE");
    sql("ALTER TABLE typed ALTER COLUMN n TYPE BIGINT");
    sql("ALTER TABLE typed ALTER COLUMN p TYPE DECIMAL(30,2)");
    sql("INSERT INTO typed VALUES (4, 1.0000000123456789, 3000000000, 1234567891.25)");

    Row rows = sql("REFRESH MATERIALIZED VIEW typed_rows").get(0);
    assertThat(rows.getString(1)).isEqualTo("FULL");
    assertThat(rows.getString(2)).contains("widened column x from float to double, n from int to long, p from decimal(10, 2) to decimal(30, 2)");
    assertSameRows("SELECT * FROM typed_rows", plain, 4);
    assertThat(describe("typed_rows")).containsEntry("x", "double").containsEntry("n", "bigint").containsEntry("p", "decimal(30,2)");
    Row groups = sql("REFRESH MATERIALIZED VIEW typed_groups").get(0);
    assertThat(groups.getString(2)).contains("widened column mn from int to long, ap from decimal(14, 6) to decimal(34, 6)");
    assertSameRows("SELECT * FROM typed_groups", grouped, 2);
    assertThat(sql("REFRESH MATERIALIZED VIEW typed_top").get(0).getString(2)).contains("widened column top from int to long");
    assertSameRows("SELECT * FROM typed_top", "SELECT max(mn) FROM (" + grouped + ")", 1);

    sql("INSERT INTO typed VALUES (5, 2.0000000123456789, 4000000000, 2.5)");
    sql("DELETE FROM typed WHERE id IN (1, 4)");
    for (String view : new String[] {"typed_rows", "typed_groups", "typed_top"}) {
      Row refreshed = sql("REFRESH MATERIALIZED VIEW " + view).get(0);
      assertThat(refreshed.getString(1)).as(view + ": " + refreshed.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertSameRows("SELECT * FROM typed_rows", plain, 3);
    assertSameRows("SELECT * FROM typed_groups", grouped, 2);
    assertSameRows("SELECT * FROM typed_top", "SELECT max(mn) FROM (" + grouped + ")", 1);

    // Inside a struct column: a field widened, a field added (as file loading adds them).
    sql("CREATE TABLE nested (id INT, s STRUCT<a: INT, b: STRING>) USING iceberg");
    sql("INSERT INTO nested VALUES (1, named_struct('a', 1, 'b', 'x'))");
    sql("CREATE MATERIALIZED VIEW nested_rows AS SELECT id, s FROM nested");
    sql("ALTER TABLE nested ALTER COLUMN s.a TYPE BIGINT");
    sql("ALTER TABLE nested ADD COLUMN s.c STRING");
    sql("INSERT INTO nested VALUES (2, named_struct('a', 3000000000L, 'b', 'y', 'c', 'z'))");
    Row nested = sql("REFRESH MATERIALIZED VIEW nested_rows").get(0);
    assertThat(nested.getString(2)).contains("widened column s.a from int to long, s gained c");
    assertSameRows("SELECT * FROM nested_rows", "SELECT id, s FROM nested", 2);
    sql("INSERT INTO nested VALUES (3, named_struct('a', 4000000000L, 'b', 'w', 'c', 'v'))");
    assertThat(sql("REFRESH MATERIALIZED VIEW nested_rows").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM nested_rows", "SELECT id, s FROM nested", 3);

    List<Row> before = sql("SELECT * FROM typed_thirds ORDER BY id");
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("REFRESH MATERIALIZED VIEW typed_thirds")))
        .hasMessageContaining(q("typed_thirds"))
        .hasMessageContaining("column third the type decimal(38, 10)")
        .hasMessageContaining("decimal(21, 13)");
    assertThat(sql("SELECT * FROM typed_thirds ORDER BY id")).isEqualTo(before);
  }

  /**
   * A view is read as of an earlier refresh, by its storage table's snapshot id, a tag of it, or a
   * time, as a table is: the view's columns, under the view's name.
   */
  @Test
  void aViewIsReadAsOfAnEarlierRefresh() {
    // Main's history: the storage's other snapshots are its change feed's (gold opened it).
    Row first = sql("SELECT snapshot_id, CAST(made_current_at AS STRING) FROM lake." + ns + ".silver__storage.history ORDER BY made_current_at DESC").get(0);
    java.util.List<Row> before = sql("SELECT * FROM silver ORDER BY id");
    sql("ALTER TABLE silver__storage CREATE TAG before_nara AS OF VERSION " + first.getLong(0));
    sql("INSERT INTO bronze VALUES (5, 'nara', 4)");
    sql("REFRESH MATERIALIZED VIEW silver");
    assertThat(sql("SELECT * FROM silver")).hasSize(4);

    for (String asOf : new String[] {"VERSION AS OF " + first.getLong(0), "VERSION AS OF 'before_nara'",
        "TIMESTAMP AS OF '" + first.getString(1) + "'"}) {
      assertThat(spark.sql("SELECT * FROM silver " + asOf).columns()).as(asOf).containsExactly("id", "city", "fare");
      assertThat(sql("SELECT * FROM silver " + asOf + " ORDER BY id")).as(asOf).isEqualTo(before);
    }
    assertThat(sql("SELECT s.city FROM silver VERSION AS OF " + first.getLong(0) + " AS s WHERE s.id = 1"))
        .singleElement().satisfies(r -> assertThat(r.getString(0)).isEqualTo("TOKYO"));
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("SELECT * FROM silver VERSION AS OF 'no_such_tag'")))
        .hasMessageContaining(q("silver"))
        .hasMessageContaining("no_such_tag");
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> sql("SELECT * FROM silver TIMESTAMP AS OF '2000-01-01 00:00:00'")))
        .hasMessageContaining(q("silver"))
        .hasMessageContaining("2000-01-01");
  }

  @Test
  void bronzeInsertMakesGoldStaleThroughItsUpstream() {
    sql("INSERT INTO bronze VALUES (5, 'nara', 4)");

    assertThat(freshness("gold"))
        .startsWith("STALE")
        .contains("upstream " + q("silver") + " is stale")
        .contains(q("bronze"));
    // Gold's own sources did not move: nothing to do, and the reason says where the change waits.
    Row gold = sql("REFRESH MATERIALIZED VIEW gold").get(0);
    assertThat(gold.getString(1)).isEqualTo("NO_CHANGE");
    assertThat(gold.getString(2))
        .contains("no source changed since the last refresh")
        .contains("its source lake." + q("silver") + " is stale itself")
        .contains("REFRESH ... CASCADE");
  }

  @Test
  void refreshingSilverThenGoldMakesBothFresh() {
    sql("INSERT INTO bronze VALUES (5, 'nara', 4), (6, 'tokyo', 1)");

    sql("REFRESH MATERIALIZED VIEW silver");

    assertThat(freshness("silver")).isEqualTo("FRESH");
    assertThat(freshness("gold")).startsWith("STALE").contains(q("silver__storage"));

    sql("REFRESH MATERIALIZED VIEW gold");

    assertThat(freshness("gold")).isEqualTo("FRESH");
    assertSameRows("SELECT * FROM gold", GOLD_DIRECT, 3);
  }

  @Test
  void goldReadsSilversStorageAndEqualsTheDirectQuery() {
    assertSameRows("SELECT * FROM gold", GOLD_DIRECT, 2);
    assertSameRows("SELECT * FROM silver", SILVER_QUERY, 3);
    String plan = spark.sql("SELECT * FROM gold").queryExecution().analyzed().toString();
    assertThat(plan).contains("gold__storage");
    assertThat(refreshState("gold").sourceStates())
        .extracting(s -> s.qualifiedName())
        .contains(q("silver"), q("silver__storage"))
        .doesNotContain(q("bronze"));
  }

  @Test
  void goldRefreshedBeforeSilverStillReadsSilversStoredRows() {
    sql("INSERT INTO bronze VALUES (5, 'nara', 4)");

    // Silver is stale but its storage did not move, so Gold has nothing new to read.
    assertThat(sql("REFRESH MATERIALIZED VIEW gold").get(0).getString(1)).isEqualTo("NO_CHANGE");
    assertSameRows("SELECT * FROM gold", "SELECT city, count(*), sum(fare) FROM silver GROUP BY city", 2);
  }

  @Test
  void redefiningTheUpstreamMakesTheReaderStale() {
    sql("CREATE OR REPLACE MATERIALIZED VIEW silver AS SELECT id, upper(city) AS city, fare FROM bronze");

    assertThat(freshness("gold")).startsWith("STALE").contains(q("silver"));

    sql("REFRESH MATERIALIZED VIEW gold");

    assertThat(freshness("gold")).isEqualTo("FRESH");
    assertSameRows(
        "SELECT * FROM gold",
        "SELECT upper(city) AS city, count(*), sum(fare) FROM bronze GROUP BY upper(city)",
        3);
  }

  @Test
  void qualifiedColumnReferencesToAnMvKeepWorking() {
    assertSameRows(
        "SELECT g.city, s.id FROM gold g JOIN silver s ON g.city = s.city",
        "SELECT g.city, s.id FROM (" + GOLD_DIRECT + ") g JOIN (" + SILVER_QUERY + ") s ON g.city = s.city",
        3);
    assertSameRows(
        "SELECT silver.id FROM lake." + ns + ".silver",
        "SELECT id FROM (" + SILVER_QUERY + ")",
        3);
  }
}
