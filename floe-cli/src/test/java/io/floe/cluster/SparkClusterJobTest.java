package io.floe.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.server.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floe in a user's own Spark job on a cluster whose executors are other JVMs, as the README's "In
 * your own Spark job" says: the job knows Spark only, {@code spark-submit --jars} brings Floe's
 * Spark jar and nothing else of Floe's, and every statement's tasks run in executors that loaded
 * Floe's classes from that jar.
 *
 * <p>The cluster is Spark's {@code local-cluster} master: a standalone master and workers in the
 * driver's JVM, each executor a JVM of its own started from {@code SPARK_HOME/jars}. That folder
 * stands in for a Spark distribution: the test class path's jars (Spark, Iceberg's runtime, the
 * catalog's JDBC driver), none of Floe's.
 */
class SparkClusterJobTest {
  private static final int EXECUTORS = 2;

  @TempDir Path work;

  @Test
  void floesStatementsRunOnExecutorsInOtherJvmsWithOnlyFloesSparkJarAdded() throws Exception {
    Path sparkHome = distribution();
    Path warehouse = Files.createDirectories(work.resolve("warehouse"));
    Path ratings = Files.createDirectories(work.resolve("ratings"));
    Files.writeString(ratings.resolve("part-1.json"),
        "{\"trip_id\": 30, \"rating\": 5}\n{\"trip_id\": 97, \"rating\": 2}\n{\"trip_id\": 404, \"rating\": 4}\n");
    Files.writeString(ratings.resolve("part-2.json"), "{\"trip_id\": 1500, \"rating\": 1}\n");
    Path script = work.resolve("job.sql");
    Files.writeString(script, SCRIPT.replace("RATINGS", ratings.toString()));

    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("@" + Paths.get("").toAbsolutePath().resolveSibling("bin").resolve("jvm.options"));
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(jobClasses() + File.pathSeparator + sparkHome.resolve("jars") + File.separator + "*");
    command.add("org.apache.spark.deploy.SparkSubmit");
    command.addAll(List.of("--master", "local-cluster[" + EXECUTORS + ",1,1024]"));
    command.addAll(List.of("--jars", floeSparkJar().toString()));
    conf(command, "spark.sql.extensions",
        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,io.floe.spark.FloeSparkSessionExtensions");
    conf(command, "spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog");
    conf(command, "spark.sql.catalog.lake.type", "jdbc");
    conf(command, "spark.sql.catalog.lake.uri", "jdbc:sqlite:" + warehouse.resolve("catalog.db"));
    conf(command, "spark.sql.catalog.lake.jdbc.schema-version", "V1");
    conf(command, "spark.sql.catalog.lake.warehouse", warehouse.toString());
    conf(command, "spark.sql.defaultCatalog", "lake");
    conf(command, "spark.sql.shuffle.partitions", "4");
    conf(command, "spark.ui.enabled", "false");
    command.addAll(List.of("--class", SqlJob.class.getName(), "spark-internal", script.toString(), String.valueOf(EXECUTORS)));

    Run run = run(command, sparkHome, "job");
    String printed = run.printed();
    String report = run.report();
    assertThat(run.status()).as("the job's exit status" + report).isZero();
    assertThat(printed).as(report).contains("executors " + EXECUTORS);

    List<String> refreshes = rowsAfter(printed, "> REFRESH MATERIALIZED VIEW lake.db.silver CASCADE");
    assertThat(refreshes).as(report).hasSize(4);
    assertThat(refreshes)
        .as("each MV's refresh after the writes" + report)
        .allSatisfy(row -> assertThat(row).contains("|INCREMENTAL|").endsWith("|SUCCEEDED|1|null|null"));
    assertThat(refreshes.stream().map(row -> row.substring(0, row.indexOf('|'))).sorted().toList())
        .containsExactly("lake.db.gold", "lake.db.rated", "lake.db.silver", "lake.db.top_fares");
    List<String> checks = rowsAfter(printed, "> " + CHECK);
    assertThat(checks)
        .as("rows only in each MV and only in its definition, after the incremental refreshes" + report)
        .containsExactly("gold|0|0", "rated|0|0", "silver|0|0", "top_fares|0|0");
    assertThat(rowsAfter(printed, "> SELECT count(*) FROM lake.db.rated WHERE rating IS NOT NULL"))
        .as("trips with a rating loaded from the JSON files, one of them deleted" + report)
        .containsExactly("3");
  }

  @Test
  void floeSqlOnAClusterMasterShipsItsJarToTheExecutors() throws Exception {
    Path sparkHome = distribution();
    Path script = work.resolve("cli.sql");
    Files.writeString(script, """
        CREATE NAMESPACE db;
        CREATE TABLE db.orders (id BIGINT, customer STRING, amount DECIMAL(10, 2))
          TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read');
        INSERT INTO db.orders SELECT id, concat('c', id % 7), CAST(id AS DECIMAL(10, 2)) FROM range(0, 500);
        CREATE MATERIALIZED VIEW db.per_customer AS
          SELECT customer, COUNT(*) AS orders, SUM(amount) AS total FROM db.orders GROUP BY customer;
        UPDATE db.orders SET amount = amount + 1 WHERE id % 11 = 0;
        DELETE FROM db.orders WHERE id % 13 = 0;
        REFRESH MATERIALIZED VIEW db.per_customer;
        SET spark.sql.optimizer.answerQueriesWithMVs.enabled = false;
        SELECT 'differing', count(*) FROM (
          (SELECT * FROM db.per_customer EXCEPT ALL SELECT customer, COUNT(*), SUM(amount) FROM db.orders GROUP BY customer)
          UNION ALL
          (SELECT customer, COUNT(*), SUM(amount) FROM db.orders GROUP BY customer EXCEPT ALL SELECT * FROM db.per_customer));
        """);
    List<String> command = ChildJvm.floe(List.of("-Xmx1g"), "sql", "--no-server", "--no-stats", "--format", "csv",
        "-w", work.resolve("cli-warehouse").toString(), "--conf", "spark.master=local-cluster[" + EXECUTORS + ",1,1024]",
        "-f", script.toString());
    Run run = run(command, sparkHome, "cli");
    assertThat(run.status()).as("floe sql's exit status" + run.report()).isZero();
    assertThat(run.printed())
        .as(run.report())
        .containsPattern("lake\\.db\\.per_customer,INCREMENTAL,")
        .contains("differing,0");
  }

  private static final String CHECK = "SELECT * FROM checks ORDER BY mv";

  private static final String SCRIPT = """
      CREATE NAMESPACE IF NOT EXISTS lake.db;
      CREATE STREAMING TABLE lake.db.ratings AS SELECT * FROM STREAM read_files('RATINGS', format => 'json');
      CREATE TABLE lake.db.trips (id BIGINT, city STRING, fare DOUBLE, driver STRING, ts TIMESTAMP)
        TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',
          'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read');
      INSERT INTO lake.db.trips
        SELECT id, element_at(array('nyc', 'sf', 'la'), CAST(id % 3 AS INT) + 1), id * 1.5, concat('d', id % 17),
          TIMESTAMP '2026-01-01 00:00:00' + make_interval(0, 0, 0, 0, CAST(id % 72 AS INT))
        FROM range(0, 3000);
      CREATE MATERIALIZED VIEW lake.db.silver AS
        SELECT id, upper(city) AS city, CAST(fare AS DECIMAL(10, 2)) AS fare, driver, CAST(ts AS DATE) AS day
        FROM lake.db.trips WHERE fare > 10;
      CREATE MATERIALIZED VIEW lake.db.gold AS
        SELECT city, day, COUNT(*) AS trips, COUNT(DISTINCT driver) AS drivers, SUM(fare) AS revenue,
          MIN(fare) AS low, MAX(fare) AS high
        FROM lake.db.silver GROUP BY city, day;
      CREATE MATERIALIZED VIEW lake.db.top_fares AS
        SELECT * FROM (SELECT id, city, fare, row_number() OVER (PARTITION BY city ORDER BY fare DESC, id) AS n
          FROM lake.db.silver) WHERE n <= 3;
      CREATE MATERIALIZED VIEW lake.db.rated AS
        SELECT s.id, s.city, r.rating FROM lake.db.silver s LEFT JOIN lake.db.ratings r ON s.id = r.trip_id;
      INSERT INTO lake.db.trips VALUES (5000, 'sf', 9999.0, 'd99', TIMESTAMP '2026-01-02 10:00:00');
      UPDATE lake.db.trips SET fare = fare + 1 WHERE id % 97 = 0;
      DELETE FROM lake.db.trips WHERE id % 101 = 0;
      MERGE INTO lake.db.trips t
        USING (SELECT id, 'la' AS city, id * 2.0 AS fare, 'd1' AS driver, TIMESTAMP '2026-01-03 00:00:00' AS ts
          FROM range(2990, 3010)) s
        ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET fare = s.fare
        WHEN NOT MATCHED THEN INSERT *;
      REFRESH MATERIALIZED VIEW lake.db.silver CASCADE;
      SET spark.sql.optimizer.answerQueriesWithMVs.enabled = false;
      CREATE TEMPORARY VIEW checks AS
        SELECT 'silver' AS mv,
          (SELECT count(*) FROM (SELECT * FROM lake.db.silver EXCEPT ALL
            SELECT id, upper(city), CAST(fare AS DECIMAL(10, 2)), driver, CAST(ts AS DATE) FROM lake.db.trips WHERE fare > 10)) AS only_mv,
          (SELECT count(*) FROM (SELECT id, upper(city), CAST(fare AS DECIMAL(10, 2)), driver, CAST(ts AS DATE)
            FROM lake.db.trips WHERE fare > 10 EXCEPT ALL SELECT * FROM lake.db.silver)) AS only_definition
        UNION ALL
        SELECT 'gold',
          (SELECT count(*) FROM (SELECT * FROM lake.db.gold EXCEPT ALL
            SELECT city, day, COUNT(*), COUNT(DISTINCT driver), SUM(fare), MIN(fare), MAX(fare) FROM lake.db.silver GROUP BY city, day)),
          (SELECT count(*) FROM (SELECT city, day, COUNT(*), COUNT(DISTINCT driver), SUM(fare), MIN(fare), MAX(fare)
            FROM lake.db.silver GROUP BY city, day EXCEPT ALL SELECT * FROM lake.db.gold))
        UNION ALL
        SELECT 'top_fares',
          (SELECT count(*) FROM (SELECT * FROM lake.db.top_fares EXCEPT ALL
            SELECT * FROM (SELECT id, city, fare, row_number() OVER (PARTITION BY city ORDER BY fare DESC, id) AS n
              FROM lake.db.silver) WHERE n <= 3)),
          (SELECT count(*) FROM (SELECT * FROM (SELECT id, city, fare, row_number() OVER (PARTITION BY city ORDER BY fare DESC, id) AS n
              FROM lake.db.silver) WHERE n <= 3 EXCEPT ALL SELECT * FROM lake.db.top_fares))
        UNION ALL
        SELECT 'rated',
          (SELECT count(*) FROM (SELECT * FROM lake.db.rated EXCEPT ALL
            SELECT s.id, s.city, r.rating FROM lake.db.silver s LEFT JOIN lake.db.ratings r ON s.id = r.trip_id)),
          (SELECT count(*) FROM (SELECT s.id, s.city, r.rating FROM lake.db.silver s LEFT JOIN lake.db.ratings r ON s.id = r.trip_id
            EXCEPT ALL SELECT * FROM lake.db.rated));
      SELECT * FROM checks ORDER BY mv;
      SELECT count(*) FROM lake.db.rated WHERE rating IS NOT NULL;
      """;

  /** A process that ended: its exit status and what it printed. */
  private record Run(int status, String printed, String logged) {
    String report() {
      return "\n--- standard output ---\n" + printed + "\n--- standard error (end) ---\n"
          + logged.substring(Math.max(0, logged.length() - 6000));
    }
  }

  /** Runs {@code command} with {@code sparkHome} as Spark's home; fails when it runs over 12 minutes. */
  private Run run(List<String> command, Path sparkHome, String name) throws IOException, InterruptedException {
    Path out = work.resolve(name + ".out");
    Path err = work.resolve(name + ".err");
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().put("SPARK_HOME", sparkHome.toString());
    builder.environment().put("SPARK_SCALA_VERSION", "2.13");
    Process process = builder.start();
    boolean ended = process.waitFor(12, TimeUnit.MINUTES);
    if (!ended) {
      process.destroyForcibly().waitFor();
    }
    Run run = new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    assertThat(ended).as(name + " ended within 12 minutes" + run.report()).isTrue();
    return run;
  }

  /** The result rows the job printed for the statement that starts with {@code statement}. */
  private static List<String> rowsAfter(String printed, String statement) {
    List<String> rows = new ArrayList<>();
    boolean inside = false;
    for (String line : printed.split("\n")) {
      if (line.startsWith("> ")) {
        inside = line.startsWith(statement);
      } else if (inside && line.startsWith("| ")) {
        rows.add(line.substring(2));
      }
    }
    return rows;
  }

  private static void conf(List<String> command, String key, String value) {
    command.add("--conf");
    command.add(key + "=" + value);
  }

  /**
   * A folder laid out as a Spark distribution ({@code RELEASE}, {@code jars/}) whose jars are the
   * test class path's, without Floe's: the cluster's executors start from it.
   */
  private Path distribution() throws IOException {
    Path home = Files.createDirectories(work.resolve("spark-home"));
    Files.writeString(home.resolve("RELEASE"), "Spark 4.1 stand-in for Floe's cluster test\n");
    Path jars = Files.createDirectories(home.resolve("jars"));
    for (Path entry : classPath()) {
      String name = entry.getFileName().toString();
      if (Files.isRegularFile(entry) && name.endsWith(".jar") && !isFloes(entry)) {
        Files.createSymbolicLink(jars.resolve(name), entry.toAbsolutePath());
      }
    }
    return home;
  }

  /** Floe's Spark jar as packaged: the one jar a Spark job adds. */
  private static Path floeSparkJar() {
    for (Path entry : classPath()) {
      String name = entry.getFileName().toString();
      if (name.startsWith("floe-spark-") && name.endsWith(".jar") && !name.endsWith("-tests.jar")) {
        return entry;
      }
    }
    throw new IllegalStateException("This test needs floe-spark's packaged jar on the class path (run `mvn install`"
        + " or bin/test, not `mvn test`), found: " + classPath());
  }

  /** This module's compiled test classes, which hold {@link SqlJob}: the job's own code. */
  private static Path jobClasses() {
    try {
      return Paths.get(SqlJob.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean isFloes(Path entry) {
    String path = entry.toAbsolutePath().toString().replace(File.separatorChar, '/');
    return entry.getFileName().toString().startsWith("floe-") || path.contains("/floe-cli/target/") || path.contains("/io/floe/");
  }

  private static List<Path> classPath() {
    List<Path> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!entry.isBlank()) {
        entries.add(Paths.get(entry));
      }
    }
    return entries;
  }
}
