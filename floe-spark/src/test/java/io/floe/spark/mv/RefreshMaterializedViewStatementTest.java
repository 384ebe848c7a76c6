package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.mv.SourceState;
import org.apache.iceberg.Snapshot;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** REFRESH MATERIALIZED VIEW [FULL], NO_CHANGE, and the refresh-state each refresh commits. */
class RefreshMaterializedViewStatementTest extends MvTestSupport {
  private static final String TOTALS = "SELECT region, sum(amount) AS total FROM orders GROUP BY region";

  @Override
  protected String prefix() {
    return "refresh";
  }

  @BeforeEach
  void ordersAndView() {
    sql("CREATE TABLE orders (id INT, region STRING, amount DECIMAL(10,2)) USING iceberg");
    sql("INSERT INTO orders VALUES (1, 'Tokyo', 10.00), (2, 'Osaka', 20.00)");
    sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS);
  }

  @Test
  void aFullRefreshCountsAsRemovedTheRowsTheViewHeldNotTheRecordsOfItsOldFiles() {
    for (int i = 1; i <= 3; i++) {
      sql("UPDATE orders SET amount = amount + 1 WHERE id = 1");
      assertThat(sql("REFRESH MATERIALIZED VIEW totals").get(0).getString(1)).isEqualTo("INCREMENTAL");
    }

    Row full = sql("REFRESH MATERIALIZED VIEW totals FULL").get(0);

    assertThat(full.getString(1)).isEqualTo("FULL");
    assertThat(full.getLong(4)).as("rows written").isEqualTo(2);
    assertThat(full.getLong(5)).as("rows removed: the two the view held").isEqualTo(2);
  }

  @Test
  void refreshAfterASourceChangeIsIncrementalAndCommitsExactlyOneSnapshot() {
    sql("INSERT INTO orders VALUES (3, 'Nagoya', 1.00)");
    long before = storageSnapshotCount("totals");

    Row result = sql("REFRESH MATERIALIZED VIEW totals").get(0);

    assertThat(result.getString(0)).isEqualTo("lake." + ns + ".totals");
    assertThat(result.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(result.getString(2)).isEqualTo("sources appended rows");
    assertThat(storageSnapshotCount("totals")).isEqualTo(before + 1);
    assertThat(result.getLong(8)).isEqualTo(storageSnapshot("totals").snapshotId());
    assertSameRows("SELECT * FROM totals", TOTALS, 3);
  }

  @Test
  void refreshWithoutSourceChangeReturnsNoChangeAndCommitsNothing() {
    long before = storageSnapshotCount("totals");
    long snapshot = storageSnapshot("totals").snapshotId();

    Row result = sql("REFRESH MATERIALIZED VIEW totals").get(0);

    assertThat(result.getString(1)).isEqualTo("NO_CHANGE");
    assertThat(result.getLong(8)).isEqualTo(snapshot);
    assertThat(storageSnapshotCount("totals")).isEqualTo(before);
    assertThat(storageSnapshot("totals").snapshotId()).isEqualTo(snapshot);
  }

  @Test
  void refreshFullRecomputesEvenWithoutSourceChange() {
    long before = storageSnapshotCount("totals");

    Row result = sql("REFRESH MATERIALIZED VIEW totals FULL").get(0);

    assertThat(result.getString(1)).isEqualTo("FULL");
    assertThat(result.getString(2)).isEqualTo("full refresh requested");
    assertThat(storageSnapshotCount("totals")).isEqualTo(before + 1);
    Snapshot current = storageSnapshot("totals");
    assertThat(current.summary())
        .containsEntry(MaterializedViewProperties.SUMMARY_REFRESH_TYPE, "FULL")
        .containsEntry(MaterializedViewProperties.SUMMARY_REFRESH_REASON, "full refresh requested");
    assertSameRows("SELECT * FROM totals", TOTALS, 2);
  }

  @Test
  void refreshStateRecordsTheViewVersionAndEachSourceSnapshot() {
    sql("INSERT INTO orders VALUES (3, 'Nagoya', 1.00)");
    sql("REFRESH MATERIALIZED VIEW totals");

    RefreshState state = refreshState("totals");

    assertThat(state.viewVersionId()).isEqualTo(view("totals").currentVersion().versionId());
    assertThat(state.sourceStates()).hasSize(1);
    SourceState orders = state.sourceStates().get(0);
    assertThat(orders.type()).isEqualTo(SourceState.Type.TABLE);
    assertThat(orders.qualifiedName()).isEqualTo(q("orders"));
    assertThat(orders.uuid()).isEqualTo(table("orders").uuid().toString());
    assertThat(orders.snapshotId()).contains(currentSnapshotId("orders"));
    assertThat(orders.schemaId()).contains(table("orders").schema().schemaId());
    assertThat(storageSnapshot("totals").summary())
        .containsEntry(MaterializedViewProperties.SUMMARY_REFRESH_TYPE, "INCREMENTAL")
        .containsKey(MaterializedViewProperties.SUMMARY_REFRESH_REASON);
  }

  @Test
  void refreshStateOfAnMvOverAnMvRecordsTheViewVersionAndStorageSnapshot() {
    sql("CREATE MATERIALIZED VIEW big AS SELECT region, total FROM totals WHERE total > 5");

    RefreshState state = refreshState("big");

    assertThat(state.sourceStates())
        .extracting(SourceState::type, SourceState::qualifiedName)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(SourceState.Type.VIEW, q("totals")),
            org.assertj.core.groups.Tuple.tuple(SourceState.Type.TABLE, q("totals__storage")));
    SourceState viewState =
        state.sourceStates().stream().filter(s -> s.type() == SourceState.Type.VIEW).findFirst().orElseThrow();
    SourceState storageState =
        state.sourceStates().stream().filter(s -> s.type() == SourceState.Type.TABLE).findFirst().orElseThrow();
    assertThat(viewState.versionId()).contains(view("totals").currentVersion().versionId());
    assertThat(viewState.uuid()).isEqualTo(view("totals").uuid().toString());
    assertThat(storageState.snapshotId()).contains(storageSnapshot("totals").snapshotId());
  }

  @Test
  void eachRefreshCommitsOneSnapshotWithItsOwnState() {
    long first = storageSnapshotCount("totals");
    for (int i = 0; i < 2; i++) {
      sql("INSERT INTO orders VALUES (" + (10 + i) + ", 'Kobe', 2.00)");
      sql("REFRESH MATERIALIZED VIEW totals");
      assertThat(storageSnapshotCount("totals")).isEqualTo(first + i + 1);
      assertThat(refreshState("totals").sourceStates().get(0).snapshotId()).contains(currentSnapshotId("orders"));
    }
    assertSameRows("SELECT * FROM totals", TOTALS, 3);
  }

  @Test
  void refreshOfAMissingViewFailsNamingIt() {
    assertThat(errorOf("REFRESH MATERIALIZED VIEW nope"))
        .contains("lake." + ns + ".nope")
        .contains("does not exist");
  }

  @Test
  void refreshOfATableFailsSayingItIsATable() {
    assertThat(errorOf("REFRESH MATERIALIZED VIEW orders"))
        .contains("lake." + ns + ".orders")
        .contains("it is a table, not a materialized view");
  }

  @Test
  void refreshCascadeRefreshesReadersAfterTheirSources() {
    sql("CREATE MATERIALIZED VIEW big AS SELECT region, total FROM totals WHERE total > 5");
    sql("INSERT INTO orders VALUES (3, 'Tokyo', 7.00)");

    var rows = sql("REFRESH MATERIALIZED VIEW totals CASCADE");

    assertThat(rows).extracting(r -> r.getString(0))
        .containsExactly("lake." + ns + ".totals", "lake." + ns + ".big");
    assertSameRows("SELECT * FROM big", "SELECT * FROM (" + TOTALS + ") WHERE total > 5", 2);
    assertThat(freshness("big")).isEqualTo("FRESH");
  }
}
