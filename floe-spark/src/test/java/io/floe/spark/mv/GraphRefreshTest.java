package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.SourceState;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshStatus;
import io.floe.refresh.RefreshType;
import io.floe.spark.refresh.GraphRefresh;
import io.floe.spark.refresh.GraphRefreshResult;
import io.floe.spark.refresh.RefreshListener;
import io.floe.sql.QualifiedName;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cascading refreshes over the dependency graph: order, one consistent set of pinned snapshots,
 * parallel branches, and skipping what reads a failed view.
 */
class GraphRefreshTest extends MvTestSupport {

  @Override
  protected String prefix() {
    return "graph";
  }

  @BeforeEach
  void events() {
    sql("CREATE TABLE events (id INT, v INT) USING iceberg");
    sql("INSERT INTO events VALUES (1, 10), (2, 20)");
  }

  private MaterializedView mv(String name) {
    return new MaterializedViewCatalog(spark).load(QualifiedName.of("lake", ns, name)).orElseThrow();
  }

  private String full(String name) {
    return "lake." + ns + "." + name;
  }

  private GraphRefresh graph() {
    return GraphRefresh.of((SparkSession) spark);
  }

  /** The snapshot of table {@code table} (of this namespace) that {@code mv}'s last refresh recorded. */
  private long recordedSnapshotOf(String mv, String table) {
    return refreshState(mv).sourceStates().stream()
        .filter(s -> s.type() == SourceState.Type.TABLE && s.name().equals(table))
        .findFirst()
        .flatMap(SourceState::snapshotId)
        .orElseThrow();
  }

