package io.floe.demo;

import io.floe.cli.output.ScanStatistics;
import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.ResultFormatter;
import io.floe.cli.output.TextRows;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Prints each demo statement, runs it, and prints its result the way {@code floe sql} does. */
public final class DemoConsole {
  private static final int MAX_ROWS = 20;

  private final SparkSession spark;
  private final PrintStream out;

  public DemoConsole(SparkSession spark, PrintStream out) {
    this.spark = spark;
    this.out = out;
  }

  /** The columns of a refresh result, which the demo prints as one sentence per view. */
  private static final List<String> REFRESH_COLUMNS =
      List.of(
          "materialized_view", "refresh_type", "reason", "rows_read", "rows_written", "rows_removed",
          "duration_ms", "source_snapshots", "snapshot_id", "status", "attempts", "warnings", "expectations");

  /** The columns of an ingestion result, which the demo prints as one sentence per run. */
  private static final List<String> INGEST_COLUMNS =
      List.of(
          "streaming_table", "files_loaded", "rows_loaded", "rows_rescued", "columns_added", "warnings",
          "duration_ms", "snapshot_id");

  private static String describeIngestion(List<String> row) {
    String loaded = "-> " + row.get(0) + ": loaded " + row.get(1) + " new files, " + row.get(2) + " rows ("
        + row.get(3) + " rescued) in " + ResultFormatter.formatDuration(Long.parseLong(row.get(6)))
        + (row.get(4) == null || row.get(4).isEmpty() ? "" : "; new columns " + row.get(4))
        + (row.get(7) == null ? "; nothing committed" : "; snapshot " + row.get(7));
    return row.get(5) == null || row.get(5).isEmpty() ? loaded : loaded + "\n   warnings: " + row.get(5);
  }

  private static String describeRefresh(List<String> row) {
    String type = row.get(1);
    String status = row.get(9);
    if (!"SUCCEEDED".equals(status)) {
      return "-> " + row.get(0) + ": " + status + " (" + row.get(2) + ")";
    }
    if ("NO_CHANGE".equals(type)) {
      return "-> " + row.get(0) + ": nothing to do (" + row.get(2) + ")";
    }
    return "-> " + row.get(0) + ": " + type + " refresh (" + row.get(2) + "); read " + row.get(3)
        + " source rows, wrote " + row.get(4) + ", removed " + row.get(5) + " in "
        + ResultFormatter.formatDuration(Long.parseLong(row.get(6))) + "; storage snapshot " + row.get(8)
        + (row.get(11) == null ? "" : "; warning: " + row.get(11))
        + (row.size() > 12 && row.get(12) != null && !row.get(12).isEmpty()
            ? "\n   expectations: " + row.get(12)
            : "");
  }

  public SparkSession spark() {
    return spark;
  }

  /** A section heading. */
  public void heading(String title) {
    out.println();
    out.println("== " + title + " ==");
  }

  /** A line of narration. */
  public void say(String text) {
    out.println(text);
  }

  /** Prints and runs {@code sql}; returns its result as text. */
  public List<List<String>> run(String sql) {
    return runMeasured(sql).rows();
  }

  /** A result as text and what its scans read. */
  public record Measured(List<List<String>> rows, Optional<ScanStatistics> scanned) {}

  /** Prints and runs {@code sql}, then prints what it scanned, as {@code floe sql} does. */
  public Measured runShowingScans(String sql) {
    Measured measured = runMeasured(sql);
    measured.scanned().ifPresent(s -> out.println("(" + s.describe() + ")"));
    return measured;
  }

  private Measured runMeasured(String sql) {
    out.println();
    out.println("floe> " + sql.strip().replace("\n", "\n   -> ") + ";");
    long started = System.nanoTime();
    Dataset<Row> df = spark.sql(sql);
    String[] columns = df.columns();
    TextRows.Collected collected = TextRows.collect(df);
    List<List<String>> rows = collected.rows();
    long millis = (System.nanoTime() - started) / 1_000_000;
    if (List.of(columns).equals(REFRESH_COLUMNS)) {
      rows.forEach(row -> out.println(describeRefresh(row)));
    } else if (List.of(columns).equals(INGEST_COLUMNS)) {
      rows.forEach(row -> out.println(describeIngestion(row)));
    } else if (columns.length > 0) {
      List<List<String>> shown = rows.size() > MAX_ROWS ? rows.subList(0, MAX_ROWS) : rows;
      out.print(ResultFormatter.format(List.of(columns), shown, OutputFormat.TABLE));
      if (rows.size() > MAX_ROWS) {
        out.println("(" + (rows.size() - MAX_ROWS) + " more rows not shown)");
      }
    }
    out.println("(" + rows.size() + (rows.size() == 1 ? " row, " : " rows, ") + ResultFormatter.formatDuration(millis) + ")");
    return new Measured(rows, ScanStatistics.of(collected.executed()));
  }
}
