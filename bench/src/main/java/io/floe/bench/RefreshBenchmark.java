package io.floe.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.StructField;

/**
 * Refresh benchmark: incremental against full refresh of the seed's Silver and Gold MVs over a
 * generated ride-sharing Bronze table of 1M and 10M rows, after 0.1% mixed deltas (inserts,
 * updates, deletes). Not a test: run it with {@code bench/run-refresh-benchmark}.
 *
 * <p>First, once, an unmeasured warm-up on a small Bronze ({@link #warmUp}). Per base size: generate
 * Bronze, create the MVs (their first, full refresh), then {@code reps} times (fresh 0.1% delta, incremental
 * Silver, incremental Gold), check both MVs against their definitions, then {@code reps} times a
 * FULL refresh of Silver and Gold at that same source state. Then an append-only delta (with a
 * MIN/MAX MV over Silver) and a delta of recent corrections (updates and deletes among the newest
 * 1% of trips, with a window MV keeping each trip's latest Bronze row), each refreshed
 * incrementally and then in full. Medians and minima of wall times, the
 * refresh rows, and where the time went (Spark stages by call site) go to {@code
 * bench/results/refresh-<timestamp>.txt} and {@code refresh-latest.txt}.
 */
public final class RefreshBenchmark {
  private static final String CATALOG = "lake";
  private static final double GOAL_SPEEDUP = 20.0;
  private static final double GOAL_GROWTH = 1.5;

  /** Relative trip count per hour of day 0..23 (the seed generator's rush hours). */
  private static final int[] HOUR_WEIGHTS = {1, 1, 1, 1, 1, 2, 4, 8, 10, 8, 6, 5, 6, 5, 5, 5, 6, 8, 10, 8, 6, 4, 2, 1};

  private final SparkSession spark;
  private final StageTimes stages = new StageTimes();

  private final Options options;
  private final Path file;
  private final List<SizeResult> results = new ArrayList<>();
  private final long started = System.nanoTime();

  private RefreshBenchmark(SparkSession spark, Options options) {
    this.spark = spark;
    this.options = options;
    String stamp = LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    this.file = options.resultsDir().resolve("refresh-" + stamp + ".txt");
    spark.sparkContext().addSparkListener(stages);
  }

  // ---------------------------------------------------------------------------------------------
  // Options and main

  private record Options(List<Long> sizes, List<Integer> repsList, Path resultsDir, int warmupCycles, int bronzeFormat) {
    /** Repetitions at the i-th size: one --reps value for all, or one per size. */
    int reps(int i) {
      return repsList.get(Math.min(i, repsList.size() - 1));
    }

