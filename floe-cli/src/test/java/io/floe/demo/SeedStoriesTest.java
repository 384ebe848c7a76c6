package io.floe.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.ResultFormatter;
import io.floe.cli.output.TextRows;
import io.floe.demo.data.MessyOrdersGenerator;
import io.floe.spark.SameRows;
import io.floe.spark.SharedSpark;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The demo's three stories, told once on the shared test lakehouse. */
class SeedStoriesTest {
  /** The result table of the orders summary post after its refresh, as the post prints it. */
  private static final String SEED_001_TABLE =
      "+-------+----------------+-----------+--------------+------------+-------------+----------------+---------------+\n"
          + "|region |product_category|order_count|total_quantity|total_amount|avg_amount   |first_order_date|last_order_date|\n"
          + "+-------+----------------+-----------+--------------+------------+-------------+----------------+---------------+\n"
          + "|Fukuoka|Books           |1          |5             |5500.00     |5500.000000  |2025-12-04      |2025-12-04     |\n"
          + "|Nagoya |Books           |1          |6             |15000.00    |15000.000000 |2025-12-12      |2025-12-12     |\n"
          + "|Osaka  |Clothing        |3          |7             |78000.00    |26000.000000 |2025-12-02      |2025-12-09     |\n"
          + "|Sapporo|Books           |2          |7             |20500.00    |10250.000000 |2025-12-07      |2025-12-10     |\n"
          + "|Tokyo  |Electronics     |5          |6             |804000.00   |160800.000000|2025-12-01      |2025-12-11     |\n"
          + "+-------+----------------+-----------+--------------+------------+-------------+----------------+---------------+\n";

  private static SparkSession spark;
  private static SeedStories stories;
  private static String printed;

