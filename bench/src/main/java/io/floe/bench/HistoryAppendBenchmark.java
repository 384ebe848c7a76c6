package io.floe.bench;

import io.floe.mv.SourceState;
import io.floe.refresh.RefreshRecord;
import io.floe.refresh.RefreshResult;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshTrigger;
import io.floe.refresh.RefreshType;
import io.floe.spark.EmbeddedLakehouse;
import io.floe.spark.refresh.RefreshHistory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;

/**
 * What recording one refresh in the refresh history costs: appends records to the history of a
 * fresh embedded catalog (SQLite JDBC catalog, local files), one append commit each as a refresh
 * does, once with Hadoop's local file system and once with Floe's, and writes the latencies to {@code bench/results/history-append-<timestamp>.txt} and
 * {@code history-append-latest.txt}. No Spark runs.
 *
 * <p>Usage: {@code HistoryAppendBenchmark [--appends 300] [--results-dir bench/results]}
 */
public final class HistoryAppendBenchmark {
  private HistoryAppendBenchmark() {}

  public static void main(String[] args) throws Exception {
    int appends = 300;
    Path resultsDir = Paths.get("bench", "results");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--appends" -> appends = Integer.parseInt(args[++i]);
        case "--results-dir" -> resultsDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException(
            "usage: HistoryAppendBenchmark [--appends 300] [--results-dir bench/results]");
      }
    }
    StringBuilder report = new StringBuilder();
    report.append(String.format(
        "Refresh history append benchmark, %s%n"
            + "appends: %d to one history table (embedded SQLite JDBC catalog, local files), one commit each,%n"
            + "once with each local file system implementation, each on a fresh warehouse%n",
        LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE_TIME), appends));
    Map<String, String> fileSystems = new LinkedHashMap<>();
    fileSystems.put("Hadoop's LocalFileSystem (a chmod process per created file)", org.apache.hadoop.fs.LocalFileSystem.class.getName());
    fileSystems.put("Floe's LocalFileSystem (permissions through java.nio; what Floe uses)", io.floe.spark.LocalFileSystem.class.getName());
    for (Map.Entry<String, String> fileSystem : fileSystems.entrySet()) {
      report.append(String.format("%n%s%n", fileSystem.getKey())).append(measure(fileSystem.getValue(), appends));
    }
    report.append(String.format(
        "%nmachine load average at the end: %s%n",
        BenchRun.loadAverage()));
    System.out.print(report);
    Files.createDirectories(resultsDir);
    String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
    Files.writeString(resultsDir.resolve("history-append-" + stamp + ".txt"), report.toString(), StandardCharsets.UTF_8);
    Files.writeString(resultsDir.resolve("history-append-latest.txt"), report.toString(), StandardCharsets.UTF_8);
  }

  /** Appends {@code appends} records on a fresh warehouse whose {@code file:} paths use {@code fileSystem}. */
  private static String measure(String fileSystem, int appends) throws Exception {
    Path warehouse = Files.createTempDirectory("floe-history-bench");
    Map<String, String> properties = new LinkedHashMap<>();
    String prefix = "spark.sql.catalog.lake.";
    EmbeddedLakehouse.sparkConf(warehouse, "lake").forEach((key, value) -> {
      if (key.startsWith(prefix)) {
        properties.put(key.substring(prefix.length()), value);
      }
    });
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", fileSystem);
    // Hadoop caches one file system per scheme: each run gets its own instance of its class.
    conf.setBoolean("fs.file.impl.disable.cache", true);
    Catalog catalog = CatalogUtil.buildIcebergCatalog("lake", properties, conf);
    RefreshHistory history = new RefreshHistory("lake", catalog);
    RefreshRun run = RefreshRun.start(RefreshTrigger.SCHEDULE);
    List<SourceState> sources =
        List.of(SourceState.table(List.of("db"), "trips", "6f1d0c3e-0000-4000-8000-000000000001", 42L, 0));

    List<Double> millis = new ArrayList<>();
    for (int i = 0; i < appends; i++) {
      long now = System.currentTimeMillis();
      RefreshResult result =
          new RefreshResult("lake.db.gold", RefreshType.INCREMENTAL, "sources appended rows", sources, sources,
              Map.of("lake.db.trips", 1000L), 10, 2, now, 100, 7L);
      long started = System.nanoTime();
      history.append(RefreshRecord.succeeded(run, result, now, now + 100));
      millis.add((System.nanoTime() - started) / 1e6);
    }

    org.apache.iceberg.Table table = history.loadOrCreate();
    int snapshotsKept = 0;
    for (org.apache.iceberg.Snapshot ignored : table.snapshots()) {
      snapshotsKept++;
    }
    long rows = Long.parseLong(table.currentSnapshot().summary().get("total-records"));

    List<Double> warm = new ArrayList<>(millis.subList(1, millis.size()));
    Collections.sort(warm);
    return String.format(
        "  first append (creates namespace and table): %.1f ms%n"
            + "  later appends: median %.1f ms, p90 %.1f ms, max %.1f ms%n"
            + "  first 20 later appends mean %.1f ms, last 20 mean %.1f ms%n"
            + "  at the end: %d rows, %d snapshots kept (old ones expire every 100 appends)%n",
        millis.get(0),
        percentile(warm, 0.5),
        percentile(warm, 0.9),
        warm.get(warm.size() - 1),
        mean(millis.subList(1, Math.min(21, millis.size()))),
        mean(millis.subList(Math.max(1, millis.size() - 20), millis.size())),
        rows,
        snapshotsKept);
  }

  private static double percentile(List<Double> sorted, double p) {
    return sorted.get((int) Math.min(sorted.size() - 1, Math.round(p * (sorted.size() - 1))));
  }

  private static double mean(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).average().orElse(0);
  }
}
