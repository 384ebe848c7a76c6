package io.floe.cli;

import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.QueryResult;
import io.floe.cli.output.SparkResults;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/** Statements run on local Spark started for this command. */
final class EmbeddedSqlSession implements SqlSession {
  private final SparkSession spark;

  private EmbeddedSqlSession(SparkSession spark) {
    this.spark = spark;
  }

  /** Starts (or joins) Spark for the lakehouse. */
  static SqlSession start(LakehouseOptions lakehouse, Path warehouse) {
    return new EmbeddedSqlSession(LakehouseSession.start(lakehouse, warehouse));
  }

  @Override
  public QueryResult run(String sql, OutputFormat format) {
    return SparkResults.run(spark, sql, format);
  }

  @Override
  public void cancel() {
    // This Spark runs only this command's statements, one at a time.
    spark.sparkContext().cancelAllJobs();
  }
}
