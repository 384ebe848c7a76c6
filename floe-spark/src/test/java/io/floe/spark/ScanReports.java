package io.floe.spark;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.iceberg.metrics.MetricsReport;
import org.apache.iceberg.metrics.MetricsReporter;
import org.apache.iceberg.metrics.ScanReport;

/**
 * The Iceberg metrics reporter of the tests' lake catalog: keeps the scans planned while {@link
 * #during} runs, so a test can tell which data files a statement read.
 */
public final class ScanReports implements MetricsReporter {
  private static final Queue<ScanReport> RECORDED = new ConcurrentLinkedQueue<>();
  private static volatile boolean recording;

  @Override
  public void report(MetricsReport report) {
    if (recording && report instanceof ScanReport scan) {
      RECORDED.add(scan);
    }
  }

  /** The scans of the lake catalog's tables that {@code action} planned. */
  public static synchronized List<ScanReport> during(Runnable action) {
    RECORDED.clear();
    recording = true;
    try {
      action.run();
    } finally {
      recording = false;
    }
    return List.copyOf(RECORDED);
  }

  /** The data files the scans of the table named {@code table} (its last name part) planned, scan by scan. */
  public static List<Long> dataFiles(List<ScanReport> scans, String table) {
    return scans.stream()
        .filter(scan -> scan.tableName().endsWith("." + table))
        .map(scan -> scan.scanMetrics().resultDataFiles().value())
        .toList();
  }
}
