package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.refresh.RefreshResult;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshTrigger;
import io.floe.refresh.RefreshType;
import io.floe.spark.refresh.RefreshExecutor;
import io.floe.spark.refresh.Source;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Snapshot;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/** Two refreshes of one view at once: both end well and the storage never holds duplicates. */
class ConcurrentRefreshTest extends MvTestSupport {
  private static final String QUERY = "SELECT id, name FROM people WHERE id > 0";

  @Override
  protected String prefix() {
    return "race";
  }

  private org.apache.spark.sql.classic.SparkSession classic() {
    return (org.apache.spark.sql.classic.SparkSession) spark;
  }

  private ResolvedName resolved(String name) {
    return new MaterializedViewCatalog(spark).resolve(List.of("lake", ns, name), "lake", List.of(ns));
  }

  /** Refreshes the view {@code name} alone, as a run that pinned its sources at {@code pins} would. */
  private RefreshResult refreshAt(String name, Map<String, Source> pins) {
    MaterializedView mv = new MaterializedViewCatalog(spark).loadExisting(resolved(name), "refresh");
    return new RefreshExecutor(classic()).refresh(mv, false, RefreshRun.start(RefreshTrigger.MANUAL), pins);
  }

  /**
   * In one process the second refresh waits for the first and starts from what it committed: it
   * finds nothing to do, computes nothing twice and commits nothing, where across processes it
   * would lose the commit race and retry.
   */
  @Test
  void aSecondRefreshInTheSameProcessWaitsForTheFirstAndFindsNoChange() throws Exception {
    sql("CREATE TABLE pets (id INT, name STRING) USING iceberg");
    sql("INSERT INTO pets VALUES (1, 'rex'), (2, 'tom')");
    sql("CREATE MATERIALIZED VIEW named_pets AS SELECT id, upper(name) AS name FROM pets");
    sql("INSERT INTO pets VALUES (3, 'kit')");
    long snapshotsBefore = storageSnapshotCount("named_pets");

    List<Row> rows = refreshAtOnce("REFRESH MATERIALIZED VIEW lake." + ns + ".named_pets", 2);
    assertThat(rows).extracting(row -> row.<String>getAs("refresh_type")).containsExactlyInAnyOrder("INCREMENTAL", "NO_CHANGE");
    assertThat(rows).extracting(row -> row.<Integer>getAs("attempts")).containsOnly(1);
    assertThat(storageSnapshotCount("named_pets")).isEqualTo(snapshotsBefore + 1);
    assertSameRows("SELECT * FROM named_pets", "SELECT id, upper(name) AS name FROM pets", 3);
  }

  /**
   * A run pins its sources before it refreshes its views; another refresh may overtake it and read
   * newer snapshots of them (one in another process, or the one this refresh waited for). The run's
   * refresh then leaves the view where that one left it rather than take it back to the pins' older
   * data, for a table source and for a materialized view source alike.
   */
  @Test
  void aRunOvertakenByANewerRefreshDoesNotTakeTheViewBackInTime() {
    sql("CREATE TABLE rides (id INT, v INT) USING iceberg");
    sql("INSERT INTO rides VALUES (1, 10), (2, 20)");
    sql("CREATE MATERIALIZED VIEW ride_rows AS SELECT id, v FROM rides WHERE v > 0");
    sql("CREATE MATERIALIZED VIEW ride_total AS SELECT count(*) AS n, sum(v) AS v FROM ride_rows");
    ResolvedName rides = resolved("rides");
    ResolvedName rideRows = resolved("ride_rows");
    SourcePinning pinning = new SourcePinning(classic());
    Map<String, Source> oldPins =
        Map.of(rides.toString(), pinning.pinSource(rides), rideRows.toString(), pinning.pinSource(rideRows));

    sql("INSERT INTO rides VALUES (3, 30)");
    sql("REFRESH MATERIALIZED VIEW ride_rows CASCADE");
    long rowsSnapshot = storageSnapshot("ride_rows").snapshotId();
    long totalSnapshot = storageSnapshot("ride_total").snapshotId();

    for (String name : List.of("ride_rows", "ride_total")) {
      assertThat(refreshAt(name, oldPins).type()).as(name).isEqualTo(RefreshType.NO_CHANGE);
    }
    assertThat(storageSnapshot("ride_rows").snapshotId()).isEqualTo(rowsSnapshot);
    assertThat(storageSnapshot("ride_total").snapshotId()).isEqualTo(totalSnapshot);
    assertSameRows("SELECT * FROM ride_rows", "SELECT id, v FROM rides", 3);
    assertSameRows("SELECT * FROM ride_total", "SELECT 3L AS n, 60L AS v", 1);
  }

