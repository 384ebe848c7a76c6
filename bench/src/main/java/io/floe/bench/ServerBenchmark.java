package io.floe.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

/**
 * Benchmark of {@code floe server}, run as a user runs it ({@code bin/floe server} in its own
 * process, reached over HTTP):
 *
 * <ol>
 *   <li>continuous mode: a Bronze table, a Silver and a Gold MV with {@code SCHEDULE REFRESH ON
 *       CHANGE}; {@code commits} times, one INSERT into Bronze, then the time until the Gold MV two
 *       levels down shows it, with no other action; median and worst (goal: under 10 s);
 *   <li>the wall time of {@code bin/floe sql -e "SELECT 1"} with the server running (statements go
 *       to its warm session) and with {@code --no-server} (embedded Spark), median of {@code runs}.
 * </ol>
 *
 * Writes {@code bench/results/server-<timestamp>.txt} and {@code server-latest.txt}.
 */
public final class ServerBenchmark {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration GOAL = Duration.ofSeconds(10);
  private static final Duration PATIENCE = Duration.ofMinutes(5);

  private final HttpClient http = HttpClient.newHttpClient();
  private final Path floe;
  private final Path warehouse;
  private URI base;

  private ServerBenchmark(Path floe, Path warehouse) {
    this.floe = floe;
    this.warehouse = warehouse;
  }

