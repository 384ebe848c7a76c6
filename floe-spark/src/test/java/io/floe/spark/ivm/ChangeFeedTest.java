package io.floe.spark.ivm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SameRows;
import io.floe.spark.SharedSpark;
import io.floe.spark.capture.ChangeFeed;
import java.util.List;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A materialized view over a materialized view reads the upstream's change from the change feed
 * its refreshes record, not from its storage files.
 */
class ChangeFeedTest {
  private static final String SILVER = "SELECT id, upper(city) AS city, fare FROM bronze WHERE fare > 0";
  private static final String GOLD = "SELECT city, count(*) AS trips, sum(fare) AS fares FROM silver GROUP BY city";
  private static final String GOLD_DIRECT =
      "SELECT city, count(*) AS trips, sum(fare) AS fares FROM (" + SILVER + ") GROUP BY city";

  private SparkSession spark;
  private String ns;

  @BeforeEach
  void bronzeSilverGold() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace("feed");
    spark.sql("CREATE TABLE bronze (id INT, city STRING, fare INT) USING iceberg TBLPROPERTIES ('format-version'='2',"
        + " 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')");
    spark.sql("INSERT INTO bronze SELECT id, element_at(array('tokyo', 'osaka', 'kobe'), CAST(id % 3 + 1 AS INT)), CAST(id % 50 AS INT) FROM range(0, 600)");
    spark.sql("CREATE MATERIALIZED VIEW silver AS " + SILVER);
    spark.sql("CREATE MATERIALIZED VIEW gold AS " + GOLD);
  }

  private Row refresh(String mv) {
    return spark.sql("REFRESH MATERIALIZED VIEW " + mv).first();
  }

  private Table storage(String mv) {
    try {
      return Spark3Util.loadIcebergTable(spark, "lake." + ns + "." + mv + "__storage");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void assertMatches(String mv, String query) {
    SameRows.assertSameRows(mv, spark.sql("SELECT * FROM " + mv), spark.sql(query));
  }

  private String explainedSource(String mv) {
    return ExplainedRefresh.detail(spark, mv, "source ");
  }

  @Test
  void goldReadsSilversRecordedChangeNotItsStorageFiles() {
    // A spread change: every storage file of Silver gains a position delete.
    spark.sql("UPDATE bronze SET fare = fare + 100 WHERE id % 97 = 0");
    spark.sql("DELETE FROM bronze WHERE id % 89 = 0");
    spark.sql("INSERT INTO bronze VALUES (1000, 'nara', 5), (1001, 'nara', 0)");
    Row silver = refresh("silver");
    assertThat(silver.getString(1)).isEqualTo("INCREMENTAL");
    long changedRows = silver.getLong(4) + silver.getLong(5);

    Snapshot silverCommit = storage("silver").currentSnapshot();
    assertThat(silverCommit.summary()).containsKey(ChangeFeed.SNAPSHOT_PROPERTY);
    assertThat(explainedSource("gold")).contains("change feed");
    Row gold = refresh("gold");

    assertThat(gold.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(gold.getLong(3)).as("rows read: Silver's change, not its storage").isEqualTo(changedRows);
    assertMatches("gold", GOLD_DIRECT);
    assertMatches("silver", SILVER);
    // Readers of the MV see main only.
    assertThat(spark.sql("SELECT count(*) FROM silver").first().getLong(0))
        .isEqualTo(spark.sql("SELECT count(*) FROM (" + SILVER + ")").first().getLong(0));
  }

  @Test
  void severalRefreshesAndACompactionOfSilverAreReadTogether() {
    spark.sql("DELETE FROM bronze WHERE id < 30");
    refresh("silver");
    spark.sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".silver__storage', options => map('rewrite-all', 'true'))");
    spark.sql("INSERT INTO bronze VALUES (2000, 'kyoto', 3)");
    refresh("silver");
    // Bronze changes without a Silver row changing (id 0 has fare 0): an empty change.
    spark.sql("UPDATE bronze SET city = 'nara' WHERE id = 0");
    refresh("silver");

    assertThat(explainedSource("gold")).contains("change feed");
    Row gold = refresh("gold");

    assertThat(gold.getString(1)).isEqualTo("INCREMENTAL");
    // Ids 1 to 29 left Silver (id 0 was never in it), id 2000 came in.
    assertThat(gold.getLong(3)).isEqualTo(29 + 1);
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void aFullRefreshOfSilverRecordsNoChangeSoGoldReadsSilversFiles() {
    spark.sql("DELETE FROM bronze WHERE id = 7");
    refresh("silver");
    spark.sql("REFRESH MATERIALIZED VIEW silver FULL");

    assertThat(explainedSource("gold")).doesNotContain("change feed");
    Row gold = refresh("gold");

    assertThat(gold.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(gold.getLong(3)).as("the storage rows the full refresh rewrote").isGreaterThan(100);
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void aLostFeedEntryFallsBackToTheStorageFiles() {
    spark.sql("DELETE FROM bronze WHERE id = 8");
    refresh("silver");
    Table silver = storage("silver");
    long feedSnapshot = Long.parseLong(silver.currentSnapshot().summary().get(ChangeFeed.SNAPSHOT_PROPERTY));
    // The feed snapshot expires (its branch keeps only its head, which gets a later entry).
    spark.sql("DELETE FROM bronze WHERE id = 9");
    refresh("silver");
    silver.refresh();
    silver.expireSnapshots().expireSnapshotId(feedSnapshot).commit();

    assertThat(explainedSource("gold")).doesNotContain("change feed");
    Row gold = refresh("gold");

    assertThat(gold.getString(1)).isEqualTo("INCREMENTAL");
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void trimmingDropsChangesNoSnapshotRefersTo() {
    spark.sql("DELETE FROM bronze WHERE id = 10");
    refresh("silver");
    spark.sql("DELETE FROM bronze WHERE id = 11");
    refresh("silver");
    Table silver = storage("silver");
    List<Long> mainSnapshots =
        spark.sql("SELECT snapshot_id FROM lake." + ns + ".silver__storage.snapshots ORDER BY committed_at")
            .collectAsList().stream().map(r -> r.getLong(0)).toList();
    assertThat(feedFiles(silver)).isEqualTo(2);
    assertThat(ChangeFeed.trim(silver)).as("both changes are referenced").isZero();

    // Expire the main snapshot of the first refresh: its change leaves the feed.
    long firstRefresh = mainSnapshots.stream()
        .filter(id -> silver.snapshot(id).summary().containsKey(ChangeFeed.SNAPSHOT_PROPERTY)
            && !ChangeFeed.NONE.equals(silver.snapshot(id).summary().get(ChangeFeed.SNAPSHOT_PROPERTY)))
        .findFirst().orElseThrow();
    silver.expireSnapshots().expireSnapshotId(firstRefresh).commit();

    assertThat(ChangeFeed.trim(silver)).isEqualTo(1);
    assertThat(feedFiles(silver)).isEqualTo(1);
    // Gold recorded a snapshot before the expired one: its change is read some other way, and right.
    refresh("gold");
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void anMvNothingReadsRecordsNoChangeUntilAReaderOpensItsFeed() {
    spark.sql("CREATE MATERIALIZED VIEW lonely AS " + SILVER);
    spark.sql("DELETE FROM bronze WHERE id = 12");
    assertThat(refresh("lonely").getString(1)).isEqualTo("INCREMENTAL");
    Table lonely = storage("lonely");
    assertThat(ChangeFeed.isOpen(lonely)).as("nothing reads lonely: no feed").isFalse();
    assertThat(lonely.currentSnapshot().summary()).doesNotContainKey(ChangeFeed.SNAPSHOT_PROPERTY);

    spark.sql("CREATE MATERIALIZED VIEW reader AS SELECT city, count(*) AS trips FROM lonely GROUP BY city");
    lonely.refresh();
    assertThat(ChangeFeed.isOpen(lonely)).as("the reader's first refresh opened the feed").isTrue();
    spark.sql("DELETE FROM bronze WHERE id = 13");
    spark.sql("INSERT INTO bronze VALUES (3000, 'nara', 4)");
    assertThat(refresh("lonely").getString(1)).isEqualTo("INCREMENTAL");
    lonely.refresh();
    assertThat(lonely.currentSnapshot().summary()).containsKey(ChangeFeed.SNAPSHOT_PROPERTY);
    assertThat(explainedSource("reader")).contains("change feed");
    Row reader = refresh("reader");

    assertThat(reader.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(reader.getLong(3)).as("rows read: lonely's change").isEqualTo(2);
    assertMatches("reader", "SELECT city, count(*) AS trips FROM (" + SILVER + ") GROUP BY city");
  }

  @Test
  void aChangeCommittedWhileTheFeedWasClosedIsReadFromTheStorageFiles() {
    // Gold opened Silver's feed when it was created; the branch goes, as if Silver's refresh had
    // loaded its storage table before Gold opened it.
    Table silver = storage("silver");
    assertThat(ChangeFeed.isOpen(silver)).isTrue();
    silver.manageSnapshots().removeBranch(ChangeFeed.BRANCH).commit();
    spark.sql("DELETE FROM bronze WHERE id = 14");
    assertThat(refresh("silver").getString(1)).isEqualTo("INCREMENTAL");
    silver.refresh();
    assertThat(silver.currentSnapshot().summary()).doesNotContainKey(ChangeFeed.SNAPSHOT_PROPERTY);

    assertThat(explainedSource("gold")).doesNotContain("change feed");
    Row gold = refresh("gold");

    assertThat(gold.getString(1)).isEqualTo("INCREMENTAL");
    assertMatches("gold", GOLD_DIRECT);
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).as("Gold's refresh opened the feed again").isTrue();
    spark.sql("DELETE FROM bronze WHERE id = 15");
    refresh("silver");
    assertThat(explainedSource("gold")).contains("change feed");
    assertThat(refresh("gold").getLong(3)).isEqualTo(1);
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void aFeedThatCannotBeOpenedIsAWarningAndTheChangeIsReadFromTheStorageFiles() {
    Table silver = storage("silver");
    silver.manageSnapshots().removeBranch(ChangeFeed.BRANCH).commit();
    // The feed's name is taken by a tag, so Gold cannot create the branch.
    silver.manageSnapshots().createTag(ChangeFeed.BRANCH, silver.currentSnapshot().snapshotId()).commit();
    spark.sql("DELETE FROM bronze WHERE id = 16");
    assertThat(refresh("silver").getString(1)).isEqualTo("INCREMENTAL");

    Row gold = refresh("gold");

    assertThat(gold.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(gold.<String>getAs("warnings"))
        .contains("cannot open the change feed of", "silver", "read from its storage files");
    assertMatches("gold", GOLD_DIRECT);
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).as("a tag is no feed").isFalse();
  }

  @Test
  void droppingTheLastReaderClosesTheFeed() {
    spark.sql("CREATE MATERIALIZED VIEW cities AS SELECT DISTINCT city FROM silver");
    Table silver = storage("silver");

    spark.sql("DROP MATERIALIZED VIEW gold");
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).as("cities still reads silver").isTrue();
    spark.sql("DROP MATERIALIZED VIEW cities");
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).as("nothing reads silver").isFalse();
    spark.sql("DELETE FROM bronze WHERE id = 17");
    assertThat(refresh("silver").getString(1)).isEqualTo("INCREMENTAL");
    silver.refresh();
    assertThat(silver.currentSnapshot().summary()).doesNotContainKey(ChangeFeed.SNAPSHOT_PROPERTY);

    spark.sql("CREATE MATERIALIZED VIEW gold AS " + GOLD);
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).isTrue();
    spark.sql("DELETE FROM bronze WHERE id = 18");
    refresh("silver");
    assertThat(refresh("gold").getLong(3)).as("read from the reopened feed").isEqualTo(1);
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void aReplacementThatStopsReadingAnMvClosesItsFeed() {
    Table silver = storage("silver");
    spark.sql("CREATE OR REPLACE MATERIALIZED VIEW gold AS " + GOLD + " HAVING count(*) > 0");
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).as("the new gold still reads silver").isTrue();

    spark.sql("CREATE OR REPLACE MATERIALIZED VIEW gold AS " + GOLD_DIRECT);
    silver.refresh();
    assertThat(ChangeFeed.isOpen(silver)).as("nothing reads silver now").isFalse();
    assertMatches("gold", GOLD_DIRECT);
  }

  @Test
  void aSourceMvWithNoDataYetIsOpenedOnceItHasSome() {
    spark.sql("CREATE MATERIALIZED VIEW deferred AS " + SILVER + " WITH NO DATA");
    spark.sql("CREATE MATERIALIZED VIEW over_deferred AS SELECT city, count(*) AS trips FROM deferred GROUP BY city");
    assertThat(spark.sql("REFRESH MATERIALIZED VIEW over_deferred").first().<String>getAs("warnings"))
        .as("nothing to open yet, and no warning about it").isNull();

    refresh("deferred");
    refresh("over_deferred");
    assertThat(ChangeFeed.isOpen(storage("deferred"))).isTrue();
    spark.sql("DELETE FROM bronze WHERE id = 19");
    refresh("deferred");
    assertThat(refresh("over_deferred").getLong(3)).as("read from the feed").isEqualTo(1);
    assertMatches("over_deferred", "SELECT city, count(*) AS trips FROM (" + SILVER + ") GROUP BY city");
  }

  private static long feedFiles(Table table) {
    table.refresh();
    try (var files = table.newScan().useRef(ChangeFeed.BRANCH).planFiles()) {
      long n = 0;
      for (var ignored : files) {
        n++;
      }
      return n;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
