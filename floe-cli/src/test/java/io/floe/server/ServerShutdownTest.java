package io.floe.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.FloeException;
import io.floe.mv.RefreshState;
import io.floe.spark.SharedSpark;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.sql.QualifiedName;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code floe server} in a child JVM, stopped with SIGTERM while a refresh runs. */
class ServerShutdownTest {
  private static final Duration PATIENCE = Duration.ofMinutes(4);

  @TempDir Path logs;

  @Test
  void sigtermDuringARefreshLetsItFinishThenReleasesTheLock() throws Exception {
    SparkSession spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("stop");
    String bronze = "lake." + ns + ".bronze";
    String agg = "lake." + ns + ".agg";
    spark.sql("CREATE TABLE " + bronze + " (k INT, v BIGINT)");
    spark.range(0, 200_000).selectExpr("CAST(id % 997 AS INT) AS k", "id AS v").writeTo(bronze).append();
    spark.sql("CREATE MATERIALIZED VIEW " + agg + " REFRESH POLICY FULL AS "
        + "SELECT k, SUM(v) AS total, COUNT(*) AS n FROM " + bronze + " GROUP BY k");
    spark.range(200_000, 400_000).selectExpr("CAST(id % 997 AS INT) AS k", "id AS v").writeTo(bronze).append();

    Path warehouse = SharedSpark.warehouse();
    ServerSettings settings = ServerSettings.of(warehouse, "lake", "127.0.0.1", 0, Map.of());
    Path out = logs.resolve("server.out");
    Path err = logs.resolve("server.err");
    Process child = startServer(warehouse, 180, out, err);
    try {
      ServerInfo info = WarehouseLock.recordedHolder(warehouse).orElseThrow();
      assertThat(info.pid()).isEqualTo(child.pid());
      assertThatThrownBy(() -> FloeServer.lockWarehouse(settings))
          .isInstanceOf(FloeException.class)
          .hasMessageContaining("already served by pid " + child.pid());

      CompletableFuture<Http.Response> refresh = CompletableFuture.supplyAsync(
          () -> Http.post(info.baseUri(), "/api/materialized-views/" + agg + "/refresh", ""));
      awaitText(err, "Refreshing " + agg, child);
      Http.Response answer = stopAndAwait(child, err, refresh).answer();
      assertThat(answer.status()).as(answer.body()).isEqualTo(200);
      assertThat(Files.readString(err, StandardCharsets.UTF_8)).contains("floe server stopped");
    } finally {
      child.destroyForcibly();
    }

    try (WarehouseLock released = FloeServer.lockWarehouse(settings)) {
      assertThat(released.file()).exists();
    }
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.load(QualifiedName.of("lake", ns, "agg")).orElseThrow();
    RefreshState state = mv.refreshState(mv.storageTable()).orElseThrow();
    long pinned = state.sourceStates().get(0).snapshotId().orElseThrow();
    long current = catalog.icebergCatalog("lake").orElseThrow()
        .loadTable(TableIdentifier.of(ns, "bronze")).currentSnapshot().snapshotId();
    assertThat(pinned).as("the refresh in flight committed").isEqualTo(current);
    assertThat(rows(spark, "SELECT * FROM " + agg)).isEqualTo(rows(spark,
        "SELECT k, SUM(v) AS total, COUNT(*) AS n FROM " + bronze + " VERSION AS OF " + pinned + " GROUP BY k"));
  }

  /**
   * A pipeline run sent over HTTP runs on the refresh thread, so a stop lets it finish too and its
   * request is answered, before the server stops.
   */
  @Test
  void sigtermDuringAPipelineRunLetsItFinishAndAnswersTheRequest() throws Exception {
    SparkSession spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("stoprun");
    String bronze = "lake." + ns + ".bronze";
    spark.sql("CREATE TABLE " + bronze + " (k INT, v BIGINT)");
    spark.range(0, 2_000_000).selectExpr("CAST(id % 997 AS INT) AS k", "id AS v").writeTo(bronze).append();
    Path project = logs.resolve("project");
    Files.createDirectories(project);
    Files.writeString(project.resolve("floe.yml"), "name: stoprun\ncatalog: lake\nnamespace: " + ns + "\n");
    Files.writeString(project.resolve("gold.sql"), "CREATE MATERIALIZED VIEW by_k AS"
        + " SELECT k, SUM(v) AS total, COUNT(DISTINCT v) AS n FROM bronze GROUP BY k;\n");

    Path warehouse = SharedSpark.warehouse();
    Path out = logs.resolve("server.out");
    Path err = logs.resolve("server.err");
    Process child = startServer(warehouse, 180, out, err);
    try {
      ServerInfo info = WarehouseLock.recordedHolder(warehouse).orElseThrow();
      CompletableFuture<Http.Response> run = CompletableFuture.supplyAsync(
          () -> Http.post(info.baseUri(), "/api/pipelines/run", "{\"path\": \"" + project + "\"}"));
      awaitText(err, "Running pipeline " + project, child);
      Stopped stopped = stopAndAwait(child, err, run);
      Http.Response answer = stopped.answer();
      String serverLog = stopped.serverLog();
      assertThat(answer.status()).as(answer.body()).isEqualTo(200);
      assertThat(answer.body()).contains("\"succeeded\":true");
      // The stop began while the run was under way, and waited for it.
      int stopping = serverLog.indexOf("Stopping floe server");
      int finished = serverLog.indexOf("Pipeline " + project + " over HTTP finished");
      assertThat(stopping).as(serverLog).isNotNegative();
      assertThat(finished).as(serverLog).isGreaterThan(stopping);
      assertThat(serverLog).contains("floe server stopped");
    } finally {
      child.destroyForcibly();
    }
    assertThat(rows(spark, "SELECT * FROM lake." + ns + ".by_k")).isEqualTo(rows(spark,
        "SELECT k, SUM(v) AS total, COUNT(DISTINCT v) AS n FROM " + bronze + " GROUP BY k"));
  }

