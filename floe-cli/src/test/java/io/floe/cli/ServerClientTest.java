package io.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.server.ChildJvm;
import io.floe.server.FloeServer;
import io.floe.server.ServerLocator;
import io.floe.server.ServerSettings;
import io.floe.spark.SharedSpark;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code floe sql} against a running server prints what it prints on embedded Spark. */
class ServerClientTest {
  private static String ns;
  private static FloeServer server;

  @TempDir Path temp;

  @BeforeAll
  static void startServer() {
    ns = SharedSpark.freshNamespace("client");
    SharedSpark.session().sql("CREATE TABLE lake." + ns + ".cities (name STRING, pop INT, note STRING)");
    SharedSpark.session().sql("INSERT INTO lake." + ns + ".cities VALUES "
        + "('Osaka', 2, NULL), ('Tokyo', 14, 'a, \"b\"'), ('東京', 14, '')");
    ServerSettings settings = ServerSettings.of(SharedSpark.warehouse(), "lake", "127.0.0.1", 0,
        Map.of(ServerSettings.POLL_INTERVAL_KEY, "60"));
    server = FloeServer.start(SharedSpark.session(), settings, FloeServer.lockWarehouse(settings), Clock.systemUTC());
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  private record Run(int exitCode, String out, String err) {}

  private static Run floe(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Floe.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    String[] all = new String[args.length + 2];
    all[0] = "sql";
    all[1] = "--warehouse=" + SharedSpark.warehouse();
    System.arraycopy(args, 0, all, 2, args.length);
    int code = cmd.execute(all);
    return new Run(code, out.toString(), err.toString());
  }

  private static String withoutTimes(String err) {
    return err.replaceAll(", [0-9.]+ m?s\\)", ")");
  }

  @Test
  void everyFormatPrintsTheSameThroughTheServerAsEmbedded() {
    assertThat(ServerLocator.find(SharedSpark.warehouse())).isPresent();
    String script = "USE lake." + ns + "; SELECT name, pop, note FROM cities ORDER BY name; "
        + "SELECT COUNT(*) AS n FROM cities WHERE pop > 10";
    for (String format : List.of("table", "csv", "json")) {
      Run remote = floe("--format", format, "-e", script);
      Run embedded = floe("--no-server", "--format", format, "-e", script);
      assertThat(remote.exitCode()).as(remote.err()).isZero();
      assertThat(remote.out()).as(format).isEqualTo(embedded.out()).contains("Osaka");
      assertThat(withoutTimes(remote.err())).isEqualTo(withoutTimes(embedded.err()));
    }
  }

  @Test
  void settingsTheServersSessionDoesNotTakeAreNamed() {
    Run withConf = floe("--no-timing", "--conf", "spark.sql.session.timeZone=Europe/Paris", "--catalog", "other",
        "-e", "SELECT 1 AS one");
    assertThat(withConf.exitCode()).isZero();
    assertThat(withConf.err()).contains("Note: running on floe server ")
        .contains("--conf, --catalog given here do not apply; add --no-server to run with them on embedded Spark");
    assertThat(floe("--no-timing", "-e", "SELECT 1 AS one").err()).doesNotContain("Note:");
  }

  /** The shell's Ctrl-C: a session's running statement is cancelled, on the server or embedded. */
  @Test
  void aRunningStatementIsCancelledThroughTheServerAndEmbedded() throws Exception {
    String forever = "SELECT sum(id % 7) AS s FROM range(0, 800000000000)";
    LakehouseOptions options = new LakehouseOptions();
    options.catalog = "lake";
    List<SqlSession> sessions = List.of(
        new RemoteSqlSession(ServerLocator.find(SharedSpark.warehouse()).orElseThrow()),
        EmbeddedSqlSession.start(options, SharedSpark.warehouse()));
    for (SqlSession session : sessions) {
      java.util.concurrent.CompletableFuture<Throwable> failure = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
        try {
          session.run(forever, io.floe.cli.output.OutputFormat.TABLE);
          return null;
        } catch (Exception e) {
          return e;
        }
      });
      Thread.sleep(3_000); // under way
      session.cancel();
      Throwable cancelled = failure.get(1, TimeUnit.MINUTES);
      assertThat(cancelled).as(session.getClass().getSimpleName()).isNotNull();
      assertThat(io.floe.cli.output.FailureLine.of(cancelled)).as(session.getClass().getSimpleName()).containsIgnoringCase("cancelled");
      session.cancel(); // none runs: nothing happens
    }
    assertThat(floe("--no-timing", "-e", "SELECT 1 AS one").exitCode()).as("the server goes on").isZero();
  }

  @Test
  void aFailingStatementPrintsTheSameOneLineAndStopsTheScript() {
    String script = "SELECT * FROM lake." + ns + ".no_such_table; SELECT 1";
    Run remote = floe("--no-timing", "-e", script);
    Run embedded = floe("--no-server", "--no-timing", "-e", script);
    assertThat(remote.exitCode()).isEqualTo(1);
    assertThat(remote.out()).isEmpty();
    assertThat(remote.err()).startsWith("Error: ").contains("no_such_table").isEqualTo(embedded.err());
  }

  @Test
  void clientInItsOwnJvmPrintsTheSameWithoutLoadingSpark() throws Exception {
    String sql = "SELECT name, pop FROM lake." + ns + ".cities ORDER BY name";
    Path out = temp.resolve("out");
    Path err = temp.resolve("err");
    Process client = ChildJvm.start(ChildJvm.floe(List.of("-verbose:class"), "sql",
        "--warehouse", SharedSpark.warehouse().toString(), "--no-timing", "-e", sql), out, err);
    assertThat(client.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(client.exitValue()).as(Files.readString(err, StandardCharsets.UTF_8)).isZero();
    List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
    List<String> loadedSpark = lines.stream()
        .filter(l -> l.startsWith("[") && (l.contains("org.apache.spark") || l.contains("scala.")))
        .collect(Collectors.toList());
    assertThat(loadedSpark).isEmpty();
    String printed = lines.stream().filter(l -> !l.startsWith("[")).map(l -> l + "\n").collect(Collectors.joining());
    assertThat(printed).isEqualTo(floe("--no-server", "--no-timing", "-e", sql).out());
  }

  @Test
  void floeRunSendsThePipelineToTheServerAndPrintsItsSummary() throws Exception {
    java.nio.file.Files.writeString(temp.resolve("floe.yml"), "name: client_pipeline\ncatalog: lake\nnamespace: " + ns + "\n");
    java.nio.file.Files.writeString(temp.resolve("big.sql"), "CREATE MATERIALIZED VIEW big_cities AS SELECT name FROM cities WHERE pop > 10;\n");
    StringWriter out = new StringWriter();
    CommandLine cmd = Floe.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(new StringWriter(), true));
    int code = cmd.execute("run", "--warehouse=" + SharedSpark.warehouse(), temp.toString());
    assertThat(code).as(out.toString()).isZero();
    assertThat(out.toString())
        .contains("Running pipeline client_pipeline on floe server")
        .contains("REFRESHED  lake." + ns + ".big_cities  created; FULL");
    assertThat(SharedSpark.session().sql("SELECT * FROM lake." + ns + ".big_cities").count()).isEqualTo(2);
  }
}