  public static void main(String[] args) throws Exception {
    int commits = 20;
    int runs = 5;
    int pollSeconds = 1;
    Path results = Paths.get("bench", "results");
    Path floe = Paths.get("bin", "floe");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--commits" -> commits = Integer.parseInt(args[++i]);
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--poll-seconds" -> pollSeconds = Integer.parseInt(args[++i]);
        case "--results-dir" -> results = Paths.get(args[++i]);
        case "--floe" -> floe = Paths.get(args[++i]);
        default -> {
          System.out.println("usage: ServerBenchmark [--commits 20] [--runs 5] [--poll-seconds 1] "
              + "[--results-dir bench/results] [--floe bin/floe]");
          System.exit(2);
        }
      }
    }
    Path warehouse = Files.createTempDirectory("floe-server-bench");
    new ServerBenchmark(floe.toAbsolutePath(), warehouse).run(commits, runs, pollSeconds, results);
  }

  private void run(int commits, int runs, int pollSeconds, Path results) throws Exception {
    StringBuilder report = new StringBuilder();
    String stamp = LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    report.append("Floe server benchmark, ").append(stamp).append(" UTC\n");
    report.append("machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores; ")
        .append("load average at start: ").append(BenchRun.loadAverage()).append("\n")
        .append("server: bin/floe server on a fresh warehouse, default heap, floe.server.poll-interval-seconds=")
        .append(pollSeconds).append("\n\n");

    List<Double> coldEmbedded = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      coldEmbedded.add(floeSqlSeconds("--no-server"));
    }

    Instant starting = Instant.now();
    Process server = new ProcessBuilder(floe.toString(), "server", "--warehouse", warehouse.toString(), "--port", "0",
        "--conf", "floe.server.poll-interval-seconds=" + pollSeconds)
        .redirectErrorStream(true).redirectOutput(warehouse.resolveSibling(warehouse.getFileName() + ".server.log").toFile())
        .start();
    try {
      base = awaitServer(server);
      double startSeconds = Duration.between(starting, Instant.now()).toMillis() / 1000.0;
      sql("CREATE NAMESPACE bench");
      sql("CREATE TABLE bench.bronze (id BIGINT, city STRING, amount BIGINT)");
      sql("INSERT INTO bench.bronze VALUES (0, 'seed', 1)");
      sql("CREATE MATERIALIZED VIEW bench.silver SCHEDULE REFRESH ON CHANGE AS "
          + "SELECT id, city, amount FROM bench.bronze WHERE amount > 0");
      sql("CREATE MATERIALIZED VIEW bench.gold SCHEDULE REFRESH ON CHANGE AS "
          + "SELECT city, COUNT(*) AS trips, SUM(amount) AS revenue FROM bench.silver GROUP BY city");
      // One commit to warm the refresh path before measuring.
      latency("warmup");

      List<Double> latencies = new ArrayList<>();
      for (int i = 1; i <= commits; i++) {
        double seconds = latency("c" + i);
        latencies.add(seconds);
        System.out.printf("commit %d: visible in Gold after %.2f s%n", i, seconds);
      }

      List<Double> warm = new ArrayList<>();
      for (int i = 0; i < runs; i++) {
        warm.add(floeSqlSeconds());
      }

      report.append("Continuous mode: Bronze commit -> Gold MV two levels down (Bronze -> Silver -> Gold, ON CHANGE)\n");
      report.append(String.format("  commits: %d, median %.2f s, worst %.2f s, best %.2f s (goal: under %d s: %s)%n",
          commits, median(latencies), Collections.max(latencies), Collections.min(latencies), GOAL.toSeconds(),
          Collections.max(latencies) < GOAL.toSeconds() ? "met" : "not met"));
      report.append("  each: ");
      latencies.forEach(l -> report.append(String.format("%.2f ", l)));
      report.append("\n  measured from the INSERT's answer to the first SELECT of the Gold MV that shows the row,\n"
          + "  SELECTs every 200 ms through the server's /api/sql\n\n");
      report.append(String.format("floe server start (bin/floe server until its API answers): %.1f s%n%n", startSeconds));
      report.append("bin/floe sql -e \"SELECT 1\" wall time, median of ").append(runs).append(" runs\n");
      report.append(String.format("  with a running server (client over HTTP): %.2f s  (each: %s)%n", median(warm), list(warm)));
      report.append(String.format("  --no-server (embedded Spark):             %.2f s  (each: %s)%n", median(coldEmbedded),
          list(coldEmbedded)));
    } finally {
      server.destroy();
      server.waitFor();
    }
    report.append("\nload average at end: ").append(BenchRun.loadAverage()).append("\n");
    Files.createDirectories(results);
    Files.writeString(results.resolve("server-" + stamp + ".txt"), report, StandardCharsets.UTF_8);
    Files.writeString(results.resolve("server-latest.txt"), report, StandardCharsets.UTF_8);
    System.out.print(report);
    System.out.println("Written to " + results.resolve("server-" + stamp + ".txt") + " and server-latest.txt");
  }

  /** Inserts one row for {@code city} and waits until the Gold MV shows it. */
  private double latency(String city) throws Exception {
    sql("INSERT INTO bench.bronze VALUES (" + city.hashCode() + ", '" + city + "', 5)");
    long committed = System.nanoTime();
    Instant deadline = Instant.now().plus(PATIENCE);
    while (Instant.now().isBefore(deadline)) {
      JsonNode rows = sql("SELECT trips FROM bench.gold WHERE city = '" + city + "'").path("rows");
      if (rows.size() == 1) {
        return (System.nanoTime() - committed) / 1e9;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("The commit for " + city + " did not reach the Gold MV within " + PATIENCE);
  }

  private JsonNode sql(String statement) throws IOException, InterruptedException {
    String body = JSON.writeValueAsString(java.util.Map.of("sql", statement));
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(base.resolve("/api/sql"))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IllegalStateException(statement + ": HTTP " + response.statusCode() + " " + response.body());
    }
    return JSON.readTree(response.body());
  }

  private URI awaitServer(Process server) throws Exception {
    Path lock = warehouse.resolve("floe-server.lock");
    Instant deadline = Instant.now().plus(PATIENCE);
    while (Instant.now().isBefore(deadline)) {
      if (!server.isAlive()) {
        throw new IllegalStateException("floe server exited with " + server.exitValue());
      }
      if (Files.exists(lock)) {
        Properties info = new Properties();
        try (var in = Files.newInputStream(lock)) {
          info.load(in);
        }
        String port = info.getProperty("port");
        if (port != null && !port.equals("0")) {
          URI uri = URI.create("http://127.0.0.1:" + port);
          try {
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri.resolve("/api/server")).build(),
                HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() == 200) {
              return uri;
            }
          } catch (IOException notYet) {
            // the port is written just before the API answers
          }
        }
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("floe server did not start within " + PATIENCE);
  }

  private double floeSqlSeconds(String... extra) throws Exception {
    List<String> command = new ArrayList<>(List.of(floe.toString(), "sql", "--warehouse", warehouse.toString()));
    command.addAll(List.of(extra));
    command.addAll(List.of("--no-timing", "-e", "SELECT 1"));
    long started = System.nanoTime();
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.waitFor() != 0 || !output.contains("|1  |")) {
      throw new IllegalStateException("bin/floe sql failed: " + output);
    }
    return (System.nanoTime() - started) / 1e9;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static String list(List<Double> values) {
    StringBuilder text = new StringBuilder();
    values.forEach(v -> text.append(String.format("%.2f ", v)));
    return text.toString().trim();
  }
}
