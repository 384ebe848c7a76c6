package io.floe.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.FloeException;
import io.floe.spark.SharedSpark;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A server in this JVM on the shared test lakehouse, polling every second, reached over real HTTP. */
class FloeServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration PATIENCE = Duration.ofMinutes(3);

  private static SparkSession spark;
  private static String ns;
  private static ServerSettings settings;
  private static FloeServer server;
  private static URI base;

  @BeforeAll
  static void startServer() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace("srv");
    settings = ServerSettings.of(SharedSpark.warehouse(), "lake", "127.0.0.1", 0,
        Map.of(ServerSettings.POLL_INTERVAL_KEY, "1"));
    server = FloeServer.start(spark, settings, FloeServer.lockWarehouse(settings), Clock.systemUTC());
    base = server.info().baseUri();
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  private static String q(String name) {
    return "lake." + ns + "." + name;
  }

  private static JsonNode json(Http.Response response) throws Exception {
    return JSON.readTree(response.body());
  }

  private static List<String> rows(String sql) {
    List<String> rows = new ArrayList<>();
    for (Row row : spark.sql(sql).collectAsList()) {
      rows.add(row.toString());
    }
    rows.sort(null);
    return rows;
  }

  private static <T> T waitFor(Supplier<T> value, java.util.function.Predicate<T> done) throws InterruptedException {
    Instant deadline = Instant.now().plus(PATIENCE);
    T last = value.get();
    while (!done.test(last) && Instant.now().isBefore(deadline)) {
      Thread.sleep(250);
      last = value.get();
    }
    return last;
  }

  private static JsonNode view(String name) throws Exception {
    for (JsonNode view : json(Http.get(base, "/api/materialized-views")).path("materialized-views")) {
      if (view.path("name").asText().equals(name)) {
        return view;
      }
    }
    throw new AssertionError(name + " is not listed");
  }

  @Test
  void bronzeCommitReachesGoldTwoLevelsDownWithoutAnyOtherAction() throws Exception {
    spark.sql("CREATE TABLE " + q("bronze") + " (id INT, city STRING, amount INT)");
    spark.sql("INSERT INTO " + q("bronze") + " VALUES (1, 'Osaka', 5), (2, 'Tokyo', 3), (3, 'Tokyo', -1)");
    spark.sql("CREATE MATERIALIZED VIEW " + q("silver") + " SCHEDULE REFRESH ON CHANGE AS "
        + "SELECT id, city, amount FROM " + q("bronze") + " WHERE amount > 0");
    spark.sql("CREATE MATERIALIZED VIEW " + q("gold") + " SCHEDULE REFRESH ON CHANGE AS "
        + "SELECT city, SUM(amount) AS total, COUNT(*) AS trips FROM " + q("silver") + " GROUP BY city");

    spark.sql("INSERT INTO " + q("bronze") + " VALUES (4, 'Osaka', 7), (5, 'Kyoto', 2)");

    String expected = "SELECT city, SUM(amount) AS total, COUNT(*) AS trips FROM " + q("bronze")
        + " WHERE amount > 0 GROUP BY city";
    List<String> gold = waitFor(() -> rows("SELECT * FROM " + q("gold")), r -> r.equals(rows(expected)));
    assertThat(gold).isEqualTo(rows(expected)).hasSize(3);
    JsonNode listed = waitFor(() -> {
      try {
        return view(q("gold"));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, v -> v.path("fresh").asBoolean());
    assertThat(listed.path("freshness").asText()).isEqualTo("FRESH");
    assertThat(server.metrics().scrape())
        .containsPattern("floe_refreshes_total\\{mv=\"" + q("gold").replace(".", "\\.")
            + "\",status=\"success\",trigger=\"change\",type=\"[A-Z_]+\"} [1-9]");
    // One round, one run: Gold refreshed from what Silver committed in it.
    org.apache.spark.sql.Row silverRefresh = spark.sql("SHOW REFRESHES FOR " + q("silver") + " LIMIT 1").first();
    org.apache.spark.sql.Row goldRefresh = spark.sql("SHOW REFRESHES FOR " + q("gold") + " LIMIT 1").first();
    assertThat(goldRefresh.<String>getAs("trigger")).isEqualTo("CHANGE");
    assertThat(goldRefresh.<String>getAs("run_id")).isEqualTo(silverRefresh.<String>getAs("run_id"));
  }

  @Test
  void aCompactedSourceIsRecordedByAnOnChangeRefreshThatChangesNoRow() throws Exception {
    spark.sql("CREATE TABLE " + q("compacted") + " (id INT, amount INT)");
    spark.sql("INSERT INTO " + q("compacted") + " VALUES (1, 5)");
    spark.sql("INSERT INTO " + q("compacted") + " VALUES (2, 3)");
    spark.sql("CREATE MATERIALIZED VIEW " + q("compacted_mv") + " AS "
        + "SELECT id, amount FROM " + q("compacted") + " WHERE amount > 0");
    // Scheduled only once its first refresh has committed: a view created with ON CHANGE can be
    // found due by the running server while CREATE's own first refresh is still under way, and the
    // count below would then depend on which of the two finished first.
    spark.sql("ALTER MATERIALIZED VIEW " + q("compacted_mv") + " ADD SCHEDULE REFRESH ON CHANGE");
    long refreshes = spark.sql("SHOW REFRESHES FOR " + q("compacted_mv")).count();

    spark.sql("CALL lake.system.rewrite_data_files(table => '" + q("compacted") + "', options => map('rewrite-all', 'true'))");

    long compaction = spark.sql("SELECT snapshot_id FROM " + q("compacted") + ".snapshots WHERE operation = 'replace'")
        .first().getLong(0);
    waitFor(() -> spark.sql("SHOW REFRESHES FOR " + q("compacted_mv")).count(), n -> n > refreshes);
    JsonNode recorded = view(q("compacted_mv"));
    assertThat(recorded.path("fresh").asBoolean()).isTrue();
    assertThat(recorded.path("unrecorded-commits").isArray()).isTrue();
    assertThat(recorded.path("unrecorded-commits")).isEmpty();
    assertThat(recorded.path("freshness").asText()).isEqualTo("FRESH");
    org.apache.spark.sql.Row last = spark.sql("SHOW REFRESHES FOR " + q("compacted_mv") + " LIMIT 1").first();
    assertThat(spark.sql("SHOW REFRESHES FOR " + q("compacted_mv")).count()).isEqualTo(refreshes + 1);
    assertThat(last.<String>getAs("trigger")).isEqualTo("CHANGE");
    assertThat(last.<Long>getAs("rows_written")).isZero();
    assertThat(last.<String>getAs("sources_after")).contains(String.valueOf(compaction));
  }

  @Test
  void apiListsViewsWithFreshnessScheduleAndLastRefreshAndRefreshesOnRequest() throws Exception {
    spark.sql("CREATE TABLE " + q("trips") + " (city STRING, fare INT)");
    spark.sql("INSERT INTO " + q("trips") + " VALUES ('Osaka', 10)");
    spark.sql("CREATE MATERIALIZED VIEW " + q("daily") + " SCHEDULE REFRESH EVERY 1 DAY AS "
        + "SELECT city, SUM(fare) AS fares FROM " + q("trips") + " GROUP BY city");
    spark.sql("INSERT INTO " + q("trips") + " VALUES ('Osaka', 4)");

    JsonNode daily = view(q("daily"));
    assertThat(daily.path("fresh").asBoolean()).isFalse();
    assertThat(daily.path("stale-reasons").get(0).asText()).startsWith("source " + ns + ".trips");
    assertThat(daily.path("schedule").asText()).isEqualTo("EVERY 1 DAY");
    assertThat(daily.path("last-refresh-type").asText()).isEqualTo("FULL");
    Instant last = Instant.parse(daily.path("last-refresh-time").asText());
    // A day after its last refresh: the CREATE's, or a scheduled one that found nothing to change
    // (the server may have seen the view before the CREATE's refresh committed).
    assertThat(Instant.parse(daily.path("next-refresh").asText()))
        .isBetween(last.plus(Duration.ofDays(1)), Instant.now().plus(Duration.ofDays(1)));

    JsonNode graph = json(Http.get(base, "/api/graph"));
    assertThat(graph.path("edges").toString())
        .contains("{\"from\":\"" + q("trips") + "\",\"to\":\"" + q("daily") + "\"}");
    assertThat(graph.path("nodes").toString())
        .contains("{\"name\":\"" + q("trips") + "\",\"kind\":\"table\"}")
        .contains("{\"name\":\"" + q("daily") + "\",\"kind\":\"materialized-view\",\"fresh\":false}");

    Http.Response refreshed = Http.post(base, "/api/materialized-views/" + q("daily") + "/refresh?full=true", "");
    assertThat(refreshed.status()).isEqualTo(200);
    JsonNode row = json(refreshed).path("refreshed").get(0);
    assertThat(row.path("materialized_view").asText()).isEqualTo(q("daily"));
    assertThat(row.path("refresh_type").asText()).isEqualTo("FULL");
    assertThat(view(q("daily")).path("fresh").asBoolean()).isTrue();
    assertThat(rows("SELECT * FROM " + q("daily"))).containsExactly("[Osaka,14]");
    assertThat(server.metrics().scrape())
        .contains("floe_refreshes_total{mv=\"" + q("daily") + "\",status=\"success\",trigger=\"manual\",type=\"FULL\"} 1.0");
  }

  @Test
  void refreshOfAMissingViewAnswers404WithOneLine() throws Exception {
    Http.Response response = Http.post(base, "/api/materialized-views/" + q("nope") + "/refresh", "");
    assertThat(response.status()).isEqualTo(404);
    assertThat(json(response).path("error").asText()).contains(q("nope")).contains("does not exist").doesNotContain("\n");
  }

  /** A table with one row and an MV over it, then a second row: the MV is one appended row behind. */
  private static void viewOneRowBehind(String source, String mv) {
    spark.sql("CREATE TABLE " + q(source) + " (v INT)");
    spark.sql("INSERT INTO " + q(source) + " VALUES (1)");
    spark.sql("CREATE MATERIALIZED VIEW " + q(mv) + " AS SELECT v FROM " + q(source));
    spark.sql("INSERT INTO " + q(source) + " VALUES (2)");
  }

  private static void assertRefused(Http.Response response, String... fragments) throws Exception {
    assertThat(response.status()).as(response.body()).isEqualTo(400);
    String error = json(response).path("error").asText();
    assertThat(error).doesNotContain("\n");
    for (String fragment : fragments) {
      assertThat(error).contains(fragment);
    }
  }

  @Test
  void refreshRefusesOptionsItDoesNotKnowAndRunsNothing() throws Exception {
    viewOneRowBehind("o_src", "o_mv");
    long refreshes = spark.sql("SHOW REFRESHES FOR " + q("o_mv")).count();
    String path = "/api/materialized-views/" + q("o_mv") + "/refresh";

    assertRefused(Http.post(base, path + "?full=maybe", ""), "full must be true or false but is 'maybe'");
    assertRefused(Http.post(base, path + "?full=1", ""), "full must be true or false but is '1'");
    assertRefused(Http.post(base, path + "?cascade=yes", ""), "cascade must be true or false but is 'yes'");
    assertRefused(Http.post(base, path + "?fulll=true", ""), "Unknown query parameter 'fulll'", "full and cascade");
    assertRefused(Http.post(base, path + "?full=true&full=false", ""), "full is given 2 times");
    assertRefused(Http.post(base, path, "{\"full\": \"yes\"}"),
        "full must be true or false (a JSON boolean) but is \"yes\"");
    assertRefused(Http.post(base, path, "{\"full\": 1}"), "full must be true or false (a JSON boolean) but is 1");
    assertRefused(Http.post(base, path, "{\"fulll\": true}"), "Unknown field 'fulll'", "full, cascade");
    assertRefused(Http.post(base, path, "[1,2]"), "must be a JSON object such as {\"full\": true} but is an array");
    assertRefused(Http.post(base, path, "true"), "must be a JSON object", "but is true");
    assertRefused(Http.post(base, path + "?full=true", "{\"full\": false}"), "full is given both");
    assertRefused(Http.post(base, path, "{\"full\": tru"), "not JSON");
    assertThat(spark.sql("SHOW REFRESHES FOR " + q("o_mv")).count()).isEqualTo(refreshes);

    Http.Response incremental = Http.post(base, path + "?full=FALSE&cascade=False", "");
    assertThat(incremental.status()).as(incremental.body()).isEqualTo(200);
    assertThat(json(incremental).path("refreshed").get(0).path("refresh_type").asText()).isEqualTo("INCREMENTAL");
    Http.Response fullByQuery = Http.post(base, path + "?full=True", "");
    assertThat(fullByQuery.status()).as(fullByQuery.body()).isEqualTo(200);
    assertThat(json(fullByQuery).path("refreshed").get(0).path("refresh_type").asText()).isEqualTo("FULL");
    Http.Response fullByBody = Http.post(base, path, "{\"full\": true, \"cascade\": false}");
    assertThat(fullByBody.status()).as(fullByBody.body()).isEqualTo(200);
    assertThat(json(fullByBody).path("refreshed").get(0).path("refresh_type").asText()).isEqualTo("FULL");
    assertThat(spark.sql("SHOW REFRESHES FOR " + q("o_mv")).count()).isEqualTo(refreshes + 3);
  }

  /** floe sql sends its working directory: a relative read_files folder is the client's, not the server's. */
  @Test
  void aRelativeFolderInSqlIsTheClientsDirectory(@org.junit.jupiter.api.io.TempDir java.nio.file.Path client)
      throws Exception {
    java.nio.file.Files.createDirectories(client.resolve("data"));
    java.nio.file.Files.writeString(client.resolve("data/a.json"), "{\"x\": 1}\n{\"x\": 2}\n");
    String table = q("from_client");
    Map<String, String> body = Map.of(
        "sql", "CREATE STREAMING TABLE " + table + " AS SELECT * FROM STREAM read_files('data', format => 'json')",
        "directory", client.toString());
    Http.Response created = Http.post(base, "/api/sql", JSON.writeValueAsString(body));
    assertThat(created.status()).as(created.body()).isEqualTo(200);
    assertThat(spark.sql("SELECT x FROM " + table).count()).isEqualTo(2);
    // Recorded absolute, so a refresh from anywhere reads the same folder.
    assertThat(spark.sql("SHOW TBLPROPERTIES " + table).collectAsList().toString())
        .contains(client.resolve("data").toString());
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1\", \"directory\": \"data\"}"),
        "directory must be an absolute path but is 'data'");
  }

  @Test
  void sqlRefusesFieldsThatAreUnknownOrNotStrings() throws Exception {
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": 42}"), "sql must be a JSON string but is the number 42");
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": [\"SELECT 1\"]}"), "sql must be a JSON string but is an array");
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1\", \"session\": 7}"),
        "session must be a JSON string but is the number 7");
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1\", \"format\": true}"),
        "format must be a JSON string but is true");
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1\", \"format\": \"csv\"}"),
        "format must be rows or json but is 'csv'");
    assertRefused(Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1\", \"limit\": 5}"),
        "Unknown field 'limit'", "sql, session, format");
    assertRefused(Http.post(base, "/api/sql", "[\"SELECT 1\"]"), "must be a JSON object such as {\"sql\": \"...\"}");
    assertRefused(Http.post(base, "/api/sql", ""), "must be a JSON object");

    Http.Response asJson = Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1 AS one\", \"format\": \"json\"}");
    assertThat(asJson.status()).as(asJson.body()).isEqualTo(200);
    assertThat(json(asJson).path("json").toString()).isEqualTo("[\"{\\\"one\\\":1}\"]");
  }

  @Test
  void refreshOfSomethingThatIsNoViewCountsNoRefreshAndARealFailureCountsUnderTheQualifiedName() throws Exception {
    spark.sql("CREATE TABLE " + q("plain") + " (v INT)");
    String unqualified = ns + ".plain";
    Http.Response table = Http.post(base, "/api/materialized-views/" + unqualified + "/refresh", "");
    assertThat(table.status()).as(table.body()).isEqualTo(404);
    assertThat(json(table).path("error").asText()).contains(q("plain")).contains("not a materialized view");
    Http.Response missing = Http.post(base, "/api/materialized-views/" + q("nosuch") + "/refresh", "");
    assertThat(missing.status()).as(missing.body()).isEqualTo(404);
    Http.Response otherCatalog = Http.post(base, "/api/materialized-views/nocatalog." + ns + ".nosuch/refresh", "");
    assertThat(otherCatalog.status()).as(otherCatalog.body()).isEqualTo(404);
    assertThat(server.metrics().scrape()).doesNotContain("plain\"").doesNotContain("nosuch\"");
    Http.Response notAName = Http.post(base, "/api/materialized-views/" + ns + ".a%20b/refresh", "");
    assertThat(notAName.status()).as(notAName.body()).isEqualTo(400);
    assertThat(json(notAName).path("error").asText()).contains("Invalid materialized view name");
    assertThat(server.metrics().scrape()).doesNotContain("a b\"");

    // A view whose refresh fails is counted, by its qualified name however it was asked for.
    spark.sql("CREATE TABLE " + q("f_src") + " (v INT)");
    spark.sql("INSERT INTO " + q("f_src") + " VALUES (1)");
    spark.sql("CREATE MATERIALIZED VIEW " + q("f_mv") + " AS "
        + "SELECT CASE WHEN v < 0 THEN raise_error('negative v') ELSE v END AS v FROM " + q("f_src"));
    spark.sql("INSERT INTO " + q("f_src") + " VALUES (-1)");
    Http.Response failed = Http.post(base, "/api/materialized-views/" + ns + ".f_mv/refresh", "");
    assertThat(failed.status()).as(failed.body()).isEqualTo(500);
    assertThat(json(failed).path("error").asText()).contains(q("f_mv")).contains("negative v");
    assertThat(server.metrics().scrape())
        .contains("floe_refresh_failures_total{mv=\"" + q("f_mv") + "\"} 1.0")
        .contains("floe_refreshes_total{mv=\"" + q("f_mv") + "\",status=\"failure\",trigger=\"manual\",type=\"none\"} 1.0")
        .doesNotContain("mv=\"" + ns + ".f_mv\"");
  }

  @Test
  void sqlAnswersColumnsAndRowsAsTextAndErrorsAs400() throws Exception {
    Http.Response ok = Http.post(base, "/api/sql", "{\"sql\": \"SELECT 1 AS one, CAST(NULL AS STRING) AS nothing\"}");
    assertThat(ok.status()).isEqualTo(200);
    assertThat(json(ok).path("columns").toString()).isEqualTo("[\"one\",\"nothing\"]");
    assertThat(json(ok).path("rows").toString()).isEqualTo("[[\"1\",null]]");

    Http.Response wrong = Http.post(base, "/api/sql", "{\"sql\": \"SELECT * FROM " + q("missing_table") + "\"}");
    assertThat(wrong.status()).isEqualTo(400);
    assertThat(json(wrong).path("error").asText()).contains("missing_table").doesNotContain("\n");

    Http.Response syntax = Http.post(base, "/api/sql", "{\"sql\": \"SELEC 1\"}");
    assertThat(syntax.status()).isEqualTo(400);
    assertThat(json(syntax).path("error").asText()).contains("SELEC");

    assertThat(Http.post(base, "/api/sql", "not json").status()).isEqualTo(400);
    assertThat(Http.post(base, "/api/sql", "{}").status()).isEqualTo(400);
    assertThat(Http.get(base, "/api/nothing-here").status()).isEqualTo(404);
    assertThat(Http.get(base, "/api/server").status()).isEqualTo(200);
  }

  @Test
  void refreshHistoryListsTheRefreshesOfAViewNewestFirst() throws Exception {
    viewOneRowBehind("h_src", "h_mv");
    assertThat(Http.post(base, "/api/materialized-views/" + q("h_mv") + "/refresh", "").status()).isEqualTo(200);
    Http.Response response = Http.get(base, "/api/refreshes?mv=" + q("h_mv") + "&limit=5");
    assertThat(response.status()).isEqualTo(200);
    JsonNode refreshes = json(response).path("refreshes");
    assertThat(refreshes).hasSize(2);
    assertThat(refreshes.get(0).path("materialized_view").asText()).isEqualTo(q("h_mv"));
    assertThat(refreshes.get(0).path("refresh_type").asText()).isEqualTo("INCREMENTAL");
    assertThat(refreshes.get(1).path("refresh_type").asText()).isEqualTo("FULL");
    assertThat(Http.get(base, "/api/refreshes?limit=many").status()).isEqualTo(400);
  }

  @Test
  void aPipelineRunsOnTheServersSparkAndAnswersEachDatasetsOutcome(@org.junit.jupiter.api.io.TempDir java.nio.file.Path project)
      throws Exception {
    java.nio.file.Files.writeString(project.resolve("floe.yml"), "name: srv_pipeline\ncatalog: lake\nnamespace: " + ns + "\n");
    spark.sql("CREATE TABLE " + q("p_src") + " (v INT)");
    spark.sql("INSERT INTO " + q("p_src") + " VALUES (1), (5)");
    java.nio.file.Files.writeString(project.resolve("views.sql"), "CREATE MATERIALIZED VIEW p_big AS SELECT v FROM p_src WHERE v > 2;\n");
    Http.Response response = Http.post(base, "/api/pipelines/run", JSON.writeValueAsString(Map.of("path", project.toString())));
    assertThat(response.status()).as(response.body()).isEqualTo(200);
    JsonNode answer = json(response);
    assertThat(answer.path("succeeded").asBoolean()).isTrue();
    assertThat(answer.path("datasets").get(0).path("dataset").asText()).isEqualTo(q("p_big"));
    assertThat(answer.path("datasets").get(0).path("state").asText()).isEqualTo("REFRESHED");
    assertThat(rows("SELECT * FROM " + q("p_big"))).containsExactly("[5]");

    java.nio.file.Files.writeString(project.resolve("views.sql"), "CREATE MATERIALIZED VIEW p_big AS SELECT v FROM no_such_table;\n");
    Http.Response broken = Http.post(base, "/api/pipelines/run", JSON.writeValueAsString(Map.of("path", project.toString())));
    assertThat(broken.status()).isEqualTo(400);
    assertThat(json(broken).path("error").asText()).contains("Pipeline srv_pipeline has 1 problem").contains("no_such_table");
    assertThat(Http.post(base, "/api/pipelines/run", "{}").status()).isEqualTo(400);

    // A mistyped option or value is refused before anything runs, naming it.
    String path = JSON.writeValueAsString(project.toString());
    Http.Response misspelt = Http.post(base, "/api/pipelines/run", "{\"path\": " + path + ", \"full_refresh_all\": true}");
    assertThat(misspelt.status()).isEqualTo(400);
    assertThat(json(misspelt).path("error").asText()).contains("Unknown field 'full_refresh_all'").contains("full-refresh-all");
    Http.Response notAList = Http.post(base, "/api/pipelines/run", "{\"path\": " + path + ", \"refresh\": \"p_big\"}");
    assertThat(notAList.status()).isEqualTo(400);
    assertThat(json(notAList).path("error").asText()).contains("refresh must be a JSON array");
    Http.Response notABoolean = Http.post(base, "/api/pipelines/run", "{\"path\": " + path + ", \"prune\": \"yes\"}");
    assertThat(notABoolean.status()).isEqualTo(400);
    assertThat(json(notABoolean).path("error").asText()).contains("prune must be true or false");
    assertThat(Http.post(base, "/api/pipelines/run", "[]").status()).isEqualTo(400);
  }

  @Test
  void metricsAreInPrometheusTextFormat() throws Exception {
    spark.sql("CREATE TABLE " + q("m_src") + " (v INT)");
    spark.sql("INSERT INTO " + q("m_src") + " VALUES (1), (2)");
    spark.sql("CREATE MATERIALIZED VIEW " + q("m_view") + " AS SELECT v FROM " + q("m_src"));
    spark.sql("INSERT INTO " + q("m_src") + " VALUES (3)");
    Http.Response refreshed = Http.post(base, "/api/materialized-views/" + q("m_view") + "/refresh", "");
    assertThat(refreshed.status()).isEqualTo(200);
    long read = json(refreshed).path("refreshed").get(0).path("rows_read").asLong();

    Http.Response metrics = Http.get(base, "/metrics");
    assertThat(metrics.status()).isEqualTo(200);
    String mv = "mv=\"" + q("m_view") + "\"";
    assertThat(metrics.body())
        .contains("# TYPE floe_refreshes_total counter")
        .contains("floe_refresh_duration_seconds_count{" + mv + ",type=\"INCREMENTAL\"} 1")
        .contains("floe_refresh_rows_read_total{" + mv + "} " + (double) read)
        .contains("floe_refresh_rows_written_total{" + mv + "} 1.0")
        .contains("# TYPE floe_mv_staleness_seconds gauge");
    // The next poll after the refresh sees the view fresh again.
    String fresh = "floe_mv_staleness_seconds{" + mv + "} 0.0";
    assertThat(waitFor(() -> Http.get(base, "/metrics").body(), b -> b.contains(fresh))).contains(fresh);
  }

  @Test
  void aServerThatCannotListenSaysWhereAndWhyAndReleasesTheWarehouse(@org.junit.jupiter.api.io.TempDir java.nio.file.Path warehouse)
      throws Exception {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      ServerSettings busy = ServerSettings.of(warehouse, "lake", "127.0.0.1", port, Map.of());
      WarehouseLock lock = FloeServer.lockWarehouse(busy);
      assertThatThrownBy(() -> FloeServer.start(spark, busy, lock, Clock.systemUTC()))
          .isInstanceOf(FloeException.class)
          .hasMessage("Cannot start floe server on 127.0.0.1:" + port + ": the port is in use");
      // Released: the warehouse can be locked again.
      FloeServer.lockWarehouse(busy).close();
    }
    assertThatThrownBy(() -> ServerSettings.of(warehouse, "lake", "127.0.0.1", 99999, Map.of()))
        .isInstanceOf(FloeException.class)
        .hasMessage("Cannot start floe server on 127.0.0.1:99999: port 99999 is out of range 0-65535");
  }

  @Test
  void secondServerOnTheSameWarehouseIsRefusedNamingTheHolder() {
    assertThatThrownBy(() -> FloeServer.lockWarehouse(settings))
        .isInstanceOf(FloeException.class)
        .hasMessageContaining("already served by pid " + ProcessHandle.current().pid())
        .hasMessageContaining("127.0.0.1:" + server.port());
  }
}
