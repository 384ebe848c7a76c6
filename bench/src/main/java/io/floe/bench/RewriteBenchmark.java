package io.floe.bench;

import io.floe.spark.rewrite.RewriteReport;
import io.floe.spark.rewrite.RewriteSettings;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Gold-shaped queries over a generated trips table (the seed's shape), each run with query rewrite
 * off (computed from the table) and on (answered from one aggregate MV over the table), side by
 * side, with a check that both give the same rows. Writes its figures to
 * {@code bench/results/rewrite-<time>.txt} and {@code rewrite-latest.txt}.
 *
 * <p>Options: {@code --rows N} (k/m suffixes, default 10m), {@code --reps R} (default 3), {@code
 * --results-dir DIR}.
 */
public final class RewriteBenchmark {
  private static final String CATALOG = "lake";
  private static final double GOAL_SPEEDUP = 50.0;

  private static final String MV_DEFINITION =
      "SELECT city, vehicle_type, status, DATE(trip_start_time) AS trip_date, COUNT(*) AS trips,"
          + " SUM(total_amount) AS revenue, SUM(distance_miles) AS distance, SUM(tip_amount) AS tips,"
          + " MAX(trip_fare) AS max_fare, MIN(trip_fare) AS min_fare"
          + " FROM %s GROUP BY city, vehicle_type, status, DATE(trip_start_time)";

  /** The queries: a name and the SQL with %s for the trips table. */
  private static final String[][] QUERIES = {
    {"gold city daily (seed's Gold, rolled up)",
     "SELECT city, DATE(trip_start_time) AS trip_date, COUNT(*) AS total_trips, SUM(total_amount) AS total_revenue,"
         + " SUM(distance_miles) AS total_distance, SUM(tip_amount) AS total_tips"
         + " FROM %s WHERE status = 'completed' GROUP BY city, DATE(trip_start_time)"},
    {"revenue by city (AVG from hidden counts)",
     "SELECT city, SUM(total_amount) AS revenue, AVG(total_amount) AS avg_amount, COUNT(*) AS trips"
         + " FROM %s WHERE status = 'completed' GROUP BY city"},
    {"vehicle type by day, one city",
     "SELECT vehicle_type, DATE(trip_start_time) AS d, COUNT(*) AS trips, MAX(trip_fare) AS max_fare"
         + " FROM %s WHERE city = 'Chicago' GROUP BY vehicle_type, DATE(trip_start_time)"},
    {"cancellations by city and status",
     "SELECT city, status, COUNT(*) AS trips FROM %s WHERE status <> 'completed' GROUP BY city, status"},
    {"the MV's own definition (exact match)", MV_DEFINITION},
  };

  private final SparkSession spark;
  private final long rows;
  private final int reps;
  private final Path resultsDir;

  private RewriteBenchmark(SparkSession spark, long rows, int reps, Path resultsDir) {
    this.spark = spark;
    this.rows = rows;
    this.reps = reps;
    this.resultsDir = resultsDir;
  }

  public static void main(String[] args) throws Exception {
    long rows = 10_000_000L;
    int reps = 3;
    Path resultsDir = Paths.get("bench/results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows":
          rows = RefreshBenchmark.parseSize(args[++i]);
          break;
        case "--reps":
          reps = Integer.parseInt(args[++i]);
          break;
        case "--results-dir":
          resultsDir = Paths.get(args[++i]);
          break;
        default:
          throw new IllegalArgumentException("Unknown option " + args[i] + " (use --rows N, --reps R, --results-dir DIR)");
      }
    }
    long n = rows;
    int r = reps;
    Path dir = resultsDir;
    String report = BenchRun.withLakehouse("floe-rewrite-benchmark", spark -> new RewriteBenchmark(spark, n, r, dir).run());
    BenchRun.publish(resultsDir, "rewrite", report);
    System.out.println(report);
  }

  private record Result(String name, double[] off, double[] on, String usedMv, String check) {}

  private String run() {
    long started = System.nanoTime();
    String db = CATALOG + ".rewrite_bench";
    String trips = db + ".trips";
    spark.sql("CREATE NAMESPACE IF NOT EXISTS " + db);
    long t = System.nanoTime();
    spark.sql("CREATE TABLE " + trips + " (" + RefreshBenchmark.TRIPS_DDL + ") USING iceberg");
    int partitions = (int) Math.max(2, (rows + 999_999) / 1_000_000);
    try {
      RefreshBenchmark.trips(spark, 0, rows, 42, partitions).writeTo(trips).append();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot write " + trips + ": " + e.getMessage(), e);
    }
    double generate = seconds(t);
    progress(String.format(Locale.ROOT, "trips: %,d rows, %.1f s", rows, generate));
    t = System.nanoTime();
    spark.sql("CREATE MATERIALIZED VIEW " + db + ".mv_trip_metrics AS " + String.format(MV_DEFINITION, trips));
    double create = seconds(t);
    long mvRows = spark.sql("SELECT count(*) FROM " + db + ".mv_trip_metrics").first().getLong(0);
    progress(String.format(Locale.ROOT, "MV: %,d rows, %.1f s", mvRows, create));

    // Warm up both paths once so that neither pays for class loading and code generation.
    for (String[] q : QUERIES) {
      collect(String.format(q[1], trips), false);
      collect(String.format(q[1], trips), true);
    }
    List<Result> results = new ArrayList<>();
    for (String[] q : QUERIES) {
      String sql = String.format(q[1], trips);
      double[] off = new double[reps];
      double[] on = new double[reps];
      List<Row> plain = null;
      List<Row> rewritten = null;
      for (int r = 0; r < reps; r++) {
        long s = System.nanoTime();
        plain = collect(sql, false);
        off[r] = seconds(s);
        s = System.nanoTime();
        rewritten = collect(sql, true);
        on[r] = seconds(s);
      }
      String used = RewriteReport.last(spark).map(rep -> String.join(",", rep.used())).orElse("");
      String check = compare(plain, rewritten);
      progress(String.format(Locale.ROOT, "%s: off %.2f s, on %.3f s, %s", q[0], median(off), median(on), check));
      results.add(new Result(q[0], off, on, used.isEmpty() ? "(none)" : used, check));
    }
    List<Floor> floors = new ArrayList<>();
    String mv = db + ".mv_trip_metrics";
    for (String[] f : new String[][] {
        {"SELECT 1 (no table)", "SELECT 1"},
        {"the MV's storage, read whole", "SELECT * FROM " + mv},
        {"the MV's storage, rolled up by city", "SELECT city, SUM(trips), SUM(revenue) FROM " + mv + " GROUP BY city"}}) {
      collect(f[1], false);
      double[] times = new double[reps];
      for (int r = 0; r < reps; r++) {
        long s = System.nanoTime();
        collect(f[1], false);
        times[r] = seconds(s);
      }
      floors.add(new Floor(f[0], times));
    }
    return report(results, floors, generate, create, mvRows, (System.nanoTime() - started) / 60e9);
  }

  /** A query written against the MV itself (rewrite off): the least a rewritten query can cost. */
  private record Floor(String name, double[] times) {}

  private List<Row> collect(String sql, boolean rewrite) {
    spark.conf().set(RewriteSettings.ENABLED, Boolean.toString(rewrite));
    RewriteReport.clear(spark);
    return spark.sql(sql).collectAsList();
  }

  /** Same rows (sorted) with DOUBLEs equal to 1e-9 relative: a rollup adds the same values in another order. */
  private static String compare(List<Row> a, List<Row> b) {
    if (a.size() != b.size()) {
      return "DIFFERENT: " + a.size() + " vs " + b.size() + " rows";
    }
    List<Row> x = new ArrayList<>(a);
    List<Row> y = new ArrayList<>(b);
    Comparator<Row> order = Comparator.comparing(Row::toString);
    x.sort(order);
    y.sort(order);
    int doubles = 0;
    for (int i = 0; i < x.size(); i++) {
      for (int c = 0; c < x.get(i).length(); c++) {
        Object u = x.get(i).get(c);
        Object v = y.get(i).get(c);
        if (u instanceof Double && v instanceof Double) {
          double du = (Double) u;
          double dv = (Double) v;
          if (du != dv) {
            doubles++;
            if (Math.abs(du - dv) > 1e-9 * Math.max(Math.abs(du), Math.abs(dv))) {
              return "DIFFERENT: row " + i + " column " + c + ": " + du + " vs " + dv;
            }
          }
        } else if (u == null ? v != null : !u.equals(v)) {
          return "DIFFERENT: row " + i + " column " + c + ": " + u + " vs " + v;
        }
      }
    }
    return doubles == 0 ? "identical" : "identical (" + doubles + " DOUBLE sums differ below 1e-9 relative)";
  }

  private String report(List<Result> results, List<Floor> floors, double generate, double create, long mvRows, double minutes) {
    StringBuilder r = new StringBuilder();
    String now = LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_LOCAL_DATE_TIME).substring(0, 19);
    r.append("Floe query rewrite benchmark: Gold-shaped queries with and without answering from an MV\n");
    r.append("Run ").append(now).append(" UTC, ").append(String.format(Locale.ROOT, "%.1f", minutes)).append(" min in total\n\n");
    r.append("Machine\n");
    r.append("  cores (JVM)      ").append(Runtime.getRuntime().availableProcessors())
        .append(RefreshBenchmark.cpuModel().map(m -> ", " + m).orElse("")).append('\n');
    r.append("  max heap         ").append(String.format(Locale.ROOT, "%.1f GiB", Runtime.getRuntime().maxMemory() / 1073741824.0)).append('\n');
    r.append("  Java             ").append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.version")).append('\n');
    r.append("  Spark            ").append(spark.version()).append(", master ").append(spark.sparkContext().master())
        .append(", spark.sql.shuffle.partitions=").append(spark.conf().get("spark.sql.shuffle.partitions")).append('\n');
    r.append("  Iceberg          ").append(org.apache.iceberg.IcebergBuild.version()).append(", JDBC catalog on SQLite, local file system\n\n");
    r.append("Workload\n");
    r.append(String.format(Locale.ROOT, "  trips: %,d generated ride-sharing trips (the seed's shape, seeded), written in %.1f s%n", rows, generate));
    r.append(String.format(Locale.ROOT, "  MV mv_trip_metrics: %,d groups, created (first refresh) in %.1f s:%n", mvRows, create));
    r.append("    ").append(String.format(MV_DEFINITION, "trips")).append('\n');
    r.append(String.format(Locale.ROOT, "  Each query: one warm-up per mode, then %d x (rewrite off; rewrite on), wall-clock seconds%n", reps));
    r.append("  of spark.sql(...).collectAsList(), planning included; medians below.\n\n");
    r.append("Results\n");
    r.append(String.format(Locale.ROOT, "  %-44s %9s %9s %9s  %s%n", "query", "off (s)", "on (s)", "speed-up", "result"));
    r.append("  ").append("-".repeat(100)).append('\n');
    double minSpeedup = Double.MAX_VALUE;
    boolean allSame = true;
    for (Result x : results) {
      double speedup = median(x.off) / median(x.on);
      minSpeedup = Math.min(minSpeedup, speedup);
      allSame &= x.check.startsWith("identical");
      r.append(String.format(Locale.ROOT, "  %-44s %9.2f %9.3f %8.1fx  %s; answered from %s%n",
          x.name, median(x.off), median(x.on), speedup, x.check, x.usedMv));
      r.append(String.format(Locale.ROOT, "  %-44s runs off %s / on %s%n", "", runs(x.off), runs(x.on)));
    }
    r.append('\n');
    r.append("Floor: what a query costs in this session when written against the MV directly (rewrite off),\n");
    r.append("the least a rewritten query can cost; medians of the same number of runs\n");
    for (Floor f : floors) {
      r.append(String.format(Locale.ROOT, "  %-44s %9.3f s   runs %s%n", f.name, median(f.times), runs(f.times)));
    }
    double floor = floors.stream().mapToDouble(f -> median(f.times)).max().orElse(0);
    double fastestOff = results.stream().mapToDouble(x -> median(x.off)).min().orElse(0);
    r.append(String.format(Locale.ROOT,
        "  A %.0fx speed-up over the fastest base-table query (%.2f s) needs an answer in %.3f s; reading the%n"
            + "  MV directly takes up to %.3f s here, %s%n%n",
        GOAL_SPEEDUP, fastestOff, fastestOff / GOAL_SPEEDUP, floor,
        fastestOff / GOAL_SPEEDUP < floor
            ? "so no rewrite can reach that speed-up for it on this machine."
            : "so the floor leaves room for that speed-up."));
    r.append(String.format(Locale.ROOT, "Goal: at least %.0fx faster with rewrite, identical results. Slowest speed-up %.1fx: %s; results %s.%n",
        GOAL_SPEEDUP, minSpeedup, minSpeedup >= GOAL_SPEEDUP ? "met" : "NOT met", allSame ? "identical" : "NOT identical"));
    return r.toString();
  }

  private static String runs(double[] values) {
    StringBuilder s = new StringBuilder();
    for (double v : values) {
      s.append(s.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.3f", v));
    }
    return s.toString();
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static void progress(String message) {
    System.err.println("[bench " + LocalDateTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss")) + "] " + message);
  }
}