  /**
   * A SQL statement that outlasts the stop's patience is cancelled, and its request is answered
   * that the server stopped; the stop itself is quiet and complete.
   */
  @Test
  void sigtermDuringALongStatementCancelsItAfterThePatienceAndAnswersTheRequest() throws Exception {
    Path warehouse = SharedSpark.warehouse();
    Path out = logs.resolve("server.out");
    Path err = logs.resolve("server.err");
    Process child = startServer(warehouse, 2, out, err);
    try {
      ServerInfo info = WarehouseLock.recordedHolder(warehouse).orElseThrow();
      // Hours of work on two cores: only the cancellation ends it.
      CompletableFuture<Http.Response> statement = CompletableFuture.supplyAsync(() -> Http.post(info.baseUri(),
          "/api/sql", "{\"sql\": \"SELECT sum(id % 7) AS s FROM range(0, 800000000000)\"}"));
      awaitText(err, "Statement over HTTP: SELECT sum(id % 7)", child);
      Thread.sleep(2_000); // under way
      Stopped stopped = stopAndAwait(child, err, statement);
      Http.Response answer = stopped.answer();
      String serverLog = stopped.serverLog();
      assertThat(answer.status()).as(answer.body()).isEqualTo(503);
      assertThat(answer.body()).contains("Statement cancelled: the floe server stopped before it finished");
      assertThat(child.exitValue()).isZero();
      assertThat(serverLog).contains("cancelling them").contains("floe server stopped").doesNotContain("Exception in thread");
    } finally {
      child.destroyForcibly();
    }
  }

  /** The answer to the request in flight at the stop, and the server's log once it exited. */
  private record Stopped(Http.Response answer, String serverLog) {}

  /** Sends SIGTERM, waits for the server to exit, then for the answer to {@code request}. */
  private static Stopped stopAndAwait(Process child, Path err, CompletableFuture<Http.Response> request) throws Exception {
    child.destroy(); // SIGTERM
    assertThat(child.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as("server exited").isTrue();
    String serverLog = Files.readString(err, StandardCharsets.UTF_8);
    try {
      return new Stopped(request.get(1, TimeUnit.MINUTES), serverLog);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError("The request in flight failed; server log:\n" + serverLog, e);
    }
  }

  /** {@code floe server} on {@code warehouse} in a child JVM, once it listens; scheduled polls are rare. */
  private static Process startServer(Path warehouse, int shutdownTimeoutSeconds, Path out, Path err) throws Exception {
    Process child = ChildJvm.start(ChildJvm.floe(List.of("-Xmx1g"), "server", "--warehouse", warehouse.toString(),
        "--port", "0", "--conf", ServerSettings.SHUTDOWN_TIMEOUT_KEY + "=" + shutdownTimeoutSeconds,
        "--conf", ServerSettings.POLL_INTERVAL_KEY + "=60"), out, err);
    try {
      awaitText(out, "floe server on", child);
    } catch (Exception | AssertionError e) {
      child.destroyForcibly();
      throw e;
    }
    return child;
  }

  private static List<String> rows(SparkSession spark, String sql) {
    List<String> rows = new ArrayList<>();
    for (Row row : spark.sql(sql).collectAsList()) {
      rows.add(row.toString());
    }
    rows.sort(null);
    return rows;
  }

  private static void awaitText(Path file, String text, Process child) throws Exception {
    Instant deadline = Instant.now().plus(PATIENCE);
    while (Instant.now().isBefore(deadline)) {
      if (Files.exists(file) && Files.readString(file, StandardCharsets.UTF_8).contains(text)) {
        return;
      }
      if (!child.isAlive()) {
        throw new AssertionError("floe server exited with " + child.exitValue() + " before printing '" + text
            + "':\n" + Files.readString(file.resolveSibling("server.err"), StandardCharsets.UTF_8));
      }
      Thread.sleep(100);
    }
    throw new AssertionError("floe server did not print '" + text + "' within " + PATIENCE);
  }
}
