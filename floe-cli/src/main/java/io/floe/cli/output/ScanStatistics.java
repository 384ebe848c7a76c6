package io.floe.cli.output;

import io.floe.spark.TableScans;
import java.util.Locale;
import java.util.Optional;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * What a finished query read, summed over its table scans from Iceberg's scan metrics: data
 * files read and skipped by pruning, and their bytes.
 */
public record ScanStatistics(int scans, long dataFiles, long bytes, long skippedFiles) {
  /**
   * The statistics of an executed query (the Dataset whose action ran, not one derived from it), or
   * empty when it scanned no table (a command).
   */
  public static Optional<ScanStatistics> of(Dataset<?> df) {
    long[] sums = new long[4];
    TableScans.forEach(
        df.queryExecution().executedPlan(),
        scan -> {
          sums[0]++;
          sums[1] += metric(scan, "resultDataFiles");
          sums[2] += Math.max(metric(scan, "totalDataFileSize"), metric(scan, "totalFileSizeInBytes"));
          sums[3] += metric(scan, "skippedDataFiles");
        });
    return sums[0] == 0 ? Optional.empty() : Optional.of(new ScanStatistics((int) sums[0], sums[1], sums[2], sums[3]));
  }

  private static long metric(SparkPlan plan, String name) {
    scala.Option<SQLMetric> metric = plan.metrics().get(name);
    return metric.isDefined() ? metric.get().value() : 0L;
  }

  /** For example {@code scanned 3 data files, 1.2 MiB; 5 files pruned}. */
  public String describe() {
    return "scanned " + dataFiles + (dataFiles == 1 ? " data file, " : " data files, ") + size(bytes)
        + "; " + skippedFiles + (skippedFiles == 1 ? " file" : " files") + " pruned";
  }

  public static String size(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
  }
}