  @BeforeAll
  static void tellTheStories() {
    spark = SharedSpark.session();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    stories = new SeedStories(spark, SharedSpark.warehouse(), new PrintStream(out, true, StandardCharsets.UTF_8), "lake");
    stories.tellAll();
    printed = out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void ordersSummaryEqualsTheSeedTable() {
    Dataset<Row> summary = spark.sql(String.format(OrdersSummaryStory.SUMMARY_QUERY, "lake"));
    String table = ResultFormatter.format(List.of(summary.columns()), TextRows.of(summary), OutputFormat.TABLE);
    assertThat(table).isEqualTo(SEED_001_TABLE);
    assertThat(printed).contains(SEED_001_TABLE);
  }

  @Test
  void silverRowCountEqualsARecomputationFromTheGeneratedFile() {
    long silver = spark.sql("SELECT COUNT(*) FROM lake.medallion_db.silver_orders").first().getLong(0);
    assertThat(silver).isEqualTo(MessyOrdersGenerator.expectedSilverRowCount(stories.messyOrders()));
    assertThat(spark.sql("SELECT COUNT(*) FROM lake.medallion_db.bronze_orders").first().getLong(0)).isEqualTo(550);
    List<String> categories =
        spark.sql("SELECT DISTINCT category FROM lake.medallion_db.silver_orders ORDER BY 1")
            .collectAsList().stream().map(r -> r.getString(0)).toList();
    assertThat(categories).containsExactly("books", "clothing", "electronics", "home & garden", "sports");
  }

  @Test
  void bronzeLoadsEachBatchOnceAndSilverCountsItsExpectations() {
    Row files = spark.sql(
        "SELECT COUNT(DISTINCT _source_file), COUNT(DISTINCT _ingested_at), COUNT(_rescued_data) "
            + "FROM lake.medallion_db.bronze_orders").first();
    assertThat(files.getLong(0)).isEqualTo(5);
    assertThat(files.getLong(1)).isEqualTo(2);
    assertThat(files.getLong(2)).isZero();
    assertThat(printed).contains("bronze_orders: loaded 3 new files, " + MessyOrdersStory.FIRST_BATCH + " rows");
    assertThat(printed).contains("bronze_orders: loaded 2 new files, " + (550 - MessyOrdersStory.FIRST_BATCH) + " rows");
    // The second batch's refresh is incremental: its expectations judge the Silver rows of the
    // order ids the batch touched, recomputed over all of Bronze.
    String silverBeforeExpectations = String.format(MessyOrdersStory.SILVER_QUERY, "lake");
    long nullAmongTouched = spark.sql(
        "SELECT COUNT(*) FROM (" + silverBeforeExpectations + ") WHERE amount IS NULL AND order_id IN "
            + "(SELECT order_id FROM lake.medallion_db.bronze_orders WHERE _ingested_at = "
            + "(SELECT MAX(_ingested_at) FROM lake.medallion_db.bronze_orders))").first().getLong(0);
    assertThat(printed).contains("silver_orders: INCREMENTAL refresh (sources appended rows)");
    assertThat(printed).contains("expectations: valid_amount: ");
    assertThat(printed).contains(" " + nullAmongTouched + " failed (DROP ROW); valid_order_date: ");
  }

  @Test
  void goldEqualsItsDefinitionOverBronzeAfterInsertMergeAndDelete() {
    String direct =
        "SELECT city, DATE(CAST(trip_start_time AS TIMESTAMP)) AS trip_date, COUNT(*) AS total_trips, "
            + "COUNT(DISTINCT driver_id) AS active_drivers, COUNT(DISTINCT rider_id) AS active_riders, "
            + "SUM(total_amount) AS total_revenue, SUM(distance_miles) AS total_distance, SUM(tip_amount) AS total_tips "
            + "FROM lake.urbanride.trips_bronze WHERE status = 'completed' AND trip_id IS NOT NULL "
            + "AND driver_id IS NOT NULL AND rider_id IS NOT NULL AND total_amount >= 0 AND distance_miles >= 0 "
            + "GROUP BY city, DATE(CAST(trip_start_time AS TIMESTAMP))";
    // Double sums depend on addition order, so both sides are compared rounded.
    String rounded =
        "SELECT city, trip_date, total_trips, active_drivers, active_riders, ROUND(total_revenue, 6), "
            + "ROUND(total_distance, 6), ROUND(total_tips, 6) FROM ";
    Dataset<Row> expected = spark.sql(rounded + "(" + direct + ")");
    Dataset<Row> actual = spark.sql(rounded + "lake.urbanride.mv_city_daily_metrics");
    SameRows.assertSameRows("mv_city_daily_metrics", actual, expected);
    Row demoDay =
        spark.sql("SELECT total_trips, total_tips FROM lake.urbanride.mv_city_daily_metrics "
            + "WHERE trip_date = '2024-12-15' AND city = 'Seattle'").first();
    assertThat(demoDay.getLong(0)).isEqualTo(2);
    assertThat(demoDay.getDouble(1)).isEqualTo(23.0);
    assertThat(spark.sql("SELECT * FROM lake.urbanride.mv_city_daily_metrics WHERE city = 'Portland'").count()).isZero();
  }

  @Test
  void printsEachStatementAndTheBronzeVersusGoldComparison() {
    assertThat(printed)
        .contains("floe> CREATE MATERIALIZED VIEW IF NOT EXISTS lake.urbanride.mv_trips_silver")
        .contains("bronze_revenue")
        .contains("gold_revenue")
        .containsPattern("Bronze +[0-9.]+ +[0-9.]+ (B|KiB)")
        .containsPattern("Gold +[0-9.]+ +[0-9.]+ (B|KiB)")
        .contains("STALE: source urbanride.trips_bronze has new commits");
    // What each query scanned, from Iceberg's scan metrics: Gold reads less than Bronze, neither nothing.
    double bronze = scannedBytes("Bronze");
    double gold = scannedBytes("Gold");
    assertThat(gold).isPositive().isLessThan(bronze);
  }

  /** The data-scanned figure printed on the comparison line of {@code layer}, in bytes. */
  private static double scannedBytes(String layer) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^" + layer + " +[0-9.]+ +([0-9.]+) (B|KiB|MiB)$").matcher(printed);
    assertThat(m.find()).as("comparison line of %s in %s", layer, printed).isTrue();
    double value = Double.parseDouble(m.group(1));
    return m.group(2).equals("B") ? value : m.group(2).equals("KiB") ? value * 1024 : value * 1024 * 1024;
  }

  @Test
  void resetDropsEverythingTheDemoCreated() {
    // Runs last in effect for the namespaces it checks: the other tests read before this drops.
    SeedStories fresh = new SeedStories(spark, SharedSpark.warehouse(), new PrintStream(new ByteArrayOutputStream()), "lake");
    fresh.reset();
    assertThat(spark.sql("SHOW NAMESPACES IN lake").collectAsList())
        .extracting(r -> r.getString(0))
        .doesNotContain("urbanride", "iceberg_mv", "medallion_db");
    stories.tellAll();
  }
}
