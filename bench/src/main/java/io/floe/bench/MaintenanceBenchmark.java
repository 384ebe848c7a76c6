package io.floe.bench;

import io.floe.spark.refresh.StorageCompaction;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Storage maintenance benchmark: what a long run of incremental refreshes does to a merge-on-read
 * MV, with Floe's automatic storage compaction off and on. Not a test: run it with {@code
 * bench/run-maintenance-benchmark}.
 *
 * <p>For each mode, a generated Bronze of N trips (two data files) and the seed's Silver MV over it;
 * then R rounds of (0.1% spread delta of inserts, updates and deletes; REFRESH Silver). Every
 * {@code every} rounds, a Gold-shaped query over Silver is timed (median of 3) and the storage's
 * live data and delete files are counted. Results go to {@code bench/results/maintenance-<timestamp>.txt}
 * and {@code maintenance-latest.txt}.
 */
public final class MaintenanceBenchmark {
  private static final String CATALOG = BenchRun.CATALOG;
  private static final String QUERY =
      "SELECT city, DATE(trip_start_timestamp) AS day, count(*) AS trips, sum(total_amount) AS revenue FROM %s GROUP BY 1, 2";

  private final SparkSession spark;
  private final long rows;
  private final int rounds;
  private final int every;

  private MaintenanceBenchmark(SparkSession spark, long rows, int rounds, int every) {
    this.spark = spark;
    this.rows = rows;
    this.rounds = rounds;
    this.every = every;
  }

  /** One sample of a mode: after {@code round} refreshes. */
  private record Sample(int round, double refreshSeconds, double querySeconds, long dataFiles, long deleteFiles, long compactions) {}

