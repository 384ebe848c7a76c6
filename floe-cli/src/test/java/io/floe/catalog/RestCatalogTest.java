package io.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.server.ChildJvm;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe sql} on an Iceberg REST catalog, configured as the README says for any other catalog:
 * Iceberg's own REST catalog server (its published test fixture, see {@code testing/rest-catalog})
 * runs in a JVM of its own, and Floe reaches it through {@code --conf} alone.
 */
class RestCatalogTest {
  private static final Duration PATIENCE = Duration.ofMinutes(10);

  @TempDir Path work;

  @Test
  void materializedViewsStreamingTablesAndTheHistoryWorkOnARestCatalog() throws Exception {
    Path data = Files.createDirectories(work.resolve("events"));
    Files.writeString(data.resolve("part-1.json"), "{\"trip_id\": 30, \"rating\": 5}\n{\"trip_id\": 97, \"rating\": 2}\n");
    Path script = work.resolve("rest.sql");
    Files.writeString(script, SCRIPT.replace("EVENTS", data.toString()));
    int port = freePort();
    Process server = startServer(port);
    try {
      awaitServer(server, port);
      List<String> command = ChildJvm.floe(List.of("-Xmx1g"), "sql", "--no-server", "--no-stats", "--no-timing",
          "--format", "csv", "-w", work.resolve("client").toString(),
          "--conf", "spark.sql.catalog.lake=org.apache.iceberg.spark.SparkCatalog",
          "--conf", "spark.sql.catalog.lake.type=rest",
          "--conf", "spark.sql.catalog.lake.uri=http://127.0.0.1:" + port + "/",
          "-f", script.toString());
      Path out = work.resolve("floe.out");
      Path err = work.resolve("floe.err");
      Process floe = ChildJvm.start(command, out, err);
      boolean ended = floe.waitFor(PATIENCE.toMinutes(), TimeUnit.MINUTES);
      if (!ended) {
        floe.destroyForcibly().waitFor();
      }
      String printed = Files.readString(out);
      String logged = Files.readString(err);
      String report = "\n--- standard output ---\n" + printed + "\n--- standard error ---\n" + logged;
      assertThat(ended).as("floe sql ended" + report).isTrue();
      assertThat(floe.exitValue()).as("floe sql's exit status" + report).isZero();
      assertThat(printed)
          .as(report)
          .containsPattern("(?m)^lake\\.db\\.silver,FULL,first refresh,")
          .containsPattern("(?m)^lake\\.db\\.silver,INCREMENTAL,")
          .containsPattern("(?m)^lake\\.db\\.gold,INCREMENTAL,")
          .contains("silver differing,0", "gold differing,0")
          .containsPattern("(?m)^lake\\.db\\.raw,1,2,0,")
          .contains("rated,2")
          // The history is a table in the catalog too: every refresh is in it.
          .contains("recorded refreshes,4")
          .doesNotContain("not recorded");
      assertThat(printed.substring(printed.lastIndexOf("namespace\n")).strip())
          .as("SHOW NAMESPACES after DROP NAMESPACE db CASCADE" + report)
          .isEqualTo("namespace\nfloe");
    } finally {
      server.destroy();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
  }

  private static final String SCRIPT = """
      CREATE NAMESPACE db;
      CREATE TABLE db.trips (id BIGINT, city STRING, fare DOUBLE, driver STRING)
        TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read');
      INSERT INTO db.trips SELECT id, element_at(array('nyc', 'sf', 'la'), CAST(id % 3 AS INT) + 1), id * 1.5,
        concat('d', id % 17) FROM range(0, 2000);
      CREATE MATERIALIZED VIEW db.silver AS
        SELECT id, upper(city) AS city, CAST(fare AS DECIMAL(10, 2)) AS fare, driver FROM db.trips WHERE fare > 10;
      CREATE MATERIALIZED VIEW db.gold SCHEDULE REFRESH EVERY 1 HOUR AS
        SELECT city, COUNT(*) AS n, COUNT(DISTINCT driver) AS drivers, SUM(fare) AS total FROM db.silver GROUP BY city;
      INSERT INTO db.trips VALUES (5000, 'sf', 99.0, 'd99');
      UPDATE db.trips SET fare = fare + 1 WHERE id % 97 = 0;
      DELETE FROM db.trips WHERE id % 101 = 0;
      REFRESH MATERIALIZED VIEW db.silver CASCADE;
      SET spark.sql.optimizer.answerQueriesWithMVs.enabled = false;
      SELECT 'silver differing', count(*) FROM (
        (SELECT * FROM db.silver EXCEPT ALL
          SELECT id, upper(city), CAST(fare AS DECIMAL(10, 2)), driver FROM db.trips WHERE fare > 10)
        UNION ALL
        (SELECT id, upper(city), CAST(fare AS DECIMAL(10, 2)), driver FROM db.trips WHERE fare > 10
          EXCEPT ALL SELECT * FROM db.silver));
      SELECT 'gold differing', count(*) FROM (
        (SELECT * FROM db.gold EXCEPT ALL
          SELECT city, COUNT(*), COUNT(DISTINCT driver), SUM(fare) FROM db.silver GROUP BY city)
        UNION ALL
        (SELECT city, COUNT(*), COUNT(DISTINCT driver), SUM(fare) FROM db.silver GROUP BY city
          EXCEPT ALL SELECT * FROM db.gold));
      CREATE STREAMING TABLE db.raw AS SELECT * FROM STREAM read_files('EVENTS', format => 'json');
      CREATE MATERIALIZED VIEW db.rated AS
        SELECT s.id, r.rating FROM db.silver s JOIN db.raw r ON s.id = r.trip_id;
      SELECT 'rated', count(*) FROM db.rated;
      SELECT 'recorded refreshes', count(*) FROM lake.floe.refresh_history
        WHERE materialized_view IN ('lake.db.silver', 'lake.db.gold');
      DROP NAMESPACE db CASCADE;
      SHOW NAMESPACES;
      """;

  private Process startServer(int port) throws IOException {
    Path classPathFile = Paths.get("").toAbsolutePath().resolveSibling("testing").resolve("rest-catalog")
        .resolve("target").resolve("classpath.txt");
    assertThat(classPathFile).as("the REST catalog's class path, written by building testing/rest-catalog").exists();
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx512m");
    command.add("-cp");
    command.add(Files.readString(classPathFile).strip());
    command.add("org.apache.iceberg.rest.RESTCatalogServer");
    Path warehouse = Files.createDirectories(work.resolve("rest-warehouse"));
    ProcessBuilder builder = new ProcessBuilder(command)
        .redirectOutput(work.resolve("rest.out").toFile())
        .redirectError(work.resolve("rest.err").toFile());
    // The fixture reads its catalog's properties from CATALOG_* variables: CATALOG_REST_PORT is rest.port.
    builder.environment().put("CATALOG_WAREHOUSE", warehouse.toUri().toString());
    builder.environment().put("CATALOG_URI", "jdbc:sqlite:" + work.resolve("rest-catalog.db"));
    builder.environment().put("CATALOG_REST_PORT", String.valueOf(port));
    return builder.start();
  }

  private void awaitServer(Process server, int port) throws Exception {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest config = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/config")).build();
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (System.nanoTime() < deadline) {
      assertThat(server.isAlive()).as("the REST catalog server runs: " + Files.readString(work.resolve("rest.err"))).isTrue();
      try {
        if (client.send(config, HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new AssertionError("The REST catalog server did not answer within 2 minutes: " + Files.readString(work.resolve("rest.err")));
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
