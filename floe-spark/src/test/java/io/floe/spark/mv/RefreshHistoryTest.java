package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.refresh.RefreshRun;
import io.floe.spark.refresh.RefreshHistory;
import io.floe.spark.refresh.RetryPolicy;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.apache.spark.scheduler.JobFailed;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The refresh history: one row per refresh, whatever started it and however it ended, and SHOW REFRESHES. */
class RefreshHistoryTest extends MvTestSupport {
  private static final String TOTALS = "SELECT region, sum(amount) AS total FROM orders GROUP BY region";

  @Override
  protected String prefix() {
    return "history";
  }

  @BeforeEach
  void orders() {
    sql("CREATE TABLE orders (id INT, region STRING, amount INT) USING iceberg");
    sql("INSERT INTO orders VALUES (1, 'Tokyo', 10), (2, 'Osaka', 20)");
  }

  private List<Row> history(String mv) {
    return sql("SHOW REFRESHES FOR " + mv);
  }

  @Test
  void createAndRefreshStatementsAreRecordedAsManualRunsOfTheirOwn() {
    Row created = sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS).get(0);
    sql("INSERT INTO orders VALUES (3, 'Nagoya', 5)");
    Row refreshed = sql("REFRESH MATERIALIZED VIEW totals").get(0);

    List<Row> rows = history("totals");

    assertThat(rows).hasSize(2);
    Row last = rows.get(0);
    Row first = rows.get(1);
    assertThat(first.<String>getAs("refresh_type")).isEqualTo("FULL");
    assertThat(first.<String>getAs("reason")).isEqualTo("first refresh");
    assertThat(first.<Long>getAs("storage_snapshot_id")).isEqualTo(created.getLong(8));
    assertThat(last.<String>getAs("refresh_type")).isEqualTo("INCREMENTAL");
    assertThat(last.<Long>getAs("storage_snapshot_id")).isEqualTo(refreshed.getLong(8)).isEqualTo(storageSnapshot("totals").snapshotId());
    for (Row row : rows) {
      assertThat(row.<String>getAs("materialized_view")).isEqualTo("lake." + ns + ".totals");
      assertThat(row.<String>getAs("status")).isEqualTo("SUCCEEDED");
      assertThat(row.<String>getAs("trigger")).isEqualTo("MANUAL");
      assertThat(row.<Integer>getAs("attempts")).isEqualTo(1);
      assertThat(row.<String>getAs("error")).isNull();
      Timestamp started = row.getAs("started_at");
      Timestamp ended = row.getAs("ended_at");
      assertThat(ended.getTime() - started.getTime()).isEqualTo(row.<Long>getAs("duration_ms")).isNotNegative();
    }
    assertThat(last.<String>getAs("run_id")).isNotEqualTo(first.<String>getAs("run_id"));
    assertThat(last.<String>getAs("refresh_id")).isNotEqualTo(first.<String>getAs("refresh_id"));
    assertThat(last.<Long>getAs("rows_written")).isEqualTo(refreshed.getLong(4));
    assertThat(last.<Long>getAs("rows_removed")).isEqualTo(refreshed.getLong(5));
    assertThat(last.<Long>getAs("rows_read")).isEqualTo(refreshed.getLong(3));
    // The sources as JSON source states: the refresh moved orders from the first to the current snapshot.
    long firstOrders = table("orders").currentSnapshot().parentId();
    long currentOrders = currentSnapshotId("orders");
    assertThat(first.<String>getAs("sources_before")).isEqualTo("[]");
    assertThat(last.<String>getAs("sources_before")).contains("\"name\":\"orders\"").contains("\"snapshot-id\":" + firstOrders);
    assertThat(last.<String>getAs("sources_after")).contains("\"snapshot-id\":" + currentOrders);

