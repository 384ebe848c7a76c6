package io.floe.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The floor of an incremental refresh: what one changed Bronze row costs to reach the seed's Gold
 * MV, through its Silver MV, on a small Bronze table. Each round changes one trip (an insert, an
 * update or a delete, in turn) and refreshes Silver, then Gold; for each refresh it records the wall
 * time, how much of it a Spark job was running, the Spark jobs it ran and the Iceberg commits it
 * made (metadata versions written anywhere in the warehouse: the MV's storage table and its
 * branches, the refresh history). Figures go to
 * {@code bench/results/refresh-floor-<timestamp>.txt} and {@code refresh-floor-latest.txt}.
 *
 * <p>With {@code --silver-only} there is no Gold: Silver is then an MV nothing reads, which writes no
 * change feed, and the rounds refresh Silver alone. Its figures go to {@code
 * refresh-floor-silver-only-<timestamp>.txt} and {@code refresh-floor-silver-only-latest.txt}.
 *
 * <p>Usage: {@code RefreshFloorBenchmark [--rows 100k] [--rounds 30] [--silver-only] [--results-dir bench/results]}
 */
public final class RefreshFloorBenchmark {
  private static final String[] KINDS = {"insert", "update", "delete"};
  private static final int WARM_UP_ROUNDS = 6;

  private final SparkSession spark;
  private final Path warehouse;
  /** Each Spark job started so far, named by the call site of the SQL execution it belongs to. */
  private final List<String> jobs = java.util.Collections.synchronizedList(new ArrayList<>());
  private final Map<Long, String> executions = new java.util.concurrent.ConcurrentHashMap<>();
  /** When each running job started, and the start and end of each finished one (epoch ms). */
  private final Map<Integer, Long> running = new java.util.concurrent.ConcurrentHashMap<>();
  private final List<long[]> finished = java.util.Collections.synchronizedList(new ArrayList<>());

  private RefreshFloorBenchmark(SparkSession spark) {
    this.spark = spark;
    this.warehouse = Paths.get(java.net.URI.create(spark.conf().get("spark.sql.catalog." + BenchRun.CATALOG + ".warehouse")));
    spark.sparkContext().addSparkListener(new SparkListener() {
      @Override
      public void onOtherEvent(org.apache.spark.scheduler.SparkListenerEvent event) {
        if (event instanceof org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart start) {
          executions.put(start.executionId(), start.description());
        }
      }

      @Override
      public void onJobStart(SparkListenerJobStart event) {
        String id = event.properties() == null ? null : event.properties().getProperty("spark.sql.execution.id");
        jobs.add(id == null ? "(no SQL execution)" : executions.getOrDefault(Long.parseLong(id), "execution " + id));
        running.put(event.jobId(), event.time());
      }

      @Override
      public void onJobEnd(org.apache.spark.scheduler.SparkListenerJobEnd event) {
        Long started = running.remove(event.jobId());
        if (started != null) {
          finished.add(new long[] {started, event.time()});
        }
      }
    });
  }

