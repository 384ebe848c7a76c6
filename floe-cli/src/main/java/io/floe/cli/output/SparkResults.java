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
    List<List<String>> rows = format == OutputFormat.JSON ? List.of() : TextRows.of(df);
    List<String> json = format == OutputFormat.JSON ? jsonLines(spark, df) : List.of();
    Optional<RewriteReport> report = RewriteReport.last(spark);
    Optional<String> scanned =
        ScanStatistics.of(df)
            .map(s -> s.describe()
                + report.map(r -> String.join(", ", r.used())).filter(u -> !u.isEmpty()).map(u -> "; answered from " + u).orElse(""));
    List<String> rewrite = RewriteSettings.reporting(spark) ? report.map(RewriteReport::lines).orElse(List.of()) : List.of();
    return new QueryResult(columns, rows, json, scanned, rewrite);
  }

  private static List<String> jsonLines(SparkSession spark, Dataset<Row> df) {
    if (df.columns().length == 0) {
      return List.of();
    }
    String previous = spark.conf().get("spark.sql.jsonGenerator.ignoreNullFields", "true");
    spark.conf().set("spark.sql.jsonGenerator.ignoreNullFields", "false");
    try {
      return df.toJSON().collectAsList();
    } finally {
      spark.conf().set("spark.sql.jsonGenerator.ignoreNullFields", previous);
    }
  }
}
