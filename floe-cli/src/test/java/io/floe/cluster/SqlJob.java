package io.floe.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A Spark application as a user's own job would be: it knows Spark's API only, and Floe comes in
 * through {@code spark.jars} and {@code spark.sql.extensions}. It waits for the cluster's
 * executors, prints how many there are, then runs each statement of a script ({@code ;} at the end
 * of a line ends one) and prints every result row as {@code | } and its cells joined by
 * {@code |}. A failing statement ends the job with a non-zero status.
 */
public final class SqlJob {
  private SqlJob() {}

  public static void main(String[] args) throws Exception {
    int executors = Integer.parseInt(args[1]);
    SparkSession spark = SparkSession.builder().getOrCreate();
    long deadline = System.nanoTime() + 180_000_000_000L;
    // The driver itself is one of the block managers counted.
    while (spark.sparkContext().getExecutorMemoryStatus().size() < executors + 1) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Executors did not register within 3 minutes");
      }
      Thread.sleep(200);
    }
    System.out.println("executors " + (spark.sparkContext().getExecutorMemoryStatus().size() - 1));
    for (String statement : Files.readString(Path.of(args[0])).split(";\\s*\n")) {
      if (statement.isBlank()) {
        continue;
      }
      System.out.println("> " + statement.strip());
      List<Row> rows = spark.sql(statement).collectAsList();
      for (Row row : rows) {
        System.out.println("| " + row.mkString("|"));
      }
    }
    spark.stop();
  }
}
