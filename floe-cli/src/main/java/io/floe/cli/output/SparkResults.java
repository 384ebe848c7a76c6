package io.floe.cli.output;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Runs a statement on a Spark session and collects its result as text. */
public final class SparkResults {
  private SparkResults() {}

  /** Runs {@code sql} and collects the result in the shape {@code format} prints. */
  public static QueryResult run(SparkSession spark, String sql, OutputFormat format) {
    Dataset<Row> df = spark.sql(sql);
    if (format == OutputFormat.JSON) {
      return new QueryResult(Arrays.asList(df.columns()), List.of(), jsonLines(spark, df));
    }
    return new QueryResult(Arrays.asList(df.columns()), TextRows.of(df), List.of());
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