  /**
   * A table rolled back past the snapshot a view last read no longer has those rows: the run's pin
   * at the rolled-back state is right, and the view goes back with the table.
   */
  @Test
  void aRunAfterARollbackRefreshesTheViewBackToTheTable() {
    sql("CREATE TABLE tolls (id INT) USING iceberg");
    sql("INSERT INTO tolls VALUES (1)");
    long first = currentSnapshotId("tolls");
    sql("CREATE MATERIALIZED VIEW toll_ids AS SELECT id FROM tolls");
    sql("INSERT INTO tolls VALUES (2)");
    sql("REFRESH MATERIALIZED VIEW toll_ids");
    table("tolls").manageSnapshots().rollbackTo(first).commit();

    ResolvedName tolls = resolved("tolls");
    RefreshResult result = refreshAt("toll_ids", Map.of(tolls.toString(), new SourcePinning(classic()).pinSource(tolls)));
    assertThat(result.type()).isEqualTo(RefreshType.FULL);
    assertSameRows("SELECT * FROM toll_ids", "SELECT 1 AS id", 1);
  }

  /**
   * A writer that commits after a cascade refreshed an upstream view leaves that view stale when
   * its reader's turn comes. The reader finds nothing to do, and says the run's own view has later
   * writes to take, not that it should have been refreshed first.
   */
  @Test
  void aViewWhoseUpstreamThisRunRefreshedSaysLaterWritesWaitNotRefreshItFirst() {
    sql("CREATE TABLE fares (id INT, v INT) USING iceberg");
    sql("INSERT INTO fares VALUES (1, 10)");
    sql("CREATE MATERIALIZED VIEW fare_rows AS SELECT id, v FROM fares");
    sql("CREATE MATERIALIZED VIEW fare_total AS SELECT sum(v) AS v FROM fare_rows");
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView rows = catalog.loadExisting(resolved("fare_rows"), "refresh");
    Source committed = new SourcePinning(classic()).pinMaterializedView(rows, storageSnapshot("fare_rows").snapshotId());
    sql("INSERT INTO fares VALUES (2, 20)");

    String inRun = refreshAt("fare_total", Map.of(rows.name().toString(), committed.refreshedInThisRun())).reason();
    assertThat(inRun)
        .contains("its source " + rows.name() + " has sources written after this run read them")
        .doesNotContain("stale itself");
    String outside = refreshAt("fare_total", Map.of(rows.name().toString(), committed)).reason();
    assertThat(outside).contains("its source " + rows.name() + " is stale itself");
  }

  /**
   * A view the run refreshed can also be stale because a view it reads, outside the run, is: then
   * no later refresh of this run's views takes the change, and the advice to refresh first stays.
   */
  @Test
  void aViewWhoseUpstreamIsStaleThroughAViewOutsideTheRunIsToldToRefreshFirst() {
    sql("CREATE TABLE tips (id INT, v INT) USING iceberg");
    sql("INSERT INTO tips VALUES (1, 10)");
    sql("CREATE MATERIALIZED VIEW tip_rows AS SELECT id, v FROM tips");
    sql("CREATE MATERIALIZED VIEW tip_kept AS SELECT id, v FROM tip_rows WHERE v > 0");
    sql("CREATE MATERIALIZED VIEW tip_total AS SELECT sum(v) AS v FROM tip_kept");
    sql("INSERT INTO tips VALUES (2, 20)");

    MaterializedView kept = new MaterializedViewCatalog(spark).loadExisting(resolved("tip_kept"), "refresh");
    Source committed =
        new SourcePinning(classic()).pinMaterializedView(kept, storageSnapshot("tip_kept").snapshotId()).refreshedInThisRun();
    String reason = refreshAt("tip_total", Map.of(kept.name().toString(), committed)).reason();
    assertThat(reason)
        .contains("its source " + kept.name() + " is stale itself")
        .doesNotContain("written after this run");
  }

  /**
   * The rows a refresh's constraints leave out are quarantined once it committed: a refresh that
   * loses the commit to another process and retries keeps each of them once, not once per attempt.
   */
  @Test
  void aRefreshThatLosesTheRaceQuarantinesEachRejectedRowOnce() throws Exception {
    sql("CREATE TABLE readings (id BIGINT, v BIGINT) USING iceberg");
    sql("INSERT INTO readings SELECT id, CASE WHEN id % 10 = 0 THEN NULL ELSE id END FROM range(0, 2000)");
    sql("CREATE MATERIALIZED VIEW checked (CONSTRAINT has_value EXPECT (v IS NOT NULL) ON VIOLATION DROP ROW)"
        + " TBLPROPERTIES ('floe.expectations.quarantine' = 'true') AS SELECT id, v FROM readings");
    sql("INSERT INTO readings SELECT id, CASE WHEN id % 10 = 0 THEN NULL ELSE id END FROM range(2000, 3000)");

    String refresh = "REFRESH MATERIALIZED VIEW lake." + ns + ".checked";
    try (AnotherProcess other = AnotherProcess.start(io.floe.spark.SharedSpark.warehouse(), refresh)) {
      other.go();
      sql(refresh);
      String[] otherResult = other.result();
      System.out.println("The other process's refresh: " + otherResult[0] + " in " + otherResult[1] + " attempt(s)");
    }
    spark.sql("REFRESH TABLE lake." + ns + ".checked__quarantine");
    assertThat(count("SELECT * FROM checked__quarantine")).isEqualTo(300);
    assertThat(count("SELECT DISTINCT id FROM checked__quarantine")).isEqualTo(300);
    assertSameRows("SELECT * FROM checked", "SELECT id, v FROM readings WHERE v IS NOT NULL", 2700);
  }

