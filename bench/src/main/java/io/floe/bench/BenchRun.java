package io.floe.bench;

import io.floe.spark.EmbeddedLakehouse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.iceberg.SystemConfigs;
import org.apache.spark.sql.SparkSession;

/**
 * What the Spark benchmarks share: an embedded lakehouse in a fresh temporary warehouse (catalog
 * {@code lake}, local[2], UTC), removed afterwards, and the report written to {@code
 * <name>-<timestamp>.txt} and {@code <name>-latest.txt} of the results folder.
 */
final class BenchRun {
  static final String CATALOG = "lake";

  private BenchRun() {}

  /** Runs {@code benchmark} on a new session named {@code app}, then stops it and deletes the warehouse. */
  static String withLakehouse(String app, Function<SparkSession, String> benchmark) throws IOException {
    Path warehouse = Files.createTempDirectory("floe-bench-warehouse-");
    SparkSession spark = session(app, warehouse);
    try {
      return benchmark.apply(spark);
    } finally {
      spark.stop();
      RefreshBenchmark.deleteRecursively(warehouse);
    }
  }

  /**
   * A local[2] session named {@code app} on an embedded lakehouse in {@code warehouse}, in UTC, with
   * Spark's scratch files inside the warehouse. A {@code spark.*} system property given to the
   * benchmark's JVM ({@code JAVA_TOOL_OPTIONS=-Dspark.sql.adaptive.enabled=false}) overrides the
   * embedded default of that setting, so that two runs can compare one setting ({@link
   * #givenSettings}).
   */
  static SparkSession session(String app, Path warehouse) {
    EmbeddedLakehouse.planScansInCallingThread();
    SparkSession.Builder builder = SparkSession.builder().master("local[2]").appName(app);
    EmbeddedLakehouse.sparkConf(warehouse, CATALOG).forEach(builder::config);
    builder.config("spark.sql.session.timeZone", "UTC");
    builder.config("spark.local.dir", warehouse.resolve("spark-local").toString());
    givenSettings().forEach(builder::config);
    return builder.getOrCreate();
  }

  /**
   * The {@code spark.*} and {@code floe.*} system properties of this JVM (Spark's settings and
   * Floe's, which Floe reads from the session's), by key: the settings a run was given.
   */
  static Map<String, String> givenSettings() {
    Map<String, String> given = new TreeMap<>();
    System.getProperties().stringPropertyNames().stream()
        .filter(key -> key.startsWith("spark.") || key.startsWith("floe."))
        .forEach(key -> given.put(key, System.getProperty(key)));
    return given;
  }

  /**
   * A report line naming the settings a run was given, or that it ran on the embedded defaults,
   * and where Iceberg planned its scans ({@link EmbeddedLakehouse#planScansInCallingThread}).
   */
  static String givenSettingsLine() {
    Map<String, String> given = givenSettings();
    return "Settings: the embedded lakehouse's"
        + (given.isEmpty() ? "" : ", with " + given.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", ")))
        + "; Iceberg plans scans "
        + (SystemConfigs.SCAN_THREAD_POOL_ENABLED.value() ? "on its worker pool" : "in the calling thread");
  }

  /**
   * The machine's load average over 1, 5 and 15 minutes, or {@code unknown} where the system does
   * not tell it: other work on the machine slows every figure a benchmark reports.
   */
  static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return fields[0] + " " + fields[1] + " " + fields[2];
    } catch (IOException | RuntimeException unavailable) {
      return "unknown";
    }
  }

  /** Writes {@code report} as {@code <name>-<timestamp>.txt} and {@code <name>-latest.txt}; returns the first. */
  static Path publish(Path resultsDir, String name, String report) throws IOException {
    Files.createDirectories(resultsDir);
    String stamp = LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Path file = resultsDir.resolve(name + "-" + stamp + ".txt");
    Files.writeString(file, report, StandardCharsets.UTF_8);
    Files.writeString(resultsDir.resolve(name + "-latest.txt"), report, StandardCharsets.UTF_8);
    return file;
  }
}
