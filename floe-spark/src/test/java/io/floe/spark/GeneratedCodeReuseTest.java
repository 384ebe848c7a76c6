package io.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.metrics.source.CodegenMetrics;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * A pipeline refreshed again and again after small changes runs the same plans each time, so the
 * session compiles their generated code once: a refresh's cost is its data, not recompiling Spark's
 * classes (see {@link EmbeddedLakehouse#CODEGEN_CACHE}).
 */
class GeneratedCodeReuseTest {
  private final SparkSession spark = SharedSpark.session();

  @Test
  void repeatedSmallRefreshesOfAPipelineCompileAlmostNothingAfterTheFirst() {
    SharedSpark.freshNamespace("codegen");
    spark.sql(
        "CREATE TABLE trips (trip_id BIGINT, city STRING, driver STRING, rider STRING, fare DOUBLE, status STRING)"
            + " USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.delete.mode' = 'merge-on-read',"
            + " 'write.update.mode' = 'merge-on-read')");
    spark.sql(
        "INSERT INTO trips VALUES (1, 'Austin', 'd1', 'r1', 10.0, 'completed'), (2, 'Austin', 'd2', 'r1', 12.5, 'completed'),"
            + " (3, 'Boston', 'd1', 'r2', 7.0, 'cancelled'), (4, 'Boston', 'd3', 'r3', 20.0, 'completed')");
    spark.sql(
        "CREATE MATERIALIZED VIEW silver AS SELECT trip_id, upper(city) AS city, driver, rider,"
            + " CAST(fare AS DECIMAL(10, 2)) AS fare, CASE WHEN fare > 15 THEN 'high' ELSE 'low' END AS band"
            + " FROM trips WHERE status = 'completed'");
    spark.sql(
        "CREATE MATERIALIZED VIEW gold AS SELECT city, band, COUNT(*) AS trips, COUNT(DISTINCT driver) AS drivers,"
            + " COUNT(DISTINCT rider) AS riders, SUM(fare) AS revenue FROM silver GROUP BY city, band");

    List<Long> compiledPerRound = new ArrayList<>();
    for (int round = 0; round < 4; round++) {
      long before = compilations();
      spark.sql(
          "INSERT INTO trips VALUES (" + (10 + round) + ", 'Austin', 'd" + (4 + round) + "', 'r" + (5 + round)
              + "', " + (11.0 + round) + ", 'completed')");
      spark.sql("UPDATE trips SET fare = fare + 1 WHERE trip_id = " + (1 + round % 2));
      for (String mv : List.of("silver", "gold")) {
        Row result = spark.sql("REFRESH MATERIALIZED VIEW " + mv).first();
        assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
      }
      compiledPerRound.add(compilations() - before);
    }

    Dataset<Row> gold = spark.sql("SELECT * FROM gold");
    Dataset<Row> definition = spark.sql(
        "SELECT upper(city) AS city, CASE WHEN fare > 15 THEN 'high' ELSE 'low' END AS band, COUNT(*),"
            + " COUNT(DISTINCT driver), COUNT(DISTINCT rider), SUM(CAST(fare AS DECIMAL(10, 2)))"
            + " FROM trips WHERE status = 'completed' GROUP BY 1, 2");
    SameRows.assertSameRows("gold", gold, definition);
    // A round writes to the table and refreshes both views: well over a hundred generated classes
    // the first time. Later rounds compile only code that differs by a literal.
    assertThat(compiledPerRound.subList(2, 4))
        .as("classes compiled per round %s", compiledPerRound)
        .allSatisfy(compiled -> assertThat(compiled).isLessThan(40));
  }

  private static long compilations() {
    return CodegenMetrics.METRIC_COMPILATION_TIME().getCount();
  }
}