    static Options parse(String[] args) {
      List<Long> sizes = List.of(1_000_000L, 10_000_000L);
      List<Integer> reps = List.of(3);
      Path results = Paths.get("bench", "results");
      int warmup = DEFAULT_WARMUP_CYCLES;
      int format = 3;
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        String value = null;
        int eq = arg.indexOf('=');
        if (arg.startsWith("--") && eq > 0) {
          value = arg.substring(eq + 1);
          arg = arg.substring(0, eq);
        }
        switch (arg) {
          case "--sizes" -> {
            String v = value != null ? value : args[++i];
            sizes = Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).map(RefreshBenchmark::parseSize).toList();
          }
          case "--reps" -> reps = Arrays.stream((value != null ? value : args[++i]).split(",")).map(String::trim).map(Integer::parseInt).toList();
          case "--results-dir" -> results = Paths.get(value != null ? value : args[++i]);
          case "--warmup-cycles" -> warmup = Integer.parseInt(value != null ? value : args[++i]);
          case "--bronze-format" -> format = Integer.parseInt(value != null ? value : args[++i]);
          case "-h", "--help" -> {
            System.out.println("usage: RefreshBenchmark [--sizes 1000000,10000000] [--reps 3 | --reps 3,1 (per size)] [--warmup-cycles "
                    + DEFAULT_WARMUP_CYCLES + "] [--bronze-format 3 | 2] [--results-dir bench/results]");
            System.exit(0);
          }
          default -> throw new IllegalArgumentException("Unknown option: " + args[i]);
        }
      }
      if (sizes.isEmpty() || reps.isEmpty() || reps.stream().anyMatch(r -> r < 1)) {
        throw new IllegalArgumentException("Need at least one size and one repetition");
      }
      if (warmup < 1) {
        throw new IllegalArgumentException("--warmup-cycles must be at least 1, not " + warmup);
      }
      if (format != 2 && format != 3) {
        throw new IllegalArgumentException("--bronze-format must be 2 or 3, not " + format);
      }
      return new Options(sizes, reps, results, warmup, format);
    }
  }

  static long parseSize(String s) {
    String v = s.toLowerCase(Locale.ROOT).replace("_", "");
    long factor = 1;
    if (v.endsWith("k")) {
      factor = 1_000;
      v = v.substring(0, v.length() - 1);
    } else if (v.endsWith("m")) {
      factor = 1_000_000;
      v = v.substring(0, v.length() - 1);
    }
    return Long.parseLong(v) * factor;
  }

  public static void main(String[] args) throws Exception {
    Options options = Options.parse(args);
    Path warehouse = Files.createTempDirectory("floe-bench-warehouse-");
    SparkSession spark = BenchRun.session("floe-refresh-benchmark", warehouse);
    String report;
    RefreshBenchmark bench = new RefreshBenchmark(spark, options);
    try {
      report = bench.run();
    } finally {
      spark.stop();
      deleteRecursively(warehouse);
    }
    bench.publish(report);
    System.out.println(report);
    System.out.println("Written to " + bench.file + " and " + options.resultsDir().resolve("refresh-latest.txt"));
  }

  // ---------------------------------------------------------------------------------------------
  // The run

  /** One measured refresh. */
  private record Measurement(
      String mv, String mode, int rep, double seconds, String refreshType, long rowsRead, long rowsWritten,
      long rowsRemoved, String reason, StageTimes.Breakdown breakdown, double jitSeconds, long codegenClasses) {}

  /** One applied delta. */
  private record Delta(int round, long inserted, long updated, long deleted, double seconds) {}

  /** Everything measured for one base size. */
  /** Everything measured for one base size so far (filled in as the run goes). */
  private static final class SizeResult {
    final long size;
    int bronzeFiles;
    double generateSeconds;
    double createSeconds;
    final List<Delta> deltas = new ArrayList<>();
    final List<Measurement> measurements = new ArrayList<>();
    final Map<String, String> checks = new LinkedHashMap<>();
    boolean complete;

    SizeResult(long size) {
      this.size = size;
    }

    long size() {
      return size;
    }

    int bronzeFiles() {
      return bronzeFiles;
    }

    double generateSeconds() {
      return generateSeconds;
    }

    double createSeconds() {
      return createSeconds;
    }

    List<Delta> deltas() {
      return deltas;
    }

    List<Measurement> measurements() {
      return measurements;
    }

    Map<String, String> checks() {
      return checks;
    }

    Delta appendDelta;
    Delta recentDelta;

    List<Measurement> of(String mv, String mode) {
      return measurements.stream().filter(m -> m.mv().equals(mv) && m.mode().equals(mode)).toList();
    }

    double median(String mv, String mode) {
      return RefreshBenchmark.median(of(mv, mode).stream().mapToDouble(Measurement::seconds).toArray());
    }

    double min(String mv, String mode) {
      return of(mv, mode).stream().mapToDouble(Measurement::seconds).min().orElse(Double.NaN);
    }
  }

  private String run() {
    warmUp();
    for (int i = 0; i < options.sizes().size(); i++) {
      SizeResult result = new SizeResult(options.sizes().get(i));
      results.add(result);
      runSize(result, options.reps(i));
      result.complete = true;
    }
    return report(options, results, (System.nanoTime() - started) / 60e9, false);
  }

  /**
   * Incremental cycles of the warm-up. The JVM compiles the code a refresh runs over many refreshes,
   * not one: measured over a 10M-row Bronze, the JIT compilers spent 6.8, 4.8, 3.7 and 3.9 s of CPU
   * during the second to fifth incremental Silver refreshes of a JVM, on two cores, and still about
   * 1 s by the twelfth, while that refresh's wall time fell from 6.0 s to 2.9-3.1 s.
   */
  static final int DEFAULT_WARMUP_CYCLES = 12;

  /**
   * Warm-up, unmeasured, so that JIT compilation, Spark's code generation and start-up do not count:
   * a 20,000-row Bronze with both MVs, {@code --warmup-cycles} cycles of a 0.1% delta and both
   * incremental refreshes, then one full cycle. Each measured refresh reports the JIT compilers'
   * time during it, which shows how far the warm-up went.
   */
  private void warmUp() {
    long n = 20_000;
    String db = CATALOG + ".urbanride_warmup";
    progress("=== warm-up on " + n + " rows (not measured)");
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + db);
    spark.sql(
        "CREATE TABLE " + db + ".trips_bronze (" + TRIPS_DDL + ") USING iceberg TBLPROPERTIES ("
            + "'format-version'='" + options.bronzeFormat() + "','write.delete.mode'='merge-on-read',"
            + "'write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read')");
    append(db + ".trips_bronze", trips(spark, 0, n, 42, 2));
    spark.sql(silverSql(db));
    spark.sql(goldSql(db));
    long[] nextId = {n};
    for (int cycle = 1; cycle <= options.warmupCycles(); cycle++) {
      applyDelta(db + ".trips_bronze", n, cycle, 0.001, nextId);
      refresh(db + ".mv_trips_silver", "silver", "warm-up", cycle, false);
      refresh(db + ".mv_city_daily_metrics", "gold", "warm-up", cycle, false);
    }
    refresh(db + ".mv_trips_silver", "silver", "warm-up", 0, true);
    refresh(db + ".mv_city_daily_metrics", "gold", "warm-up", 0, true);
  }

  /** Writes the report so far, so a run stopped part-way still leaves its figures. */
  private void checkpoint() {
    try {
      publish(report(options, results, (System.nanoTime() - started) / 60e9, true));
    } catch (IOException | RuntimeException e) {
      progress("could not write the partial report: " + e);
    }
  }

  private void publish(String report) throws IOException {
    Files.createDirectories(options.resultsDir());
    Files.writeString(file, report, StandardCharsets.UTF_8);
    Files.writeString(options.resultsDir().resolve("refresh-latest.txt"), report, StandardCharsets.UTF_8);
  }

  private void runSize(SizeResult result, int reps) {
    long n = result.size;
    String db = CATALOG + ".urbanride_" + n;
    String bronze = db + ".trips_bronze";
    String silver = db + ".mv_trips_silver";
    String gold = db + ".mv_city_daily_metrics";
    progress("=== base size " + n + " rows (namespace " + db + ")");
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + db);

    long t = System.nanoTime();
    spark.sql(
        "CREATE TABLE " + bronze + " (" + TRIPS_DDL + ") USING iceberg TBLPROPERTIES ("
            + "'format-version'='" + options.bronzeFormat() + "','write.delete.mode'='merge-on-read',"
            + "'write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read')");
    int partitions = (int) Math.max(2, (n + 999_999) / 1_000_000);
    append(bronze, trips(spark, 0, n, 42, partitions));
    double generateSeconds = seconds(t);
    int bronzeFiles = dataFiles(bronze);
    result.generateSeconds = generateSeconds;
    result.bronzeFiles = bronzeFiles;
    progress(String.format(Locale.ROOT, "Bronze: %d rows in %d data files, %.1f s", n, bronzeFiles, generateSeconds));

    t = System.nanoTime();
    spark.sql(silverSql(db));
    spark.sql(goldSql(db));
    double createSeconds = seconds(t);
    result.createSeconds = createSeconds;
    checkpoint();
    progress(String.format(Locale.ROOT, "Created Silver and Gold MVs (first full refresh), %.1f s", createSeconds));

    long[] nextId = {n};
    List<Delta> deltas = result.deltas;
    List<Measurement> measurements = result.measurements;


    for (int rep = 1; rep <= reps; rep++) {
      Delta delta = applyDelta(bronze, n, rep, 0.001, nextId);
      deltas.add(delta);
      progress("delta " + rep + ": " + delta);
      measurements.add(refresh(silver, "silver", "incremental", rep, false));
      checkpoint();
      measurements.add(refresh(gold, "gold", "incremental", rep, false));
      checkpoint();
    }

    Map<String, String> checks = result.checks;
    checks.put("silver", check(spark, silver, silverDefinition(db)));
    checks.put("gold", check(spark, gold, goldDefinition(db)));
    checkpoint();

    for (int rep = 1; rep <= reps; rep++) {
      measurements.add(refresh(silver, "silver", "full", rep, true));
      checkpoint();
      measurements.add(refresh(gold, "gold", "full", rep, true));
      checkpoint();
    }
    // Append-only: the common Bronze pattern. A MIN/MAX MV over Silver joins Silver and Gold.
    String extremes = db + ".mv_city_daily_extremes";
    spark.sql("CREATE MATERIALIZED VIEW " + extremes + " AS " + extremesDefinition(db));
    checkpoint();
    long appended = Math.max(1, Math.round(n * 0.001));
    t = System.nanoTime();
    append(bronze, trips(spark, nextId[0], appended, 3000, 1));
    nextId[0] += appended;
    result.appendDelta = new Delta(0, appended, 0, 0, seconds(t));
    progress("append-only delta: " + result.appendDelta);
    for (String[] mv : new String[][] {{silver, "silver"}, {gold, "gold"}, {extremes, "extremes"}}) {
      measurements.add(refresh(mv[0], mv[1], "append", 1, false));
      checkpoint();
    }
    checks.put("extremes", check(spark, extremes, extremesDefinition(db)));
    measurements.add(refresh(extremes, "extremes", "append-full", 1, true));
    checkpoint();

    // Recent corrections: the same mix as the deltas above, its updates and deletes among the most
    // recent 1% of trips, as late fixes to trips in progress arrive. A window MV keyed by trip
    // recomputes the trips the change touches, reading the Bronze files holding them.
    String latest = db + ".mv_trips_latest";
    spark.sql("CREATE MATERIALIZED VIEW " + latest + " AS " + latestDefinition(db));
    checkpoint();
    result.recentDelta = applyRecentDelta(bronze, n, 0.001, nextId);
    progress("recent-corrections delta: " + result.recentDelta);
    String[][] corrected = {{silver, "silver"}, {gold, "gold"}, {latest, "latest"}};
    for (String[] mv : corrected) {
      measurements.add(refresh(mv[0], mv[1], "recent", 1, false));
      checkpoint();
    }
    checks.put("silver after recent corrections", check(spark, silver, silverDefinition(db)));
    checks.put("gold after recent corrections", check(spark, gold, goldDefinition(db)));
    checks.put("latest after recent corrections", check(spark, latest, latestDefinition(db)));
    for (String[] mv : corrected) {
      measurements.add(refresh(mv[0], mv[1], "recent-full", 1, true));
      checkpoint();
    }

    // Free the disk before the next size: the warehouse is deleted at the end anyway.
    for (String mv : List.of(latest, extremes, gold, silver)) {
      try {
        spark.sql("DROP MATERIALIZED VIEW IF EXISTS " + mv);
      } catch (RuntimeException e) {
        progress("could not drop " + mv + ": " + e.getMessage());
      }
    }
    try {
      spark.sql("DROP TABLE IF EXISTS " + bronze + " PURGE");
    } catch (RuntimeException e) {
      progress("could not drop " + bronze + ": " + e.getMessage());
    }
  }

  private Measurement refresh(String mv, String label, String mode, int rep, boolean full) {
    stages.start();
    long jit = jitMillis();
    long compiled = codegenCompilations();
    long t = System.nanoTime();
    Row row = spark.sql("REFRESH MATERIALIZED VIEW " + mv + (full ? " FULL" : "")).collectAsList().get(0);
    double s = seconds(t);
    double jitSeconds = jit < 0 ? Double.NaN : (jitMillis() - jit) / 1e3;
    long codegenClasses = codegenCompilations() - compiled;
    StageTimes.Breakdown breakdown = stages.stop(s);
    Measurement m =
        new Measurement(
            label, mode, rep, s, row.getAs("refresh_type"), row.<Long>getAs("rows_read"), row.<Long>getAs("rows_written"),
            row.<Long>getAs("rows_removed"), row.getAs("reason"), breakdown, jitSeconds, codegenClasses);
    progress(String.format(
        Locale.ROOT, "%-6s %-11s #%d: %7.2f s  %s read=%d written=%d removed=%d jit=%.2f s codegen=%d (%s)",
        label, mode, rep, s, m.refreshType(), m.rowsRead(), m.rowsWritten(), m.rowsRemoved(), jitSeconds, codegenClasses,
        m.reason()));
    return m;
  }

  /** One figure of each run, in seconds to two decimals, space-separated. */
  private static String figures(List<Measurement> runs, java.util.function.ToDoubleFunction<Measurement> figure) {
    return runs.stream().map(m -> String.format(Locale.ROOT, "%.2f", figure.applyAsDouble(m))).collect(Collectors.joining(" "));
  }

  /**
   * How many times Spark has compiled generated code so far in this JVM: each is a plan whose
   * generated source was not in Spark's code cache, and whose new classes the JIT compiles anew.
   */
  private static long codegenCompilations() {
    return org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME().getCount();
  }

  /**
   * The JIT compilers' total time so far in this JVM, in milliseconds (all compiler threads), or -1
   * when the JVM does not measure it.
   */
  private static long jitMillis() {
    CompilationMXBean compilation = ManagementFactory.getCompilationMXBean();
    return compilation != null && compilation.isCompilationTimeMonitoringSupported()
        ? compilation.getTotalCompilationTime()
        : -1;
  }

  // ---------------------------------------------------------------------------------------------
  // Data

  static final String TRIPS_DDL =
      "trip_id STRING, driver_id STRING, rider_id STRING, city STRING, vehicle_type STRING, pickup_lat DOUBLE,"
          + " pickup_lon DOUBLE, dropoff_lat DOUBLE, dropoff_lon DOUBLE, trip_start_time STRING, trip_end_time STRING,"
          + " duration_minutes INT, distance_miles DOUBLE, surge_multiplier DOUBLE, base_fare DOUBLE, trip_fare DOUBLE,"
          + " tip_amount DOUBLE, total_amount DOUBLE, payment_method STRING, rating INT, status STRING";

  /**
   * Trips with ids {@code start+1 .. start+count}, the shape of the seed's generator (four cities,
   * four vehicle types, 3 days of 2025-12-01.., rush hours, surge, one in three cancelled), each
   * value a deterministic hash of the row id and {@code seed}: the same arguments give the same rows
   * whatever the partitioning.
   */
  static Dataset<Row> trips(SparkSession spark, long start, long count, long seed, int partitions) {
    String hours =
        IntStream.range(0, 24).boxed()
            .flatMap(h -> IntStream.range(0, HOUR_WEIGHTS[h]).mapToObj(i -> String.valueOf(h)))
            .collect(Collectors.joining(","));
    int hourSlots = Arrays.stream(HOUR_WEIGHTS).sum();
    Dataset<Row> ids = spark.range(start, start + count, 1, partitions).toDF("id");
    Dataset<Row> draws =
        ids.selectExpr(
            "id",
            "CAST(floor(" + u(seed, 1) + " * 4) AS INT) AS ci",
            "CAST(floor(" + u(seed, 2) + " * 4) AS INT) AS vi",
            "CAST(5 + floor(" + u(seed, 3) + " * 41) AS INT) AS duration_minutes",
            "round(1.0D + " + u(seed, 4) + " * 19.0D, 1) AS distance_miles",
            u(seed, 5) + " AS surge_u",
            "round(1.0D + " + u(seed, 6) + " * 1.5D, 1) AS surge_v",
            "CAST(floor(" + u(seed, 7) + " * 6) AS INT) AS tip_i",
            "CAST(floor(" + u(seed, 8) + " * 6) AS INT) AS status_i",
            "CAST(floor(" + u(seed, 9) + " * 3) AS INT) AS day",
            "element_at(array(" + hours + "), CAST(floor(" + u(seed, 10) + " * " + hourSlots + ") AS INT) + 1) AS hour",
            "CAST(floor(" + u(seed, 11) + " * 60) AS INT) AS minute",
            "CAST(1000 + floor(" + u(seed, 12) + " * 4001) AS INT) AS drv",
            "CAST(10000 + floor(" + u(seed, 13) + " * 90000) AS INT) AS rdr",
            u(seed, 14) + " AS plat_u",
            u(seed, 15) + " AS plon_u",
            u(seed, 16) + " AS dlat_u",
            u(seed, 17) + " AS dlon_u",
            "CAST(floor(" + u(seed, 18) + " * 5) AS INT) AS pay_i",
            "CAST(floor(" + u(seed, 19) + " * 7) AS INT) AS rating_i");
    Dataset<Row> priced =
        draws.selectExpr(
            "*",
            "element_at(array('San Francisco','Austin','Chicago','Seattle'), ci + 1) AS city",
            "element_at(array('UberX','Comfort','XL','Black'), vi + 1) AS vehicle_type",
            "element_at(array(37.70D,30.22D,41.85D,47.55D), ci + 1) AS lat_min",
            "element_at(array(37.82D,30.40D,41.95D,47.68D), ci + 1) AS lat_max",
            "element_at(array(-122.52D,-97.80D,-87.70D,-122.40D), ci + 1) AS lon_min",
            "element_at(array(-122.38D,-97.68D,-87.60D,-122.28D), ci + 1) AS lon_max",
            "IF(surge_u < element_at(array(0.3D,0.15D,0.2D,0.25D), ci + 1), surge_v, 1.0D) AS surge_multiplier",
            "element_at(array(2.50D,3.50D,4.00D,7.00D), vi + 1) AS base_fare",
            "element_at(array(1.75D,2.25D,2.50D,3.75D), vi + 1) AS per_mile",
            "element_at(array(0.35D,0.45D,0.50D,0.65D), vi + 1) AS per_minute",
            "unix_seconds(TIMESTAMP'2025-12-01 00:00:00') + day * 86400L + hour * 3600L + minute * 60L AS start_s");
    Dataset<Row> fared =
        priced.selectExpr(
            "*",
            "round((base_fare + distance_miles * per_mile + duration_minutes * per_minute) * surge_multiplier, 2) AS trip_fare");
    Dataset<Row> tipped =
        fared.selectExpr(
            "*",
            "round(trip_fare * element_at(array(0.0D,0.0D,0.1D,0.15D,0.2D,0.25D), tip_i + 1), 2) AS tip_amount",
            "element_at(array('completed','completed','completed','completed','cancelled_rider','cancelled_driver'),"
                + " status_i + 1) AS status");
    return tipped.selectExpr(
        "concat('TRIP-', lpad(CAST(id + 1 AS STRING), 9, '0')) AS trip_id",
        "concat('DRV-', CAST(drv AS STRING)) AS driver_id",
        "concat('RDR-', CAST(rdr AS STRING)) AS rider_id",
        "city",
        "vehicle_type",
        "round(lat_min + plat_u * (lat_max - lat_min), 6) AS pickup_lat",
        "round(lon_min + plon_u * (lon_max - lon_min), 6) AS pickup_lon",
        "round(lat_min + dlat_u * (lat_max - lat_min), 6) AS dropoff_lat",
        "round(lon_min + dlon_u * (lon_max - lon_min), 6) AS dropoff_lon",
        "date_format(timestamp_seconds(start_s), \"yyyy-MM-dd'T'HH:mm:ss\") AS trip_start_time",
        "date_format(timestamp_seconds(start_s + duration_minutes * 60L), \"yyyy-MM-dd'T'HH:mm:ss\") AS trip_end_time",
        "duration_minutes",
        "distance_miles",
        "surge_multiplier",
        "base_fare",
        "trip_fare",
        "tip_amount",
        "round(trip_fare + tip_amount, 2) AS total_amount",
        "element_at(array('credit_card','debit_card','apple_pay','google_pay','cash'), pay_i + 1) AS payment_method",
        "IF(status = 'completed', element_at(array(CAST(NULL AS INT),3,4,4,5,5,5), rating_i + 1), CAST(NULL AS INT)) AS rating",
        "status");
  }

  /** A uniform draw in [0, 1) from the row id, the seed and the draw number. */
  private static String u(long seed, int draw) {
    return "(CAST(pmod(xxhash64(id, " + (seed * 1000 + draw) + "L), 1000000007L) AS DOUBLE) / 1000000007.0D)";
  }

  private void append(String table, Dataset<Row> rows) {
    try {
      rows.writeTo(table).append();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot append to " + table + ": " + e.getMessage(), e);
    }
  }

  /**
   * A mixed delta of {@code fraction} of {@code n}: half inserts of new trips, 30% updates of tip
   * and total, 20% deletes, rows picked by a hash of trip_id (spread over the whole table).
   */
  private Delta applyDelta(String bronze, long n, int round, double fraction, long[] nextId) {
    return applyDelta(bronze, n, round, fraction, nextId, "TRUE", n, round);
  }

  /**
   * A mixed delta of {@code fraction} of {@code n} like {@link #applyDelta}, its updates and deletes
   * picked among the most recent 1% of trip ids (the last {@code n / 100} ids written).
   */
  private Delta applyRecentDelta(String bronze, long n, double fraction, long[] nextId) {
    long window = Math.max(1, n / 100);
    String recent = String.format(Locale.ROOT, "trip_id > 'TRIP-%09d'", nextId[0] - window);
    return applyDelta(bronze, n, 0, fraction, nextId, recent, window, 500);
  }

  /**
   * Appends {@code fraction * n / 2} new trips, then updates tip and total of {@code 0.3 * fraction
   * * n} and deletes {@code 0.2 * fraction * n} of the {@code windowRows} trips matching {@code
   * window}, picked by hashes of trip_id seeded with {@code seed}.
   */
  private Delta applyDelta(
      String bronze, long n, int round, double fraction, long[] nextId, String window, long windowRows, int seed) {
    long t = System.nanoTime();
    long inserts = Math.max(1, Math.round(n * fraction * 0.5));
    append(bronze, trips(spark, nextId[0], inserts, 1000 + seed, 1));
    nextId[0] += inserts;
    // Per 10^7 rows of the window: updates 0.3 * fraction * n / windowRows, deletes 0.2 * that.
    double share = fraction * n / windowRows;
    long updateSlots = Math.max(1, Math.round(10_000_000 * share * 0.3));
    long deleteSlots = Math.max(1, Math.round(10_000_000 * share * 0.2));
    spark.sql(
        "UPDATE " + bronze + " SET tip_amount = round(tip_amount + 1.5D, 2), total_amount = round(total_amount + 1.5D, 2)"
            + " WHERE " + window + " AND pmod(xxhash64(trip_id, " + (7000 + seed) + "L), 10000000L) < " + updateSlots);
    long updated = summary(bronze, "added-records");
    long deleted = delete(bronze, window + " AND pmod(xxhash64(trip_id, " + (9000 + seed) + "L), 10000000L) < " + deleteSlots);
    return new Delta(round, inserts, updated, deleted, seconds(t));
  }

  /**
   * Deletes the rows matching {@code predicate} and returns how many there were, counted first:
   * a merge-on-read DELETE's summary counts the positions of every delete file it writes, those
   * its data files had already lost included.
   */
  private long delete(String table, String predicate) {
    long rows = spark.sql("SELECT count(*) FROM " + table + " WHERE " + predicate).first().getLong(0);
    spark.sql("DELETE FROM " + table + " WHERE " + predicate);
    return rows;
  }

  private Table icebergTable(String name) {
    try {
      return Spark3Util.loadIcebergTable(spark, name);
    } catch (Exception e) {
      throw new IllegalStateException("Cannot load " + name + ": " + e.getMessage(), e);
    }
  }

  private long summary(String table, String key) {
    Snapshot current = icebergTable(table).currentSnapshot();
    String v = current == null ? null : current.summary().get(key);
    return v == null ? 0 : Long.parseLong(v);
  }

  private int dataFiles(String table) {
    return (int) summary(table, "total-data-files");
  }

  // ---------------------------------------------------------------------------------------------
  // The seed's MVs (RideSharingStory, the blog post's SQL with the catalog name changed)

  static String silverSql(String db) {
    return "CREATE MATERIALIZED VIEW IF NOT EXISTS "
        + db
        + ".mv_trips_silver\n"
        + "COMMENT 'Silver layer: Cleaned trip data with proper types and derived columns'\n"
        + "SCHEDULE REFRESH EVERY 1 DAY\n"
        + "AS\n"
        + silverDefinition(db);
  }

  static String silverDefinition(String db) {
    return "SELECT\n"
        + "trip_id, driver_id, rider_id, city, vehicle_type,\n"
        + "pickup_lat, pickup_lon, dropoff_lat, dropoff_lon,\n"
        + "CAST(trip_start_time AS TIMESTAMP) as trip_start_timestamp,\n"
        + "CAST(trip_end_time AS TIMESTAMP) as trip_end_timestamp,\n"
        + "duration_minutes, distance_miles, surge_multiplier,\n"
        + "base_fare, trip_fare, tip_amount, total_amount,\n"
        + "payment_method, rating, status,\n"
        + "CASE WHEN distance_miles > 0 THEN total_amount / distance_miles ELSE 0 END as revenue_per_mile,\n"
        + "CASE WHEN rating >= 4 THEN 'High' WHEN rating >= 3 THEN 'Medium' ELSE 'Low' END as rating_category\n"
        + "FROM "
        + db
        + ".trips_bronze\n"
        + "WHERE trip_id IS NOT NULL AND driver_id IS NOT NULL AND rider_id IS NOT NULL\n"
        + "AND total_amount >= 0 AND distance_miles >= 0";
  }

  static String goldSql(String db) {
    return "CREATE MATERIALIZED VIEW IF NOT EXISTS "
        + db
        + ".mv_city_daily_metrics\n"
        + "COMMENT 'Gold layer: Daily aggregated metrics by city'\n"
        + "SCHEDULE REFRESH EVERY 1 DAY\n"
        + "AS\n"
        + goldDefinition(db);
  }

  static String goldDefinition(String db) {
    return "SELECT\n"
        + "city, DATE(trip_start_timestamp) as trip_date,\n"
        + "COUNT(*) as total_trips,\n"
        + "COUNT(DISTINCT driver_id) as active_drivers,\n"
        + "COUNT(DISTINCT rider_id) as active_riders,\n"
        + "SUM(total_amount) as total_revenue,\n"
        + "SUM(distance_miles) as total_distance,\n"
        + "SUM(tip_amount) as total_tips\n"
        + "FROM "
        + db
        + ".mv_trips_silver\n"
        + "WHERE status = 'completed'\n"
        + "GROUP BY city, DATE(trip_start_timestamp)";
  }

  /**
   * Each trip's latest Bronze row (the deduplication a Silver layer does when Bronze may hold a trip
   * twice): a window partitioned by trip, recomputed for the trips a change touches.
   */
  private static String latestDefinition(String db) {
    return "SELECT trip_id, driver_id, rider_id, city, trip_start_time, trip_end_time, total_amount, status FROM ("
        + "SELECT *, row_number() OVER (PARTITION BY trip_id ORDER BY trip_end_time DESC, total_amount DESC) AS rn"
        + " FROM " + db + ".trips_bronze) WHERE rn = 1";
  }

  /** MIN and MAX per city and day over Silver: maintained from the change unless an extreme is deleted. */
  private static String extremesDefinition(String db) {
    return "SELECT city, DATE(trip_start_timestamp) AS trip_date, COUNT(*) AS trips,"
        + " MIN(total_amount) AS lowest_total, MAX(total_amount) AS highest_total, MAX(trip_end_timestamp) AS last_trip_end"
        + " FROM " + db + ".mv_trips_silver GROUP BY city, DATE(trip_start_timestamp)";
  }

  // ---------------------------------------------------------------------------------------------
  // Correctness

  /**
   * The MV against its definition computed now: EXCEPT ALL both ways, DOUBLEs rounded to 9
   * significant digits. A sum of millions of DOUBLEs depends on the order Spark adds them in, which
   * changes from one evaluation to the next, in the last digits; one trip more or less in a sum of
   * a city's day changes its seventh.
   */
  static String check(SparkSession spark, String mv, String definition) {
    long t = System.nanoTime();
    List<String> columns = new ArrayList<>();
    for (StructField field : spark.table(mv).schema().fields()) {
      String q = "`" + field.name().replace("`", "``") + "`";
      String exponent = "power(10D, floor(log10(abs(" + q + "))))";
      columns.add(
          field.dataType() instanceof DoubleType
              ? "CASE WHEN " + q + " = 0 OR isnan(" + q + ") THEN " + q + " ELSE round(" + q + " / " + exponent + ", 8) * " + exponent + " END AS " + q
              : q);
    }
    String select = "SELECT " + String.join(", ", columns);
    String stored = select + " FROM " + mv;
    String computed = select + " FROM (" + definition + ") AS __definition";
    long extra = spark.sql(stored + " EXCEPT ALL " + computed).count();
    long missing = spark.sql(computed + " EXCEPT ALL " + stored).count();
    long rows = spark.table(mv).count();
    String verdict =
        (extra == 0 && missing == 0 ? "PASS" : "FAIL")
            + String.format(Locale.ROOT, " (%d rows; %d rows only in the MV, %d only in the definition; %.1f s)", rows, extra, missing, seconds(t));
    progress("check " + mv + ": " + verdict);
    return verdict;
  }

  // ---------------------------------------------------------------------------------------------
  // Report

  private String report(Options options, List<SizeResult> results, double totalMinutes, boolean partial) {
    StringBuilder r = new StringBuilder();
    String now = LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_LOCAL_DATE_TIME).substring(0, 19);
    r.append("Floe refresh benchmark: incremental vs full refresh of the seed's Silver and Gold MVs\n");
    if (partial) {
      r.append("PARTIAL REPORT: written while the run was in progress; it stopped before finishing (sizes or runs\n");
      r.append("missing below were not measured).\n");
    }
    r.append("Run ").append(now).append(" UTC, ").append(String.format(Locale.ROOT, "%.1f", totalMinutes)).append(" min in total\n\n");
    r.append("Machine\n");
    r.append("  cores (JVM)      ").append(Runtime.getRuntime().availableProcessors()).append(cpuModel().map(m -> ", " + m).orElse("")).append('\n');
    r.append("  max heap         ").append(String.format(Locale.ROOT, "%.1f GiB", Runtime.getRuntime().maxMemory() / 1073741824.0)).append('\n');
    r.append("  physical memory  ").append(memTotal().orElse("unknown")).append('\n');
    r.append("  Java             ").append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.version")).append('\n');
    r.append("  OS               ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version")).append(' ').append(System.getProperty("os.arch")).append('\n');
    r.append("  Spark            ").append(spark.version()).append(", master ").append(spark.sparkContext().master())
        .append(", spark.sql.shuffle.partitions=").append(spark.conf().get("spark.sql.shuffle.partitions"))
        .append(", spark.sql.adaptive.enabled=").append(spark.conf().get("spark.sql.adaptive.enabled")).append('\n');
    r.append("  ").append(BenchRun.givenSettingsLine()).append('\n');
    r.append("  Iceberg          ").append(org.apache.iceberg.IcebergBuild.version()).append(", JDBC catalog on SQLite, local file system\n\n");

    r.append("Workload\n");
    r.append("  Bronze: generated ride-sharing trips (seeded), Iceberg format v" + options.bronzeFormat()
        + ", merge-on-read deletes/updates/merges" + (options.bronzeFormat() >= 3
            ? " (deletion vectors, row lineage)" : "") + ".\n");
    r.append("  MV storage: Floe's defaults (Iceberg format v3: a refresh's deletes are deletion vectors).\n");
    r.append("  Silver MV: the seed's mv_trips_silver (filters, CASTs, CASE columns) over Bronze.\n");
    r.append("  Gold MV:   the seed's mv_city_daily_metrics (GROUP BY city, DATE(trip_start_timestamp);\n");
    r.append("             COUNT(*), COUNT(DISTINCT driver_id), COUNT(DISTINCT rider_id), 3 SUMs) over Silver.\n");
    r.append("  Delta (each repetition, fresh): 0.1% of N = inserts 0.05% + UPDATE tip/total 0.03% + DELETE 0.02%,\n");
    r.append("  updated/deleted rows picked by a hash of trip_id (spread over the table). Warm-up (once, before the first\n");
    r.append("  size): a 20,000-row Bronze with both MVs, " + options.warmupCycles() + " cycles of a 0.1% delta and both incremental refreshes,\n");
    r.append("  then one full cycle.\n");
    r.append("  Incremental: R x (delta; REFRESH silver; REFRESH gold).\n");
    r.append("  Then the check, then full: R x (REFRESH silver FULL; REFRESH gold FULL) at that same source state.\n");
    r.append("  R per size: ")
        .append(IntStream.range(0, options.sizes().size()).mapToObj(i -> String.format(Locale.ROOT, "%,d rows: %d", options.sizes().get(i), options.reps(i))).collect(Collectors.joining(", ")))
        .append("\n");
    r.append("  Times are wall-clock seconds of the REFRESH statement; jit is the CPU time the JVM's JIT compilers\n");
    r.append("  spent during it (all compiler threads; on a machine of few cores, CPU the refresh's own threads lost);\n");
    r.append("  codegen (in the per-run detail) is how many times Spark compiled generated code during it, each a plan\n");
    r.append("  whose generated source its code cache did not hold.\n\n");

    r.append("Results (seconds; median and min of the R runs of each size)\n");
    String header = String.format(Locale.ROOT, "  %-11s %-7s %-12s %8s %8s  %-26s %-12s %11s %9s %9s  %s%n",
        "base rows", "MV", "refresh", "median", "min", "runs", "refresh_type", "rows_read", "written", "removed", "jit of the runs");
    r.append(header);
    r.append("  ").append("-".repeat(header.length() - 3)).append('\n');
    for (SizeResult s : results) {
      for (String mv : List.of("silver", "gold")) {
        for (String mode : List.of("incremental", "full")) {
          List<Measurement> ms = s.of(mv, mode);
          if (ms.isEmpty()) {
            r.append(String.format(Locale.ROOT, "  %-11s %-7s %-12s   not measured%n", String.format(Locale.ROOT, "%,d", s.size()), mv, mode));
            continue;
          }
          String runs = figures(ms, Measurement::seconds);
          String types = ms.stream().map(Measurement::refreshType).distinct().collect(Collectors.joining("/"));
          Measurement last = ms.get(ms.size() - 1);
          String jit = figures(ms, Measurement::jitSeconds);
          r.append(String.format(Locale.ROOT, "  %-11s %-7s %-12s %8.2f %8.2f  %-26s %-12s %11d %9d %9d  %s%n",
              String.format(Locale.ROOT, "%,d", s.size()), mv, mode, s.median(mv, mode), s.min(mv, mode), runs, types,
              last.rowsRead(), last.rowsWritten(), last.rowsRemoved(), jit));
        }
        r.append(String.format(Locale.ROOT, "  %-11s %-7s %-12s %8.1fx (full median / incremental median)%n",
            "", mv, "speed-up", s.median(mv, "full") / s.median(mv, "incremental")));
      }
      double incr = s.median("silver", "incremental") + s.median("gold", "incremental");
      double full = s.median("silver", "full") + s.median("gold", "full");
      r.append(String.format(Locale.ROOT, "  %-11s %-7s %-12s %8.2f incremental vs %.2f full: %.1fx%n%n",
          "", "both", "pipeline", incr, full, full / incr));
    }

    r.append("Append-only delta (after the runs above): 0.1% of N new trips appended to Bronze, nothing updated or\n");
    r.append("deleted; then REFRESH silver, gold and mv_city_daily_extremes (GROUP BY city, day over Silver; COUNT,\n");
    r.append("MIN and MAX), created just before the append; then that MV's full refresh for comparison\n");
    for (SizeResult s : results) {
      for (String[] row : new String[][] {{"silver", "append"}, {"gold", "append"}, {"extremes", "append"}, {"extremes", "append-full"}}) {
        for (Measurement m : s.of(row[0], row[1])) {
          r.append(String.format(Locale.ROOT, "  %-11s %-9s %-12s %8.2f s  %-12s read=%d written=%d removed=%d%n",
              String.format(Locale.ROOT, "%,d", s.size()), row[0], row[1].equals("append") ? "incremental" : "full",
              m.seconds(), m.refreshType(), m.rowsRead(), m.rowsWritten(), m.rowsRemoved()));
        }
      }
      double appendIncr = s.median("extremes", "append");
      double appendFull = s.median("extremes", "append-full");
      if (!Double.isNaN(appendIncr) && !Double.isNaN(appendFull)) {
        r.append(String.format(Locale.ROOT, "  %-11s %-9s %-12s %8.1fx (full / incremental)%n", "", "extremes", "speed-up", appendFull / appendIncr));
      }
    }
    r.append('\n');

    r.append("Recent corrections (after the append): 0.1% of N = inserts 0.05% + UPDATE 0.03% + DELETE 0.02%, the\n");
    r.append("updated and deleted trips picked among the most recent 1% of trip ids; then REFRESH silver, gold and\n");
    r.append("mv_trips_latest (each trip's latest Bronze row: row_number() OVER (PARTITION BY trip_id ...) = 1, created\n");
    r.append("just before the delta), the checks, and all three FULL at that same source state\n");
    for (SizeResult s : results) {
      if (s.recentDelta != null) {
        Delta d = s.recentDelta;
        r.append(String.format(Locale.ROOT, "  %-11s delta: +%d inserted, %d updated, %d deleted%n",
            String.format(Locale.ROOT, "%,d", s.size()), d.inserted(), d.updated(), d.deleted()));
      }
      for (String mv : List.of("silver", "gold", "latest")) {
        for (String mode : List.of("recent", "recent-full")) {
          for (Measurement m : s.of(mv, mode)) {
            r.append(String.format(Locale.ROOT, "  %-11s %-9s %-12s %8.2f s  %-12s read=%d written=%d removed=%d%n",
                String.format(Locale.ROOT, "%,d", s.size()), mv, mode.equals("recent") ? "incremental" : "full",
                m.seconds(), m.refreshType(), m.rowsRead(), m.rowsWritten(), m.rowsRemoved()));
          }
        }
        double incremental = s.median(mv, "recent");
        double full = s.median(mv, "recent-full");
        if (!Double.isNaN(incremental) && !Double.isNaN(full)) {
          r.append(String.format(Locale.ROOT, "  %-11s %-9s %-12s %8.1fx (full / incremental)%n", "", mv, "speed-up", full / incremental));
        }
      }
    }
    r.append('\n');

    r.append("Per-run detail (rows_read/written/removed as the REFRESH row reports them)\n");
    for (SizeResult s : results) {
      r.append(String.format(Locale.ROOT, "  N=%,d: Bronze generated and written in %.1f s (%d data files); MVs created in %.1f s%n",
          s.size(), s.generateSeconds(), s.bronzeFiles(), s.createSeconds()));
      for (Delta d : s.deltas()) {
        r.append(String.format(Locale.ROOT, "    delta %d: +%d inserted, %d updated, %d deleted (applied in %.1f s)%n",
            d.round(), d.inserted(), d.updated(), d.deleted(), d.seconds()));
      }
      for (Measurement m : s.measurements()) {
        r.append(String.format(Locale.ROOT,
            "    %-6s %-11s #%d %8.2f s  %-11s read=%d written=%d removed=%d jit=%.2f s codegen=%d  [%s]%n",
            m.mv(), m.mode(), m.rep(), m.seconds(), m.refreshType(), m.rowsRead(), m.rowsWritten(), m.rowsRemoved(), m.jitSeconds(),
            m.codegenClasses(), m.reason()));
      }
      r.append("    correctness after the incremental refreshes:\n");
      s.checks().forEach((mv, verdict) -> r.append("      ").append(mv).append(": ").append(verdict).append('\n'));
    }
    r.append('\n');

    r.append("Where the time goes (last run of each; Spark stages by call site, wall seconds, AQE runs some stages\n");
    r.append("concurrently, so per-call-site sums can exceed the wall time;\n");
    r.append("'outside Spark stages' = planning, Iceberg metadata and catalog commits on the driver)\n");
    for (SizeResult s : results) {
      for (String mv : List.of("silver", "gold")) {
        for (String mode : List.of("incremental", "full")) {
          List<Measurement> ms = s.of(mv, mode);
          if (ms.isEmpty()) {
            continue;
          }
          Measurement last = ms.get(ms.size() - 1);
          r.append(String.format(Locale.ROOT, "  N=%,d %s %s (%.2f s):%n", s.size(), mv, mode, last.seconds()));
          r.append(last.breakdown().describe("    "));
        }
      }
    }
    r.append('\n');

    r.append("Goals\n");
    Optional<SizeResult> big = results.stream().filter(s -> s.size() == 10_000_000L).findFirst();
    Optional<SizeResult> small = results.stream().filter(s -> s.size() == 1_000_000L).findFirst();
    if (big.isPresent()) {
      SizeResult b = big.get();
      double silverSpeedup = b.median("silver", "full") / b.median("silver", "incremental");
      double goldSpeedup = b.median("gold", "full") / b.median("gold", "incremental");
      r.append(String.format(Locale.ROOT, "  1. incremental >= %.0fx faster than full at 10M rows: %s (silver %.1fx, gold %.1fx%s)%n",
          GOAL_SPEEDUP, verdict(silverSpeedup, goldSpeedup, x -> x >= GOAL_SPEEDUP), silverSpeedup, goldSpeedup,
          notIncremental(List.of(b), "incremental")));
    } else {
      r.append("  1. incremental >= 20x faster than full at 10M rows: not evaluated (no 10,000,000-row run)\n");
    }
    if (big.isPresent() && small.isPresent()) {
      double silverGrowth = big.get().median("silver", "incremental") / small.get().median("silver", "incremental");
      double goldGrowth = big.get().median("gold", "incremental") / small.get().median("gold", "incremental");
      r.append(String.format(Locale.ROOT, "  2. incremental time grows < %.1fx from 1M to 10M rows: %s (silver %.2fx, gold %.2fx%s)%n",
          GOAL_GROWTH, verdict(silverGrowth, goldGrowth, x -> x < GOAL_GROWTH), silverGrowth, goldGrowth,
          notIncremental(List.of(small.get(), big.get()), "incremental")));
    } else {
      r.append("  2. incremental time grows < 1.5x from 1M to 10M rows: not evaluated (needs both sizes)\n");
    }
    if (big.isPresent()) {
      SizeResult b = big.get();
      double silverSpeedup = b.median("silver", "recent-full") / b.median("silver", "recent");
      double goldSpeedup = b.median("gold", "recent-full") / b.median("gold", "recent");
      r.append(String.format(Locale.ROOT, "  1b. the same for the recent-corrections delta: %s (silver %.1fx, gold %.1fx%s)%n",
          verdict(silverSpeedup, goldSpeedup, x -> x >= GOAL_SPEEDUP), silverSpeedup, goldSpeedup,
          notIncremental(List.of(b), "recent")));
    }
    if (big.isPresent() && small.isPresent()) {
      double silverGrowth = big.get().median("silver", "recent") / small.get().median("silver", "recent");
      double goldGrowth = big.get().median("gold", "recent") / small.get().median("gold", "recent");
      r.append(String.format(Locale.ROOT, "  2b. the same for the recent-corrections delta: %s (silver %.2fx, gold %.2fx%s)%n",
          verdict(silverGrowth, goldGrowth, x -> x < GOAL_GROWTH), silverGrowth, goldGrowth,
          notIncremental(List.of(small.get(), big.get()), "recent")));
    }
    boolean allPass = results.stream().allMatch(s -> s.checks().values().stream().allMatch(v -> v.startsWith("PASS")));
    long checked = results.stream().mapToLong(s -> s.checks().size()).sum();
    r.append("  correctness of the incremental refreshes: ").append(allPass ? "PASS" : "FAIL")
        .append(" (").append(checked).append(" MV checks over ").append(results.stream().filter(s -> s.checks().size() >= 2).count())
        .append(" of ").append(results.size()).append(" sizes)\n");
    return r.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  /**
   * For a goal's figure: which of its "incremental" runs the AUTO policy ran in full (its size checks
   * judged a full refresh cheaper), so that a figure comparing such a run is not read as an
   * incremental refresh's; empty when every run was incremental.
   */
  private static String notIncremental(List<SizeResult> sizes, String mode) {
    List<String> notIncremental = new ArrayList<>();
    for (SizeResult s : sizes) {
      for (String mv : List.of("silver", "gold")) {
        List<Measurement> runs = s.of(mv, mode);
        List<String> types =
            runs.stream().map(Measurement::refreshType).filter(t -> !"INCREMENTAL".equals(t)).map(String::valueOf).toList();
        if (!types.isEmpty()) {
          notIncremental.add(String.format(Locale.ROOT, "%s %s at %,d rows (%d of %d runs)",
              String.join("/", new java.util.LinkedHashSet<>(types)), mv, s.size(), types.size(), runs.size()));
        }
      }
    }
    return notIncremental.isEmpty() ? "" : "; the AUTO refresh ran " + String.join(", ", notIncremental);
  }

  /** MET when both figures pass; NOT MET when one measured figure fails; else not evaluated. */
  private static String verdict(double silver, double gold, java.util.function.DoublePredicate ok) {
    if ((!Double.isNaN(silver) && !ok.test(silver)) || (!Double.isNaN(gold) && !ok.test(gold))) {
      return "NOT MET";
    }
    if (Double.isNaN(silver) || Double.isNaN(gold)) {
      return "not evaluated (not measured: the run stopped first)";
    }
    return "MET";
  }

  static double median(double[] values) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static void progress(String message) {
    System.err.println("[bench " + LocalDateTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")) + "] " + message);
  }

  static Optional<String> cpuModel() {
    try (Stream<String> lines = Files.lines(Paths.get("/proc/cpuinfo"))) {
      return lines.filter(l -> l.startsWith("model name")).findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim());
    } catch (IOException | UncheckedIOException e) {
      return Optional.empty();
    }
  }

  static Optional<String> memTotal() {
    try (Stream<String> lines = Files.lines(Paths.get("/proc/meminfo"))) {
      return lines.filter(l -> l.startsWith("MemTotal")).findFirst()
          .map(l -> String.format(Locale.ROOT, "%.1f GiB", Long.parseLong(l.replaceAll("[^0-9]", "")) / 1048576.0));
    } catch (IOException | UncheckedIOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** Spark stage wall times by call site while a refresh runs. */
  static final class StageTimes extends SparkListener {
    private final List<long[]> intervals = new ArrayList<>();
    private final Map<String, double[]> byCallSite = new LinkedHashMap<>();
    private volatile boolean recording;

    synchronized void start() {
      intervals.clear();
      byCallSite.clear();
      recording = true;
    }

    synchronized Breakdown stop(double wallSeconds) {
      recording = false;
      // Union of the stage intervals: the time at least one stage ran.
      long busy = RefreshFloorBenchmark.covered(intervals, Long.MIN_VALUE);
      Map<String, double[]> copy = new LinkedHashMap<>();
      byCallSite.forEach((k, v) -> copy.put(k, v.clone()));
      return new Breakdown(wallSeconds, busy / 1000.0, copy);
    }

    private final Map<Long, String> executionDescription = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<Integer, Long> executionOfStage = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void onOtherEvent(org.apache.spark.scheduler.SparkListenerEvent event) {
      if (event instanceof org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart start) {
        executionDescription.put(start.executionId(), start.description());
      }
    }

    @Override
    public void onJobStart(org.apache.spark.scheduler.SparkListenerJobStart event) {
      String id = event.properties() == null ? null : event.properties().getProperty("spark.sql.execution.id");
      if (id == null) {
        return;
      }
      long execution = Long.parseLong(id);
      scala.collection.Iterator<Object> ids = event.stageIds().iterator();
      while (ids.hasNext()) {
        executionOfStage.put((Integer) ids.next(), execution);
      }
    }

    @Override
    public synchronized void onStageCompleted(SparkListenerStageCompleted event) {
      if (!recording) {
        return;
      }
      StageInfo info = event.stageInfo();
      if (info.submissionTime().isEmpty() || info.completionTime().isEmpty()) {
        return;
      }
      long startMs = (Long) info.submissionTime().get();
      long endMs = (Long) info.completionTime().get();
      intervals.add(new long[] {startMs, endMs});
      // AQE materializes query stages from other threads, whose call site says nothing: name a stage
      // by the SQL execution it belongs to (its description is the call site that started it).
      String name = info.name();
      Long execution = executionOfStage.get(info.stageId());
      if (execution != null && executionDescription.containsKey(execution)) {
        name = executionDescription.get(execution);
      }
      double[] acc = byCallSite.computeIfAbsent(name, k -> new double[2]);
      acc[0] += (endMs - startMs) / 1000.0;
      acc[1] += 1;
    }

    record Breakdown(double wallSeconds, double stageSeconds, Map<String, double[]> byCallSite) {
      String describe(String indent) {
        StringBuilder b = new StringBuilder();
        byCallSite.entrySet().stream()
            .sorted((x, y) -> Double.compare(y.getValue()[0], x.getValue()[0]))
            .limit(8)
            .forEach(e -> b.append(String.format(Locale.ROOT, "%s%7.2f s  %s (%d stage%s)%n",
                indent, e.getValue()[0], e.getKey(), (int) e.getValue()[1], e.getValue()[1] == 1 ? "" : "s")));
        int rest = byCallSite.size() - 8;
        if (rest > 0) {
          double restSeconds = byCallSite.values().stream().mapToDouble(v -> v[0]).sorted().limit(rest).sum();
          b.append(String.format(Locale.ROOT, "%s%7.2f s  %d other call sites%n", indent, restSeconds, rest));
        }
        b.append(String.format(Locale.ROOT, "%s%7.2f s  outside Spark stages%n", indent, Math.max(0, wallSeconds - stageSeconds)));
        return b.toString();
      }
    }
  }
}
