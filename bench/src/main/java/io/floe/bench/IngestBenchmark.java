package io.floe.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Ingestion benchmark: rows per second of a streaming table's first run over N JSON lines spread over F files,
 * the cost of a run when no new file arrived (listing and the file log only), and of a run that finds one new
 * file. Not a test: run it with {@code bench/run-ingest-benchmark}; figures go to
 * {@code bench/results/ingest-<timestamp>.txt} and {@code ingest-latest.txt}.
 */
public final class IngestBenchmark {
  private static final String[] CATEGORIES = {"Electronics", "electronics", "Clothing", "Home & Garden", "Books", "Sports"};
  private static final String[] STATUSES = {"completed", "completed", "completed", "pending", "cancelled"};

  private IngestBenchmark() {}

  public static void main(String[] args) throws Exception {
    long rows = 1_000_000;
    int files = 100;
    int reps = 5;
    Path resultsDir = Paths.get("bench/results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = parseCount(args[++i]);
        case "--files" -> files = Integer.parseInt(args[++i]);
        case "--reps" -> reps = Integer.parseInt(args[++i]);
        case "--results-dir" -> resultsDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException("Unknown option " + args[i]
            + " (use --rows N, --files F, --reps R, --results-dir DIR)");
      }
    }
    Path work = Files.createTempDirectory("floe-ingest-bench-");
    Path landing = work.resolve("landing");
    long generateStart = System.nanoTime();
    long bytes = generate(landing, rows, files, 0, 42);
    double generateSeconds = (System.nanoTime() - generateStart) / 1e9;

    Files.createDirectories(work.resolve("warehouse"));
    SparkSession spark = BenchRun.session("floe-ingest-benchmark", work.resolve("warehouse"));
    spark.sql("CREATE NAMESPACE lake.bench");

    // Warm-up: a small folder of its own, so the JVM and Spark are warm before the measured run.
    Path warm = work.resolve("warm");
    generate(warm, 10_000, 4, 0, 7);
    spark.sql("CREATE STREAMING TABLE lake.bench.warm AS SELECT * FROM STREAM read_files('" + warm + "', format => 'json')").collectAsList();
    spark.sql("REFRESH STREAMING TABLE lake.bench.warm").collectAsList();

    long start = System.nanoTime();
    Row first = spark.sql("CREATE STREAMING TABLE lake.bench.orders AS SELECT * FROM STREAM read_files('" + landing
        + "', format => 'json')").first();
    double firstSeconds = (System.nanoTime() - start) / 1e9;
    long loaded = first.getLong(2);
    long counted = spark.sql("SELECT count(*) FROM lake.bench.orders").first().getLong(0);
    if (loaded != rows || counted != rows) {
      throw new IllegalStateException("Loaded " + loaded + " rows, table holds " + counted + ", expected " + rows);
    }

    List<Double> idle = new ArrayList<>();
    for (int r = 0; r < reps; r++) {
      long s = System.nanoTime();
      Row result = spark.sql("REFRESH STREAMING TABLE lake.bench.orders").first();
      idle.add((System.nanoTime() - s) / 1e6);
      if (result.getInt(1) != 0) {
        throw new IllegalStateException("An idle run loaded " + result.getInt(1) + " files");
      }
    }

    long perFile = rows / files;
    List<Double> oneFile = new ArrayList<>();
    for (int r = 0; r < reps; r++) {
      generate(landing, perFile, 1, files + r, 1000 + r);
      long s = System.nanoTime();
      Row result = spark.sql("REFRESH STREAMING TABLE lake.bench.orders").first();
      oneFile.add((System.nanoTime() - s) / 1e6);
      if (result.getInt(1) != 1 || result.getLong(2) != perFile) {
        throw new IllegalStateException("A run after one new file loaded " + result.getInt(1) + " files, " + result.getLong(2) + " rows");
      }
    }
    long finalCount = spark.sql("SELECT count(*) FROM lake.bench.orders").first().getLong(0);
    if (finalCount != rows + reps * perFile) {
      throw new IllegalStateException("Table holds " + finalCount + " rows, expected " + (rows + reps * perFile));
    }

