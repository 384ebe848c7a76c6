package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * A seed script as a Glue user writes it, run statement by statement through {@code spark.sql} on a
 * session configured only with {@code spark.sql.extensions} and the catalog settings.
 */
class GlueStyleScriptTest {
  @Test
  void seedScriptRunsThroughSparkSql() {
    SparkSession spark = SharedSpark.session();
    assertThat(spark.conf().get("spark.sql.extensions")).contains("io.floe.spark.FloeSparkSessionExtensions");
    String db = "glue_" + Long.toHexString(System.nanoTime());
    String sales = "lake." + db + ".sales";
    String mv = "lake." + db + ".sales_by_region";
    String direct = "SELECT region, count(*) AS orders, sum(amount) AS revenue FROM " + sales + " GROUP BY region";

    spark.sql("CREATE DATABASE lake." + db);
    spark.sql("USE lake." + db);
    spark.sql("CREATE TABLE " + sales + " (id BIGINT, region STRING, amount DOUBLE) USING iceberg PARTITIONED BY (region)");
    spark.sql("INSERT INTO " + sales + " VALUES (1, 'us-east', 10.0), (2, 'eu-west', 20.0), (3, 'us-east', 5.0)");
    List<Row> created = spark.sql("CREATE MATERIALIZED VIEW " + mv + " AS " + direct).collectAsList();
    assertThat(created).singleElement().satisfies(r -> assertThat(r.getString(1)).isEqualTo("FULL"));

    assertThat(rows(spark, "SELECT * FROM " + mv + " ORDER BY region"))
        .containsExactly("[eu-west,1,20.0]", "[us-east,2,15.0]");

    spark.sql("INSERT INTO " + sales + " VALUES (4, 'ap-south', 7.0), (5, 'us-east', 1.0)");
    assertThat(rows(spark, "SELECT * FROM " + mv + " ORDER BY region"))
        .as("not refreshed yet")
        .containsExactly("[eu-west,1,20.0]", "[us-east,2,15.0]");

    List<Row> refreshed = spark.sql("REFRESH MATERIALIZED VIEW " + mv + " FULL").collectAsList();
    assertThat(refreshed).singleElement().satisfies(r -> assertThat(r.getString(1)).isEqualTo("FULL"));

    assertThat(rows(spark, "SELECT * FROM " + mv + " ORDER BY region"))
        .containsExactly("[ap-south,1,7.0]", "[eu-west,1,20.0]", "[us-east,3,16.0]")
        .containsExactlyElementsOf(rows(spark, direct + " ORDER BY region"));

    Map<String, String> properties =
        spark.sql("SHOW TBLPROPERTIES " + mv).collectAsList().stream()
            .collect(Collectors.toMap(r -> r.getString(0), r -> r.getString(1)));
    assertThat(properties)
        .containsEntry("isMaterializedView", "true")
        .containsEntry("lastRefreshType", "FULL")
        .containsEntry("viewOriginalText", direct);
    assertThat(properties.get("current-snapshot-id")).matches("-?\\d+");
  }

  private static List<String> rows(SparkSession spark, String query) {
    return spark.sql(query).collectAsList().stream().map(Row::toString).collect(Collectors.toList());
  }
}
