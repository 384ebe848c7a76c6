package io.floe.cli.output;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import io.floe.spark.rewrite.RewriteReport;
import io.floe.spark.rewrite.RewriteSettings;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Runs a statement on a Spark session and collects its result as text. */
public final class SparkResults {
  private SparkResults() {}

  /** Runs {@code sql} and collects the result in the shape {@code format} prints. */
  public static QueryResult run(SparkSession spark, String sql, OutputFormat format) {
    RewriteReport.clear(spark);
    Dataset<Row> df = spark.sql(sql);
    List<String> columns = Arrays.asList(df.columns());
    // The statistics come from the query that ran to collect the result, not from df itself,
    // whose own plan never executes.
    List<List<String>> rows = List.of();
    List<String> json = List.of();
    Dataset<?> executed = df;
    if (format == OutputFormat.JSON) {
      if (df.columns().length > 0) {
        Dataset<String> lines = df.toJSON();
        json = jsonLines(spark, lines);
        executed = lines;
      }
    } else {
      TextRows.Collected collected = TextRows.collect(df);
      rows = collected.rows();
      executed = collected.executed();
    }
    Optional<RewriteReport> report = RewriteReport.last(spark);
    Optional<String> scanned =
        ScanStatistics.of(executed)
            .map(s -> s.describe()
                + report.map(r -> String.join(", ", r.used())).filter(u -> !u.isEmpty()).map(u -> "; answered from " + u).orElse(""));
    List<String> rewrite = RewriteSettings.reporting(spark) ? report.map(RewriteReport::lines).orElse(List.of()) : List.of();
    return new QueryResult(columns, rows, json, scanned, rewrite);
  }

  /** Collects {@code lines}, a result as JSON, with its NULL fields written out. */
  private static List<String> jsonLines(SparkSession spark, Dataset<String> lines) {
    String previous = spark.conf().get("spark.sql.jsonGenerator.ignoreNullFields", "true");
    spark.conf().set("spark.sql.jsonGenerator.ignoreNullFields", "false");
    try {
      return lines.collectAsList();
    } finally {
      spark.conf().set("spark.sql.jsonGenerator.ignoreNullFields", previous);
    }
  }
}