    String stamp = LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    StringBuilder r = new StringBuilder();
    r.append("Floe ingestion benchmark: a streaming table over a folder of JSON lines\n");
    r.append("Run ").append(LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ISO_LOCAL_DATE_TIME), 0, 19).append(" UTC\n\n");
    r.append("Machine\n");
    r.append("  cores (JVM)      ").append(Runtime.getRuntime().availableProcessors()).append('\n');
    r.append("  load average     ").append(BenchRun.loadAverage()).append(" (at the end of the run; the machine is shared)\n");
    r.append("  max heap         ").append(String.format(Locale.ROOT, "%.1f GiB", Runtime.getRuntime().maxMemory() / 1073741824.0)).append('\n');
    r.append("  Java             ").append(System.getProperty("java.version")).append('\n');
    r.append("  Spark            ").append(spark.version()).append(", master ").append(spark.sparkContext().master()).append('\n');
    r.append("  Iceberg          ").append(org.apache.iceberg.IcebergBuild.version()).append(", JDBC catalog on SQLite, local file system\n\n");
    r.append("Workload\n");
    r.append(String.format(Locale.ROOT, "  %,d JSON lines (orders: 7 fields) in %d files, %.1f MiB, generated in %.1f s.%n",
        rows, files, bytes / 1048576.0, generateSeconds));
    r.append("  First run: CREATE STREAMING TABLE ... read_files(folder, format => 'json'): schema inference,\n");
    r.append("  parsing with file and line, one Iceberg commit. Idle run: REFRESH STREAMING TABLE with no new file.\n");
    r.append(String.format(Locale.ROOT, "  One new file: REFRESH STREAMING TABLE after one more file of %,d lines. %d runs each.%n%n", perFile, reps));
    r.append("Results\n");
    r.append(String.format(Locale.ROOT, "  first run          %8.2f s   %,.0f rows/s   (%,d rows, %d files)%n", firstSeconds, rows / firstSeconds, rows, files));
    r.append(String.format(Locale.ROOT, "  idle run           %8.0f ms median, %.0f ms min   runs: %s%n", median(idle), min(idle), list(idle)));
    r.append(String.format(Locale.ROOT, "  one new file       %8.0f ms median, %.0f ms min   runs: %s%n", median(oneFile), min(oneFile), list(oneFile)));
    r.append("\nCommand: bench/run-ingest-benchmark");
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--results-dir")) {
        i++;
      } else {
        r.append(' ').append(args[i]);
      }
    }
    r.append('\n');
    String report = r.toString();
    Files.createDirectories(resultsDir);
    Files.writeString(resultsDir.resolve("ingest-" + stamp + ".txt"), report, StandardCharsets.UTF_8);
    Files.writeString(resultsDir.resolve("ingest-latest.txt"), report, StandardCharsets.UTF_8);
    System.out.print(report);
    spark.stop();
    deleteRecursively(work);
  }

  /** Removes the generated files and the warehouse: a million lines take 150 MiB. */
  private static void deleteRecursively(Path dir) throws IOException {
    try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).collect(Collectors.toList())) {
        Files.delete(path);
      }
    }
  }

  /** Writes {@code rows} order lines over {@code files} files numbered from {@code firstFile}; returns the bytes. */
  private static long generate(Path dir, long rows, int files, int firstFile, long seed) throws IOException {
    Files.createDirectories(dir);
    Random random = new Random(seed);
    long bytes = 0;
    long id = (long) firstFile * 1_000_000_000L;
    for (int f = 0; f < files; f++) {
      long count = rows / files + (f < rows % files ? 1 : 0);
      Path file = dir.resolve(String.format(Locale.ROOT, "orders-%05d.json", firstFile + f));
      try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        for (long i = 0; i < count; i++) {
          String line = String.format(Locale.ROOT,
              "{\"order_id\":\"ORD-%d\",\"customer_id\":\"CUST-%04d\",\"category\":\"%s\",\"amount\":%.2f,"
                  + "\"order_date\":\"%s\",\"status\":\"%s\",\"quantity\":%d}",
              id++, random.nextInt(5000), CATEGORIES[random.nextInt(CATEGORIES.length)], 5 + random.nextDouble() * 495,
              LocalDate.of(2024, 1, 1).plusDays(random.nextInt(180)), STATUSES[random.nextInt(STATUSES.length)],
              1 + random.nextInt(10));
          out.write(line);
          out.write('\n');
          bytes += line.length() + 1;
        }
      }
    }
    return bytes;
  }

  private static long parseCount(String value) {
    String v = value.toLowerCase(Locale.ROOT);
    long factor = v.endsWith("m") ? 1_000_000 : v.endsWith("k") ? 1_000 : 1;
    return Long.parseLong(factor == 1 ? v : v.substring(0, v.length() - 1)) * factor;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = values.stream().sorted().collect(Collectors.toList());
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static double min(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
  }

  private static String list(List<Double> values) {
    return values.stream().map(v -> String.format(Locale.ROOT, "%.0f", v)).collect(Collectors.joining(" "));
  }
}