    Table historyTable = iceberg().loadTable(RefreshHistory.IDENTIFIER);
    assertThat(((BaseTable) historyTable).operations().current().formatVersion()).isEqualTo(2);
  }

  @Test
  void failedRefreshIsRecordedAndStillFailsTheStatement() {
    sql("CREATE MATERIALIZED VIEW checked AS SELECT id, CASE WHEN amount < 0 THEN raise_error('negative amount') ELSE amount END AS amount FROM orders");
    sql("INSERT INTO orders VALUES (3, 'Nagoya', -5)");
    long storageBefore = storageSnapshot("checked").snapshotId();

    String error = errorOf("REFRESH MATERIALIZED VIEW checked");

    assertThat(error).contains("lake." + ns + ".checked").contains("negative amount");
    assertThat(storageSnapshot("checked").snapshotId()).isEqualTo(storageBefore);
    Row failed = sql("SHOW REFRESHES FOR checked LIMIT 1").get(0);
    assertThat(failed.<String>getAs("status")).isEqualTo("FAILED");
    assertThat(failed.<String>getAs("error")).isEqualTo(error);
    assertThat(failed.<String>getAs("refresh_type")).isNull();
    assertThat(failed.<Long>getAs("storage_snapshot_id")).isNull();
    // An error raised by the data does not go away on its own: no retry.
    assertThat(failed.<Integer>getAs("attempts")).isEqualTo(1);
  }

  @Test
  void triggerAndRunIdComeFromTheThreadsLocalProperties() {
    sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS);
    sql("INSERT INTO orders VALUES (3, 'Nagoya', 5)");
    String runId = UUID.randomUUID().toString();
    var context = spark.sparkContext();
    context.setLocalProperty(RefreshRun.TRIGGER_PROPERTY, "schedule");
    context.setLocalProperty(RefreshRun.RUN_ID_PROPERTY, runId);
    try {
      sql("REFRESH MATERIALIZED VIEW totals");
    } finally {
      context.setLocalProperty(RefreshRun.TRIGGER_PROPERTY, null);
      context.setLocalProperty(RefreshRun.RUN_ID_PROPERTY, null);
    }

    Row row = history("totals").get(0);
    assertThat(row.<String>getAs("trigger")).isEqualTo("SCHEDULE");
    assertThat(row.<String>getAs("run_id")).isEqualTo(runId);
  }

  @Test
  void showRefreshesIsNewestFirstPerViewAndLimited() {
    sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS);
    sql("CREATE MATERIALIZED VIEW big AS SELECT id FROM orders WHERE amount > 15");
    sql("REFRESH MATERIALIZED VIEW totals FULL");
    Row latest = sql("REFRESH MATERIALIZED VIEW totals FULL").get(0);

    List<Row> all = history("totals");
    List<Row> two = sql("SHOW REFRESHES FOR lake." + ns + ".totals LIMIT 2");
    List<Row> everything = sql("SHOW REFRESHES");

    assertThat(all).hasSize(3);
    assertThat(two).hasSize(2).containsExactlyElementsOf(all.subList(0, 2));
    assertThat(two.get(0).<Long>getAs("storage_snapshot_id")).isEqualTo(latest.getLong(8));
    for (int i = 1; i < all.size(); i++) {
      assertThat(all.get(i - 1).<Timestamp>getAs("started_at")).isAfterOrEqualTo(all.get(i).<Timestamp>getAs("started_at"));
    }
    assertThat(everything.stream().map(r -> r.<String>getAs("materialized_view")).filter(n -> n.startsWith("lake." + ns + ".")))
        .containsOnly("lake." + ns + ".totals", "lake." + ns + ".big")
        .hasSize(4);
    for (int i = 1; i < everything.size(); i++) {
      assertThat(everything.get(i - 1).<Timestamp>getAs("started_at"))
          .isAfterOrEqualTo(everything.get(i).<Timestamp>getAs("started_at"));
    }
    assertThat(sql("SHOW REFRESHES FOR totals LIMIT 0")).isEmpty();
  }

  @Test
  void aRefreshThatKeepsFailingOnIoIsRetriedAndRecordsItsAttempts() throws Exception {
    sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS);
    for (DataFile file : table("orders").currentSnapshot().addedDataFiles(table("orders").io())) {
      Files.delete(Path.of(URI.create(file.location())));
    }
    spark.conf().set(RetryPolicy.MAX_ATTEMPTS, "3");
    spark.conf().set(RetryPolicy.BACKOFF_MS, "10");
    String error;
    try {
      error = errorOf("REFRESH MATERIALIZED VIEW totals FULL");
    } finally {
      spark.conf().unset(RetryPolicy.MAX_ATTEMPTS);
      spark.conf().unset(RetryPolicy.BACKOFF_MS);
    }

    assertThat(error).contains("lake." + ns + ".totals").contains("gave up after 3 attempts");
    Row failed = history("totals").get(0);
    assertThat(failed.<String>getAs("status")).isEqualTo("FAILED");
    assertThat(failed.<Integer>getAs("attempts")).isEqualTo(3);
  }

  @Test
  void aRefreshThatFailsOnIoOnceSucceedsOnALaterAttempt() throws Exception {
    sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS);
    List<Path[]> moved = new ArrayList<>();
    for (DataFile file : table("orders").currentSnapshot().addedDataFiles(table("orders").io())) {
      Path path = Path.of(URI.create(file.location()));
      Path aside = path.resolveSibling(path.getFileName() + ".aside");
      Files.move(path, aside);
      moved.add(new Path[] {aside, path});
    }
    // The first failed Spark job puts the files back, so a later attempt can succeed.
    SparkListener restoreOnFailure =
        new SparkListener() {
          @Override
          public void onJobEnd(SparkListenerJobEnd end) {
            if (end.jobResult() instanceof JobFailed) {
              restore(moved);
            }
          }
        };
    spark.sparkContext().addSparkListener(restoreOnFailure);
    spark.conf().set(RetryPolicy.MAX_ATTEMPTS, "5");
    spark.conf().set(RetryPolicy.BACKOFF_MS, "1000");
    Row refreshed;
    try {
      refreshed = sql("REFRESH MATERIALIZED VIEW totals FULL").get(0);
    } finally {
      spark.sparkContext().removeSparkListener(restoreOnFailure);
      spark.conf().unset(RetryPolicy.MAX_ATTEMPTS);
      spark.conf().unset(RetryPolicy.BACKOFF_MS);
      restore(moved);
    }

    assertThat(refreshed.<String>getAs("status")).isEqualTo("SUCCEEDED");
    assertThat(refreshed.<Integer>getAs("attempts")).isGreaterThan(1);
    Row recorded = history("totals").get(0);
    assertThat(recorded.<String>getAs("status")).isEqualTo("SUCCEEDED");
    assertThat(recorded.<Integer>getAs("attempts")).isEqualTo(refreshed.<Integer>getAs("attempts"));
    assertSameRows("SELECT * FROM totals", TOTALS, 2);
  }

  private static synchronized void restore(List<Path[]> moved) {
    for (Path[] move : moved) {
      try {
        if (Files.exists(move[0])) {
          Files.move(move[0], move[1]);
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  @Test
  void aHistoryThatCannotBeWrittenLeavesTheRefreshCommittedWithAWarning() {
    sql("CREATE MATERIALIZED VIEW totals AS " + TOTALS);
    sql("INSERT INTO orders VALUES (3, 'Nagoya', 5)");
    TableIdentifier history = RefreshHistory.IDENTIFIER;
    iceberg().dropTable(history, true);
    iceberg().createTable(history, new Schema(Types.NestedField.optional(1, "note", Types.StringType.get())));
    Row refreshed;
    try {
      refreshed = sql("REFRESH MATERIALIZED VIEW totals").get(0);
    } finally {
      iceberg().dropTable(history, true);
    }

    assertThat(refreshed.<String>getAs("status")).isEqualTo("SUCCEEDED");
    assertThat(refreshed.<String>getAs("warnings"))
        .contains("committed but not recorded in the refresh history")
        .contains("not a refresh history");
    assertThat(refreshed.getLong(8)).isEqualTo(storageSnapshot("totals").snapshotId());
    assertSameRows("SELECT * FROM totals", TOTALS, 3);
  }
}