  /**
   * A refresh that died while it held its private branch left the branch behind, and a branch
   * keeps its snapshots from expiring. The next refresh removes such branches once they are older
   * than any refresh runs, and leaves a young one (a refresh in flight elsewhere) alone.
   */
  @Test
  void aBranchADeadRefreshLeftIsRemovedOnceItIsOld() {
    sql("CREATE TABLE visits (id INT) USING iceberg");
    sql("INSERT INTO visits VALUES (1), (2)");
    sql("CREATE MATERIALIZED VIEW visit_ids AS SELECT id FROM visits");
    org.apache.iceberg.Table storage = table("visit_ids__storage");
    long head = storage.currentSnapshot().snapshotId();
    long now = System.currentTimeMillis();
    String hex = "0123456789abcdef0123456789abcdef";
    String dead = "floe_refresh_" + (now - io.floe.spark.ivm.BranchCommit.ABANDONED_AFTER.toMillis() - 60_000) + "_" + hex;
    String inFlight = "floe_refresh_" + (now - 60_000) + "_" + hex;
    String olderFormat = "floe_refresh_" + hex;
    storage.manageSnapshots().createBranch(dead, head).createBranch(inFlight, head).createBranch(olderFormat, head).commit();

    sql("INSERT INTO visits VALUES (3)");
    assertThat(sql("REFRESH MATERIALIZED VIEW visit_ids").get(0).<String>getAs("refresh_type")).isEqualTo("INCREMENTAL");

    storage.refresh();
    assertThat(storage.refs().keySet())
        .doesNotContain(dead)
        .contains(inFlight, olderFormat)
        .as("the refresh's own branch is gone").filteredOn(name -> name.startsWith("floe_refresh_")).hasSize(2);
  }

  private List<Row> refreshAtOnce(String statement, int times) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(times);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Row>> results = new ArrayList<>();
    try {
      for (int i = 0; i < times; i++) {
        results.add(pool.submit(() -> {
          start.await();
          return spark.sql(statement).first();
        }));
      }
      start.countDown();
      List<Row> rows = new ArrayList<>();
      for (Future<Row> result : results) {
        rows.add(result.get(120, TimeUnit.SECONDS));
      }
      return rows;
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Two processes refreshing one view at once, as two {@code floe sql} on one warehouse: the one
   * whose storage moved while it ran loses the commit and retries from the other's state.
   */
  @Test
  void twoProcessesRefreshingAtOnceLeaveTheViewEqualToTheQueryWithoutDuplicates() throws Exception {
    sql("CREATE TABLE people (id INT, name STRING) USING iceberg");
    sql("INSERT INTO people VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')");
    sql("CREATE MATERIALIZED VIEW adults AS " + QUERY);
    sql("INSERT INTO people VALUES (4, 'dee'), (5, 'eve')");
    long snapshotsBefore = storageSnapshotCount("adults");

    String refresh = "REFRESH MATERIALIZED VIEW lake." + ns + ".adults";
    List<String> types = new ArrayList<>();
    try (AnotherProcess other = AnotherProcess.start(io.floe.spark.SharedSpark.warehouse(), refresh)) {
      other.go();
      types.add(spark.sql(refresh).first().getString(1));
      String[] otherResult = other.result();
      types.add(otherResult[0]);
      System.out.println("The other process's refresh: " + otherResult[0] + " in " + otherResult[1] + " attempt(s)");
      // A loss of the race shows as a second attempt, which then finds nothing left to do.
      if (Integer.parseInt(otherResult[1]) > 1) {
        assertThat(otherResult[0]).isEqualTo("NO_CHANGE");
      }
    }
    assertThat(types).contains("INCREMENTAL").allMatch(t -> t.equals("INCREMENTAL") || t.equals("NO_CHANGE"));
    assertThat(storageSnapshotCount("adults"))
        .isBetween(snapshotsBefore + 1, snapshotsBefore + types.stream().filter("INCREMENTAL"::equals).count());
    spark.sql("REFRESH TABLE lake." + ns + ".adults__storage");

    assertSameRows("SELECT * FROM adults", QUERY, 5);
    assertThat(count("SELECT id FROM adults GROUP BY id HAVING count(*) > 1")).isZero();
    assertThat(freshness("adults")).isEqualTo("FRESH");
    // No storage snapshot, old or new, ever held a row twice. The change feed's snapshots are a
    // log of changes, not states of the view: a refresh that lost the race leaves its entry there
    // until the feed is trimmed, so they are not states to check.
    for (Snapshot snapshot : table("adults__storage").snapshots()) {
      if (snapshot.summary().containsKey(io.floe.spark.capture.ChangeFeed.TOKEN_PROPERTY)) {
        continue;
      }
      String version = "SELECT * FROM lake." + ns + ".adults__storage VERSION AS OF " + snapshot.snapshotId();
      assertThat(count("SELECT id FROM (" + version + ") GROUP BY id HAVING count(*) > 1"))
          .as("duplicates in storage snapshot %s", snapshot.snapshotId())
          .isZero();
    }
  }
}