  public static void main(String[] args) throws Exception {
    long rows = 100_000;
    int rounds = 30;
    boolean withGold = true;
    Path resultsDir = Paths.get("bench", "results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = RefreshBenchmark.parseSize(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--silver-only" -> withGold = false;
        case "--results-dir" -> resultsDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException(
            "usage: RefreshFloorBenchmark [--rows 100k] [--rounds 30] [--silver-only] [--results-dir bench/results]");
      }
    }
    long n = rows;
    int r = rounds;
    boolean gold = withGold;
    String report = BenchRun.withLakehouse("floe-refresh-floor", spark -> new RefreshFloorBenchmark(spark).run(n, r, gold));
    System.out.print(report);
    System.out.println("written to " + BenchRun.publish(resultsDir, gold ? "refresh-floor" : "refresh-floor-silver-only", report));
  }

  /** One refresh's figures. */
  private record Sample(String kind, double millis, double inJobsMillis, List<String> jobs, long commits, String type) {}

  private String run(long n, int rounds, boolean withGold) {
    String db = BenchRun.CATALOG + ".floor";
    String bronze = db + ".trips_bronze";
    String silver = db + ".mv_trips_silver";
    String gold = db + ".mv_city_daily_metrics";
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + db);
    spark.sql(
        "CREATE TABLE " + bronze + " (" + RefreshBenchmark.TRIPS_DDL + ") USING iceberg TBLPROPERTIES ("
            + "'format-version'='2','write.delete.mode'='merge-on-read',"
            + "'write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read')");
    try {
      RefreshBenchmark.trips(spark, 0, n, 42, 2).writeTo(bronze).append();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot fill " + bronze + ": " + e.getMessage(), e);
    }
    spark.sql(RefreshBenchmark.silverSql(db));
    Map<String, List<Sample>> byView = new LinkedHashMap<>();
    byView.put("silver", new ArrayList<>());
    if (withGold) {
      spark.sql(RefreshBenchmark.goldSql(db));
      byView.put("gold", new ArrayList<>());
    }

    long[] nextId = {n};
    for (int round = 0; round < WARM_UP_ROUNDS + rounds; round++) {
      String kind = KINDS[round % KINDS.length];
      change(bronze, kind, round, nextId);
      Sample s = refresh(silver, kind);
      Sample g = withGold ? refresh(gold, kind) : null;
      if (round >= WARM_UP_ROUNDS) {
        byView.get("silver").add(s);
        if (withGold) {
          byView.get("gold").add(g);
        }
      }
    }
    // Every incremental refresh must have kept the MV equal to its definition.
    Map<String, String> checks = new LinkedHashMap<>();
    checks.put("silver", RefreshBenchmark.check(spark, silver, RefreshBenchmark.silverDefinition(db)));
    if (withGold) {
      checks.put("gold", RefreshBenchmark.check(spark, gold, RefreshBenchmark.goldDefinition(db)));
    }
    return report(n, rounds, byView, checks);
  }

  /** Changes one trip of Bronze: appends a new one, or updates or deletes an existing one. */
  private void change(String bronze, String kind, int round, long[] nextId) {
    // Existing trips picked from the first half of the ids, a different one each round.
    String existing = String.format(Locale.ROOT, "TRIP-%09d", 1 + (round * 7919L) % (nextId[0] / 2));
    switch (kind) {
      case "insert" -> {
        try {
          RefreshBenchmark.trips(spark, nextId[0], 1, 4242, 1).writeTo(bronze).append();
        } catch (Exception e) {
          throw new IllegalStateException("Cannot append to " + bronze + ": " + e.getMessage(), e);
        }
        nextId[0]++;
      }
      case "update" -> spark.sql("UPDATE " + bronze + " SET tip_amount = tip_amount + 1, total_amount = total_amount + 1"
          + " WHERE trip_id = '" + existing + "'");
      default -> spark.sql("DELETE FROM " + bronze + " WHERE trip_id = '" + existing + "'");
    }
  }

  private Sample refresh(String mv, String kind) {
    long commitsBefore = metadataFiles();
    int jobsBefore = jobs.size();
    int finishedBefore = finished.size();
    long startedAt = System.currentTimeMillis();
    long t = System.nanoTime();
    Row row = spark.sql("REFRESH MATERIALIZED VIEW " + mv).collectAsList().get(0);
    double millis = (System.nanoTime() - t) / 1e6;
    // The listener hears of a job shortly after it starts: wait for the bus to deliver every event.
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("Spark's listener bus did not deliver the refresh's events", e);
    }
    List<String> ran;
    synchronized (jobs) {
      ran = List.copyOf(jobs.subList(jobsBefore, jobs.size()));
    }
    List<long[]> intervals;
    synchronized (finished) {
      intervals = new ArrayList<>(finished.subList(finishedBefore, finished.size()));
    }
    return new Sample(kind, millis, covered(intervals, startedAt), ran, metadataFiles() - commitsBefore, row.getAs("refresh_type"));
  }

  /** How many milliseconds after {@code from} at least one of the {@code intervals} covers. */
  static long covered(List<long[]> intervals, long from) {
    List<long[]> sorted = new ArrayList<>(intervals);
    sorted.sort(java.util.Comparator.comparingLong(a -> a[0]));
    long total = 0;
    long end = from;
    for (long[] interval : sorted) {
      long start = Math.max(interval[0], end);
      if (interval[1] > start) {
        total += interval[1] - start;
        end = interval[1];
      }
    }
    return total;
  }

  /**
   * Commits so far to every table and view of the warehouse: the sum of their metadata versions
   * (the number a metadata file's name starts with; old files are deleted after a commit).
   */
  private long metadataFiles() {
    Map<Path, Long> versions = new HashMap<>();
    try (Stream<Path> files = Files.walk(warehouse)) {
      files.forEach(p -> {
        Matcher m = METADATA_FILE.matcher(p.getFileName().toString());
        if (m.matches()) {
          versions.merge(p.getParent(), Long.parseLong(m.group(1)), Math::max);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return versions.values().stream().mapToLong(Long::longValue).sum();
  }

  private static final Pattern METADATA_FILE = Pattern.compile("(\\d+)-.*\\.metadata\\.json");

  private static String report(long n, int rounds, Map<String, List<Sample>> byView, Map<String, String> checks) {
    StringBuilder r = new StringBuilder();
    r.append(String.format(Locale.ROOT, "Floe refresh floor benchmark, %s UTC%n",
        LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))));
    r.append(String.format(Locale.ROOT, "machine: %d cores; load average at end: %s%n",
        Runtime.getRuntime().availableProcessors(), BenchRun.loadAverage()));
    r.append(BenchRun.givenSettingsLine()).append(String.format("%n"));
    boolean withGold = byView.containsKey("gold");
    r.append(String.format(Locale.ROOT,
        (withGold
                ? "Bronze: %,d generated trips (merge-on-read, format v2); the seed's Silver MV over it and Gold MV over Silver.%n"
                    + "Each round changes one trip (insert, update, delete in turn), then refreshes Silver, then Gold.%n"
                : "Bronze: %,d generated trips (merge-on-read, format v2); the seed's Silver MV over it, and no Gold%n"
                    + "(--silver-only): Silver is an MV nothing reads, so it writes no change feed.%n"
                    + "Each round changes one trip (insert, update, delete in turn), then refreshes Silver.%n")
            + "%d rounds measured after %d unmeasured. In jobs: the part of the refresh a Spark job was running%n"
            + "(the rest is the driver: planning, table metadata, commits). Jobs: Spark jobs the refresh ran. Commits: Iceberg%n"
            + "commits (metadata versions written: the storage table and its branches, the refresh history).%n%n",
        n, rounds, WARM_UP_ROUNDS));
    r.append(String.format(Locale.ROOT, "%-7s %-7s %5s %10s %10s %12s %6s %8s  %s%n",
        "mv", "change", "runs", "median ms", "p90 ms", "in jobs ms", "jobs", "commits", "refresh types"));
    List<Double> chain = new ArrayList<>();
    List<Sample> silver = byView.get("silver");
    List<Sample> gold = byView.getOrDefault("gold", List.of());
    for (int i = 0; i < gold.size(); i++) {
      chain.add(silver.get(i).millis() + gold.get(i).millis());
    }
    for (Map.Entry<String, List<Sample>> view : byView.entrySet()) {
      for (String kind : KINDS) {
        List<Sample> samples = view.getValue().stream().filter(s -> s.kind().equals(kind)).toList();
        Map<String, Long> types = new LinkedHashMap<>();
        samples.forEach(s -> types.merge(s.type(), 1L, Long::sum));
        r.append(String.format(Locale.ROOT, "%-7s %-7s %5d %10.0f %10.0f %12.0f %6.0f %8.0f  %s%n",
            view.getKey(), kind, samples.size(),
            RefreshBenchmark.median(samples.stream().mapToDouble(Sample::millis).toArray()),
            percentile(samples.stream().mapToDouble(Sample::millis).toArray(), 0.9),
            RefreshBenchmark.median(samples.stream().mapToDouble(Sample::inJobsMillis).toArray()),
            RefreshBenchmark.median(samples.stream().mapToDouble(x -> x.jobs().size()).toArray()),
            RefreshBenchmark.median(samples.stream().mapToDouble(Sample::commits).toArray()),
            types));
      }
    }
    if (withGold) {
      r.append(String.format(Locale.ROOT, "%nOne Bronze change through Silver to Gold (the two refreshes): median %.0f ms, p90 %.0f ms%n",
          RefreshBenchmark.median(chain.stream().mapToDouble(Double::doubleValue).toArray()),
          percentile(chain.stream().mapToDouble(Double::doubleValue).toArray(), 0.9)));
    }
    r.append(String.format(Locale.ROOT, "%nCorrectness after the last round (the MV against its definition, EXCEPT ALL both ways):%n"));
    checks.forEach((mv, verdict) -> r.append(String.format(Locale.ROOT, "  %-7s %s%n", mv, verdict)));
    r.append(String.format(Locale.ROOT, "%nThe Spark jobs of the last round's refreshes (a %s), by call site:%n", silver.get(silver.size() - 1).kind()));
    for (Map.Entry<String, List<Sample>> view : byView.entrySet()) {
      Sample last = view.getValue().get(view.getValue().size() - 1);
      Map<String, Long> sites = new LinkedHashMap<>();
      last.jobs().forEach(j -> sites.merge(j, 1L, Long::sum));
      r.append(String.format(Locale.ROOT, "  %s (%d jobs, %.0f ms):%n", view.getKey(), last.jobs().size(), last.millis()));
      sites.forEach((site, count) -> r.append(String.format(Locale.ROOT, "    %2d  %s%n", count, site)));
    }
    return r.toString();
  }

  private static double percentile(double[] values, double p) {
    double[] sorted = values.clone();
    java.util.Arrays.sort(sorted);
    return sorted.length == 0 ? Double.NaN : sorted[(int) Math.min(sorted.length - 1, Math.round(p * (sorted.length - 1)))];
  }
}