  @Test
  void cascadeRefreshesReadersAfterTheirSourcesAtWhatTheSourceCommitted() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, v FROM events WHERE v > 0");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n, sum(v) AS total FROM silver");
    sql("INSERT INTO events VALUES (3, 30)");

    List<Row> rows = sql("REFRESH MATERIALIZED VIEW silver CASCADE");

    assertThat(rows.stream().map(r -> r.getString(0))).containsExactly(full("silver"), full("gold"));
    assertThat(rows.stream().map(r -> r.<String>getAs("status"))).containsOnly("SUCCEEDED");
    long silverCommitted = rows.get(0).getLong(8);
    assertThat(recordedSnapshotOf("gold", "silver__storage")).isEqualTo(silverCommitted);
    assertSameRows("SELECT * FROM gold", "SELECT count(*) AS n, sum(v) AS total FROM events WHERE v > 0", 1);
    // One run id for the whole statement.
    List<Row> history = sql("SHOW REFRESHES FOR silver LIMIT 1");
    List<Row> goldHistory = sql("SHOW REFRESHES FOR gold LIMIT 1");
    assertThat(goldHistory.get(0).<String>getAs("run_id")).isEqualTo(history.get(0).<String>getAs("run_id"));
  }

  @Test
  void aFailedViewSkipsItsReadersWhileTheRestStaysCommitted() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, v FROM events");
    sql("CREATE MATERIALIZED VIEW checked AS SELECT id, CASE WHEN v < 0 THEN raise_error('negative v') ELSE v END AS v FROM silver");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n, sum(v) AS total FROM checked");
    sql("CREATE MATERIALIZED VIEW positive AS SELECT id FROM silver WHERE v > 0");
    long goldBefore = storageSnapshot("gold").snapshotId();
    long checkedBefore = storageSnapshot("checked").snapshotId();
    sql("INSERT INTO events VALUES (3, -1), (4, 40)");

    List<Row> rows = sql("REFRESH MATERIALIZED VIEW silver CASCADE");

    Map<String, Row> byView = rows.stream().collect(Collectors.toMap(r -> r.getString(0), r -> r));
    assertThat(byView).containsOnlyKeys(full("silver"), full("checked"), full("gold"), full("positive"));
    assertThat(byView.get(full("silver")).<String>getAs("status")).isEqualTo("SUCCEEDED");
    assertThat(byView.get(full("positive")).<String>getAs("status")).isEqualTo("SUCCEEDED");
    Row failed = byView.get(full("checked"));
    assertThat(failed.<String>getAs("status")).isEqualTo("FAILED");
    assertThat(failed.getString(2)).contains(full("checked")).contains("negative v");
    Row skipped = byView.get(full("gold"));
    assertThat(skipped.<String>getAs("status")).isEqualTo("SKIPPED");
    assertThat(skipped.getString(2)).startsWith("upstream " + full("checked") + " failed: ").contains("negative v");

    assertSameRows("SELECT * FROM silver", "SELECT id, v FROM events", 4);
    assertSameRows("SELECT * FROM positive", "SELECT id FROM events WHERE v > 0", 3);
    assertThat(storageSnapshot("checked").snapshotId()).isEqualTo(checkedBefore);
    assertThat(storageSnapshot("gold").snapshotId()).isEqualTo(goldBefore);

    Row goldHistory = sql("SHOW REFRESHES FOR gold LIMIT 1").get(0);
    Row checkedHistory = sql("SHOW REFRESHES FOR checked LIMIT 1").get(0);
    Row silverHistory = sql("SHOW REFRESHES FOR silver LIMIT 1").get(0);
    assertThat(goldHistory.<String>getAs("status")).isEqualTo("SKIPPED");
    assertThat(goldHistory.<String>getAs("reason")).isEqualTo(skipped.getString(2));
    assertThat(checkedHistory.<String>getAs("status")).isEqualTo("FAILED");
    assertThat(silverHistory.<String>getAs("status")).isEqualTo("SUCCEEDED");
    assertThat(List.of(goldHistory.<String>getAs("run_id"), checkedHistory.<String>getAs("run_id")))
        .containsOnly(silverHistory.<String>getAs("run_id"));
  }

  @Test
  void viewsOverOneTableReadTheSnapshotPinnedAtTheStartWhileAWriterCommits() {
    sql("CREATE MATERIALIZED VIEW totals AS SELECT sum(v) AS total FROM events");
    sql("CREATE MATERIALIZED VIEW counts AS SELECT count(*) AS n FROM events");
    sql("INSERT INTO events VALUES (3, 30)");
    long pinned = currentSnapshotId("events");
    AtomicBoolean wrote = new AtomicBoolean();

    GraphRefreshResult result =
        graph()
            .targets(List.of(mv("totals"), mv("counts")))
            .parallelism(1)
            .listener(
                new RefreshListener() {
                  @Override
                  public void finished(RefreshOutcome outcome) {
                    // A writer commits between the two refreshes.
                    if (wrote.compareAndSet(false, true)) {
                      sql("INSERT INTO events VALUES (4, 40)");
                    }
                  }
                })
            .refresh();

    assertThat(result.succeeded()).isTrue();
    assertThat(wrote).isTrue();
    assertThat(currentSnapshotId("events")).isNotEqualTo(pinned);
    assertThat(recordedSnapshotOf("totals", "events")).isEqualTo(pinned);
    assertThat(recordedSnapshotOf("counts", "events")).isEqualTo(pinned);
    String atPin = "SELECT * FROM lake." + ns + ".events VERSION AS OF " + pinned;
    assertSameRows("SELECT * FROM totals", "SELECT sum(v) AS total FROM (" + atPin + ")", 1);
    assertSameRows("SELECT * FROM counts", "SELECT count(*) AS n FROM (" + atPin + ")", 1);
  }

  @Test
  void independentViewsRefreshAtTheSameTime() {
    sql("CREATE MATERIALIZED VIEW totals AS SELECT sum(v) AS total FROM events");
    sql("CREATE MATERIALIZED VIEW counts AS SELECT count(*) AS n FROM events");
    sql("INSERT INTO events VALUES (3, 30)");
    // Each refresh waits at the barrier until the other has started too: they can only both
    // pass if they run at once.
    CyclicBarrier bothStarted = new CyclicBarrier(2);
    Map<String, String> threads = new ConcurrentHashMap<>();

    GraphRefreshResult result =
        graph()
            .targets(List.of(mv("totals"), mv("counts")))
            .parallelism(2)
            .listener(
                new RefreshListener() {
                  @Override
                  public void started(String materializedView) {
                    threads.put(materializedView, Thread.currentThread().getName());
                    try {
                      bothStarted.await(120, TimeUnit.SECONDS);
                    } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                      throw new IllegalStateException("The two refreshes did not overlap", e);
                    }
                  }
                })
            .refresh();

    assertThat(result.outcomes()).allSatisfy(o -> assertThat(o.status()).as(o.message()).isEqualTo(RefreshStatus.SUCCEEDED));
    assertThat(threads).hasSize(2);
    assertThat(Set.copyOf(threads.values())).hasSize(2);
    assertSameRows("SELECT * FROM totals", "SELECT sum(v) AS total FROM events", 1);
    assertSameRows("SELECT * FROM counts", "SELECT count(*) AS n FROM events", 1);
  }

  @Test
  void fullRefreshOfASubsetLeavesTheOthersToTheirUsualRefresh() {
    sql("CREATE MATERIALIZED VIEW totals AS SELECT sum(v) AS total FROM events");
    sql("CREATE MATERIALIZED VIEW counts AS SELECT count(*) AS n FROM events");

    GraphRefreshResult result =
        graph().targets(List.of(mv("totals"), mv("counts"))).fullRefreshOf(List.of(full("counts"))).refresh();

    assertThat(result.outcome(full("counts")).orElseThrow().result().type()).isEqualTo(RefreshType.FULL);
    assertThat(result.outcome(full("counts")).orElseThrow().result().reason()).isEqualTo("full refresh requested");
    assertThat(result.outcome(full("totals")).orElseThrow().result().type()).isEqualTo(RefreshType.NO_CHANGE);
  }

  @Test
  void withoutDownstreamOnlyTheTargetsRefresh() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, v FROM events");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n FROM silver");
    sql("INSERT INTO events VALUES (3, 30)");

    GraphRefreshResult result = graph().target(mv("silver")).downstream(false).refresh();

    assertThat(result.outcomes()).extracting(RefreshOutcome::materializedView).containsExactly(full("silver"));
    assertThat(freshness("gold")).isNotEqualTo("FRESH");
  }

  @Test
  void aTargetReadingAnotherThroughAViewLeftOutStartsAfterIt() {
    sql("CREATE MATERIALIZED VIEW bronze_copy AS SELECT id, v FROM events");
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, v FROM bronze_copy WHERE v > 0");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n FROM silver");
    sql("INSERT INTO events VALUES (3, 30)");
    List<String> events = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    GraphRefreshResult result =
        graph().targets(List.of(mv("gold"), mv("bronze_copy"))).downstream(false).parallelism(2)
            .listener(new RefreshListener() {
              @Override
              public void started(String materializedView) {
                events.add("start " + materializedView);
              }

              @Override
              public void finished(RefreshOutcome outcome) {
                events.add("end " + outcome.materializedView());
              }
            })
            .refresh();

    assertThat(result.succeeded()).isTrue();
    assertThat(events).containsExactly(
        "start " + full("bronze_copy"), "end " + full("bronze_copy"), "start " + full("gold"), "end " + full("gold"));
  }

  @Test
  void eachViewIsRecordedWithItsOwnTriggerUnderTheRunsId() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, v FROM events");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n FROM silver");
    sql("INSERT INTO events VALUES (3, 30)");

    GraphRefreshResult result =
        graph().targets(List.of(mv("silver"), mv("gold")))
            .run(io.floe.refresh.RefreshRun.start(io.floe.refresh.RefreshTrigger.SCHEDULE))
            .trigger(full("silver"), io.floe.refresh.RefreshTrigger.CHANGE)
            .refresh();

    assertThat(result.succeeded()).isTrue();
    Row silver = sql("SHOW REFRESHES FOR silver LIMIT 1").get(0);
    Row gold = sql("SHOW REFRESHES FOR gold LIMIT 1").get(0);
    assertThat(silver.<String>getAs("trigger")).isEqualTo("CHANGE");
    assertThat(gold.<String>getAs("trigger")).isEqualTo("SCHEDULE");
    assertThat(silver.<String>getAs("run_id")).isEqualTo(result.run().runId()).isEqualTo(gold.<String>getAs("run_id"));
  }

  @Test
  void aStoppedRunFinishesTheRefreshInFlightAndSkipsTheRest() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, v FROM events");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n FROM silver");
    sql("INSERT INTO events VALUES (3, 30)");
    AtomicBoolean stop = new AtomicBoolean();

    GraphRefreshResult result =
        graph().target(mv("silver")).stopWhen(stop::get)
            .listener(new RefreshListener() {
              @Override
              public void started(String materializedView) {
                stop.set(true);
              }
            })
            .refresh();

    assertThat(result.outcome(full("silver")).orElseThrow().status()).isEqualTo(RefreshStatus.SUCCEEDED);
    RefreshOutcome gold = result.outcome(full("gold")).orElseThrow();
    assertThat(gold.status()).isEqualTo(RefreshStatus.SKIPPED);
    assertThat(gold.message()).contains("stopped");
    assertThat(sql("SHOW REFRESHES FOR gold LIMIT 1").get(0).<String>getAs("status")).isEqualTo("SKIPPED");
    assertSameRows("SELECT * FROM silver", "SELECT id, v FROM events", 3);
  }
}
