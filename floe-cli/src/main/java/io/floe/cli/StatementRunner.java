package io.floe.cli;

import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.ResultFormatter;
import io.floe.sql.SqlScript;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import io.floe.spark.rewrite.RewriteReport;
import io.floe.spark.rewrite.RewriteSettings;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs SQL statements and prints their results. A failure prints one line naming the problem on
 * the error stream; the stack trace goes to the log.
 */
final class StatementRunner {
  private static final Logger LOG = LoggerFactory.getLogger(StatementRunner.class);

  private final SparkSession spark;
  private final PrintWriter out;
  private final PrintWriter err;
  private final OutputFormat format;
  private final boolean timing;
  private final boolean stats;

  StatementRunner(SparkSession spark, PrintWriter out, PrintWriter err, OutputFormat format, boolean timing) {
    this(spark, out, err, format, timing, false);
  }

  /**
   * @param stats after a query's timing, print what it scanned and the materialized view that
   *     answered it, if any
   */
  StatementRunner(SparkSession spark, PrintWriter out, PrintWriter err, OutputFormat format, boolean timing, boolean stats) {
    this.spark = spark;
    this.out = out;
    this.err = err;
    this.format = format;
    this.timing = timing;
    this.stats = stats;
  }

  /** Runs every statement of {@code script} in order, stopping at the first failure. */
  boolean runScript(String script) {
    for (String statement : SqlScript.split(script)) {
      if (!run(statement)) {
        return false;
      }
    }
    return true;
  }

  /** Runs one statement; false when it failed (the error is already printed). */
  boolean run(String sql) {
    long started = System.nanoTime();
    try {
      RewriteReport.clear(spark);
      Dataset<Row> df = spark.sql(sql);
      if (format == OutputFormat.JSON) {
        printJson(df, started);
      } else {
        QueryResult result = QueryResult.collect(df, started);
        if (!result.columns().isEmpty()) {
          out.print(ResultFormatter.format(result.columns(), result.rows(), format));
        }
        printTiming(result.rows().size(), result.elapsedMillis());
      }
      printStatistics(df);
      out.flush();
      return true;
    } catch (Exception e) { // Spark's AnalysisException is a checked exception thrown unchecked
      LOG.error("Statement failed: {}", sql, e);
      err.println("Error: " + errorLine(e));
      err.flush();
      return false;
    }
  }

  /** The scan statistics line and, when the session asks for it, the rewrite report. */
  private void printStatistics(Dataset<Row> df) {
    Optional<RewriteReport> report = RewriteReport.last(spark);
    if (stats && timing) {
      Optional<ScanStatistics> scanned = ScanStatistics.of(df);
      if (scanned.isPresent()) {
        String used = report.map(r -> String.join(", ", r.used())).filter(u -> !u.isEmpty())
            .map(u -> "; answered from " + u).orElse("");
        err.println("(" + scanned.get().describe() + used + ")");
      }
    }
    if (RewriteSettings.reporting(spark) && report.isPresent()) {
      report.get().lines().forEach(line -> err.println("rewrite: " + line));
    }
    err.flush();
  }

  private void printJson(Dataset<Row> df, long started) {
    String previous = spark.conf().get("spark.sql.jsonGenerator.ignoreNullFields", "true");
    spark.conf().set("spark.sql.jsonGenerator.ignoreNullFields", "false");
    List<String> lines;
    try {
      lines = df.columns().length == 0 ? List.of() : df.toJSON().collectAsList();
    } finally {
      spark.conf().set("spark.sql.jsonGenerator.ignoreNullFields", previous);
    }
    lines.forEach(out::println);
    printTiming(lines.size(), (System.nanoTime() - started) / 1_000_000);
  }

  private void printTiming(int rows, long millis) {
    out.flush();
    if (timing) {
      err.println("(" + rows + (rows == 1 ? " row" : " rows") + ", " + ResultFormatter.formatDuration(millis) + ")");
    }
  }

  /**
   * The one line a user sees for a failure: the first line of the innermost message that says
   * something, without Spark's trailing SQL-state and plan text.
   */
  static String errorLine(Throwable e) {
    Throwable shown = e;
    while (shown.getCause() != null
        && (shown.getMessage() == null || shown.getMessage().isBlank() || isWrapper(shown))) {
      shown = shown.getCause();
    }
    String message = shown.getMessage() == null ? shown.getClass().getSimpleName() : shown.getMessage();
    int newline = message.indexOf('\n');
    if (newline >= 0) {
      message = message.substring(0, newline);
    }
    int sqlState = message.indexOf(" SQLSTATE:");
    if (sqlState > 0) {
      message = message.substring(0, sqlState);
    }
    return message.trim();
  }

  private static boolean isWrapper(Throwable e) {
    String name = e.getClass().getName();
    return name.endsWith("ExecutionException") || name.endsWith("InvocationTargetException");
  }
}