  public static void main(String[] args) throws Exception {
    long rows = 1_000_000L;
    int rounds = 48;
    int every = 8;
    Path resultsDir = Paths.get("bench/results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = RefreshBenchmark.parseSize(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--every" -> every = Integer.parseInt(args[++i]);
        case "--results-dir" -> resultsDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException(
            "Unknown option " + args[i] + " (use --rows N, --rounds R, --every K, --results-dir DIR)");
      }
    }
    long n = rows;
    int r = rounds;
    int k = every;
    String report =
        BenchRun.withLakehouse("floe-maintenance-benchmark", spark -> new MaintenanceBenchmark(spark, n, r, k).run());
    BenchRun.publish(resultsDir, "maintenance", report);
    System.out.println(report);
  }

  private String run() {
    long started = System.nanoTime();
    // Warm-up, unmeasured: JIT and code generation should not count against the first mode.
    mode("warmup", true, 20_000, 2);
    List<Sample> off = mode("off", false, rows, rounds);
    List<Sample> on = mode("on", true, rows, rounds);
    StringBuilder out = new StringBuilder();
    out.append("Floe storage maintenance benchmark: a long run of incremental refreshes, automatic compaction off and on\n");
    out.append("Run ").append(LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_LOCAL_DATE_TIME))
        .append(String.format(Locale.ROOT, " UTC, %.1f min in total%n%n", (System.nanoTime() - started) / 60e9));
    out.append(String.format(Locale.ROOT, "Machine: %d cores, Spark %s, master %s%n", Runtime.getRuntime().availableProcessors(),
        spark.version(), spark.sparkContext().master()));
    out.append(String.format(Locale.ROOT,
        "Workload: Bronze of %,d generated trips (merge-on-read, 2 data files), the seed's Silver MV over it;%n"
            + "  %d rounds of (0.1%% delta spread over the table: inserts 0.05%%, updates 0.03%%, deletes 0.02%%; REFRESH Silver).%n"
            + "  Every %d rounds: the query below over Silver, median of 3 runs, and Silver's live storage files.%n"
            + "  Query: %s%n"
            + "  Compaction thresholds (defaults): %d delete files or %d data files under %d MiB.%n%n",
        rows, rounds, every, String.format(QUERY, "silver"), 32, 16, 32));
    out.append(String.format(Locale.ROOT, "%6s | %-44s | %-44s%n", "", "compaction off", "compaction on"));
    out.append(String.format(Locale.ROOT, "%6s | %9s %9s %8s %8s %6s | %9s %9s %8s %8s %6s%n",
        "round", "refresh s", "query s", "data f", "delete f", "compac", "refresh s", "query s", "data f", "delete f", "compac"));
    for (int i = 0; i < off.size(); i++) {
      Sample a = off.get(i);
      Sample b = on.get(i);
      out.append(String.format(Locale.ROOT, "%6d | %9.2f %9.3f %8d %8d %6d | %9.2f %9.3f %8d %8d %6d%n",
          a.round(), a.refreshSeconds(), a.querySeconds(), a.dataFiles(), a.deleteFiles(), a.compactions(),
          b.refreshSeconds(), b.querySeconds(), b.dataFiles(), b.deleteFiles(), b.compactions()));
    }
    out.append("\n'refresh s' is the mean wall time of the refreshes since the previous sample (compactions included);\n");
    out.append("'compac' counts the automatic compaction commits so far: a compaction commits its data files and its\n");
    out.append("delete files apart, so it counts up to two.\n");
    Sample lastOff = off.get(off.size() - 1);
    Sample lastOn = on.get(on.size() - 1);
    out.append(String.format(Locale.ROOT,
        "%nAfter %d refreshes: the query takes %.3f s with compaction off and %.3f s with it on (%.1fx);%n"
            + "Silver's storage has %d data and %d delete files off, %d and %d on.%n",
        lastOff.round(), lastOff.querySeconds(), lastOn.querySeconds(), lastOff.querySeconds() / lastOn.querySeconds(),
        lastOff.dataFiles(), lastOff.deleteFiles(), lastOn.dataFiles(), lastOn.deleteFiles()));
    out.append(String.format(Locale.ROOT, "Silver equals its definition after the last round: off %s, on %s%n",
        check("off"), check("on")));
    return out.toString();
  }

  private String db(String mode) {
    return CATALOG + ".maintenance_" + mode;
  }

  private List<Sample> mode(String mode, boolean compaction, long rows, int rounds) {
    String db = db(mode);
    String bronze = db + ".trips_bronze";
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + db);
    spark.sql("CREATE TABLE " + bronze + " (" + RefreshBenchmark.TRIPS_DDL + ") USING iceberg TBLPROPERTIES ("
        + "'format-version'='2','write.delete.mode'='merge-on-read','write.update.mode'='merge-on-read','write.merge.mode'='merge-on-read')");
    append(bronze, RefreshBenchmark.trips(spark, 0, rows, 42, 2));
    spark.sql("CREATE MATERIALIZED VIEW " + db + ".silver TBLPROPERTIES ('" + StorageCompaction.ENABLED + "' = '" + compaction
        + "') AS " + RefreshBenchmark.silverDefinition(db));
    progress(mode + ": Bronze and Silver created");
    List<Sample> samples = new ArrayList<>();
    samples.add(sample(db, 0, 0));
    long nextId = rows;
    double refreshTotal = 0;
    int refreshes = 0;
    for (int round = 1; round <= rounds; round++) {
      nextId = delta(bronze, rows, round, nextId);
      long t = System.nanoTime();
      String type = spark.sql("REFRESH MATERIALIZED VIEW " + db + ".silver").first().getString(1);
      double seconds = (System.nanoTime() - t) / 1e9;
      if (!"INCREMENTAL".equals(type)) {
        throw new IllegalStateException("Refresh " + round + " of " + db + ".silver was " + type + ", not INCREMENTAL");
      }
      refreshTotal += seconds;
      refreshes++;
      if (round % every == 0 || round == rounds) {
        samples.add(sample(db, round, refreshTotal / refreshes));
        refreshTotal = 0;
        refreshes = 0;
        progress(mode + ": round " + round + " " + samples.get(samples.size() - 1));
      }
    }
    return samples;
  }

  /** Inserts, updates and deletes 0.1% of {@code rows}, the updated and deleted rows spread by a hash of trip_id. */
  private long delta(String bronze, long rows, int round, long nextId) {
    long inserts = Math.max(1, rows / 2000);
    append(bronze, RefreshBenchmark.trips(spark, nextId, inserts, 1000 + round, 1));
    spark.sql("UPDATE " + bronze + " SET tip_amount = round(tip_amount + 1.5D, 2), total_amount = round(total_amount + 1.5D, 2)"
        + " WHERE pmod(xxhash64(trip_id, " + (7000 + round) + "L), 10000L) < 3");
    spark.sql("DELETE FROM " + bronze + " WHERE pmod(xxhash64(trip_id, " + (9000 + round) + "L), 10000L) < 2");
    return nextId + inserts;
  }

  private Sample sample(String db, int round, double refreshSeconds) {
    String silver = db + ".silver";
    double[] runs = new double[3];
    for (int i = 0; i < runs.length; i++) {
      long t = System.nanoTime();
      spark.sql(String.format(QUERY, silver)).collectAsList();
      runs[i] = (System.nanoTime() - t) / 1e9;
    }
    String storage = db + ".silver__storage";
    long dataFiles = spark.sql("SELECT count(*) FROM " + storage + ".files WHERE content = 0").first().getLong(0);
    long deleteFiles = spark.sql("SELECT count(*) FROM " + storage + ".files WHERE content = 1").first().getLong(0);
    long compactions = spark.sql("SELECT count(*) FROM " + storage + ".snapshots WHERE summary['"
        + StorageCompaction.SUMMARY_PROPERTY + "'] IS NOT NULL").first().getLong(0);
    return new Sample(round, refreshSeconds, RefreshBenchmark.median(runs), dataFiles, deleteFiles, compactions);
  }

  private String check(String mode) {
    String db = db(mode);
    String definition = RefreshBenchmark.silverDefinition(db);
    long onlyMv = spark.sql("SELECT * FROM " + db + ".silver EXCEPT ALL " + definition).count();
    long onlyDefinition = spark.sql(definition + " EXCEPT ALL SELECT * FROM " + db + ".silver").count();
    return onlyMv == 0 && onlyDefinition == 0 ? "PASS" : "FAIL (" + onlyMv + " rows only in the MV, " + onlyDefinition + " only in the definition)";
  }

  private void append(String table, org.apache.spark.sql.Dataset<Row> rows) {
    try {
      rows.writeTo(table).append();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot append to " + table + ": " + e.getMessage(), e);
    }
  }

  private static void progress(String message) {
    System.err.println("[maintenance] " + message);
  }
}
