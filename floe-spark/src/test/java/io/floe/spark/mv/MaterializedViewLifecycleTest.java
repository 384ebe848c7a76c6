package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MaterializedViewLifecycleTest {
  private SparkSession spark;
  private String ns;

  @BeforeEach
  void setUp() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace("life");
    spark.sql("CREATE TABLE orders (id INT, region STRING, amount DECIMAL(10,2)) USING iceberg");
    spark.sql("INSERT INTO orders VALUES (1, 'Tokyo', 10.00), (2, 'Osaka', 20.00), (3, 'Tokyo', 5.50)");
  }

  @Test
  void createRefreshAndReadFromStorage() {
    spark.sql(
        "CREATE MATERIALIZED VIEW by_region AS SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM lake."
            + ns
            + ".orders GROUP BY region");
    List<Row> rows = spark.sql("SELECT region, n, total FROM by_region ORDER BY region").collectAsList();
    assertThat(rows).extracting(Row::toString).containsExactly("[Osaka,1,20.00]", "[Tokyo,2,15.50]");

    spark.sql("INSERT INTO orders VALUES (4, 'Nagoya', 1.00)");
    Row refresh = spark.sql("REFRESH MATERIALIZED VIEW by_region").first();
    assertThat(refresh.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(spark.sql("SELECT COUNT(*) FROM by_region").first().getLong(0)).isEqualTo(3);
    String plan = spark.sql("SELECT * FROM by_region").queryExecution().analyzed().toString();
    assertThat(plan).contains("by_region__storage");
  }
}
