package io.floe.spark.ivm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IncrementalRefreshTest {
  private static final String COW = "'format-version'='2'";
  private static final String MOR =
      "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'";

  private SparkSession spark;

  private void assertMatches(String mv, String query) {
    // Doubles are compared rounded: sums maintained by counters add in another order.
    Dataset<Row> actual = spark.sql("SELECT * FROM " + mv);
    Dataset<Row> expected = spark.sql(query);
    assertThat(actual.exceptAll(expected).count())
        .as("rows in %s not in its definition: %s vs %s", mv, actual.collectAsList(), expected.collectAsList())
        .isZero();
    assertThat(expected.exceptAll(actual).count()).as("rows of the definition missing in %s", mv).isZero();
  }

  private Row refresh(String mv) {
    return spark.sql("REFRESH MATERIALIZED VIEW " + mv).first();
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void linearAndAggregateViewsFollowInsertsUpdatesAndDeletesIncrementally(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivm");
    spark.sql("CREATE TABLE t (id INT, k STRING, v DECIMAL(10,2), d STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO t VALUES (1, 'a', 1.00, 'x'), (2, 'a', 2.00, 'y'), (3, 'b', NULL, 'x'), (4, 'b', 4.00, 'x'), (4, 'b', 4.00, 'x')");
    String linear = "SELECT id, upper(k) AS k, v * 2 AS v2 FROM t WHERE id > 1";
    String grouped = "SELECT k, COUNT(*) AS n, SUM(v) AS total, COUNT(v) AS nv, MAX(v) AS top, COUNT(DISTINCT d) AS ds FROM t GROUP BY k";
    String counters = "SELECT k, COUNT(*) AS n, SUM(v) AS total FROM t GROUP BY k";
    spark.sql("CREATE MATERIALIZED VIEW lin AS " + linear);
    spark.sql("CREATE MATERIALIZED VIEW grp AS " + grouped);
    spark.sql("CREATE MATERIALIZED VIEW cnt AS " + counters);
    spark.sql("CREATE MATERIALIZED VIEW gold AS SELECT k, COUNT(*) AS n FROM lin GROUP BY k");
    String distinct = "SELECT DISTINCT k, upper(d) FROM t";
    spark.sql("CREATE MATERIALIZED VIEW dst AS " + distinct);

    spark.sql("INSERT INTO t VALUES (5, 'c', 5.00, 'z'), (6, 'a', NULL, 'x')");
    spark.sql("UPDATE t SET v = 10.00 WHERE id = 2");
    spark.sql("DELETE FROM t WHERE id = 4");
    spark.sql("DELETE FROM t WHERE k = 'c'");
    for (String mv : new String[] {"lin", "grp", "cnt", "gold", "dst"}) {
      Row result = refresh(mv);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertMatches("lin", linear);
    assertMatches("grp", grouped);
    assertMatches("cnt", counters);
    assertMatches("gold", "SELECT k, COUNT(*) AS n FROM (" + linear + ") GROUP BY k");
    assertMatches("dst", distinct);

    // A group that empties out is deleted, and a SUM whose inputs are all NULL again is NULL.
    spark.sql("DELETE FROM t WHERE k = 'a' AND v IS NOT NULL");
    assertThat(refresh("cnt").getString(1)).isEqualTo("INCREMENTAL");
    assertMatches("cnt", counters);
    spark.sql("DELETE FROM t WHERE k = 'b'");
    assertThat(refresh("cnt").getString(1)).isEqualTo("INCREMENTAL");
    assertMatches("cnt", counters);
    assertThat(spark.sql("SELECT * FROM cnt WHERE k = 'b'").count()).isZero();

    // Compaction changes no row, costs no recompute and still advances the recorded snapshot.
    String ns = spark.sql("SELECT current_database()").first().getString(0);
    spark.sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".t', options => map('rewrite-all','true'))");
    Row compacted = refresh("lin");
    assertThat(compacted.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(compacted.getLong(4)).isZero();
    assertMatches("lin", linear);
    assertThat(refresh("lin").getString(1)).isEqualTo("NO_CHANGE");
  }

  @ParameterizedTest
  @ValueSource(strings = {COW, MOR})
  void joinsAndUnionAllFollowChangesToEitherSide(String properties) {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("ivmjoin");
    spark.sql("CREATE TABLE orders (id INT, cust INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("CREATE TABLE customers (cust INT, region STRING) USING iceberg TBLPROPERTIES (" + properties + ")");
    spark.sql("INSERT INTO orders VALUES (1, 10, 5.00), (2, 10, 7.00), (3, 20, 1.00), (4, NULL, 2.00)");
    spark.sql("INSERT INTO customers VALUES (10, 'east'), (20, 'west'), (30, 'west')");
    String joined = "SELECT o.id, o.amount, c.region FROM orders o JOIN customers c ON o.cust = c.cust";
    String byRegion =
        "SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o JOIN customers c ON o.cust = c.cust GROUP BY c.region";
    String unioned = "SELECT cust AS k FROM orders UNION ALL SELECT cust AS k FROM customers";
    spark.sql("CREATE MATERIALIZED VIEW joined AS " + joined);
    spark.sql("CREATE MATERIALIZED VIEW by_region AS " + byRegion);
    spark.sql("CREATE MATERIALIZED VIEW unioned AS " + unioned);

    spark.sql("INSERT INTO orders VALUES (5, 30, 3.00), (6, 20, 4.00)");
    spark.sql("UPDATE customers SET region = 'north' WHERE cust = 10");
    spark.sql("DELETE FROM customers WHERE cust = 20");
    spark.sql("INSERT INTO customers VALUES (40, 'south'), (30, 'west')");
    for (String mv : new String[] {"joined", "by_region", "unioned"}) {
      Row result = refresh(mv);
      assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    }
    assertMatches("joined", joined);
    assertMatches("by_region", byRegion);
    assertMatches("unioned", unioned);

    spark.sql("DELETE FROM orders WHERE cust = 30");
    spark.sql("DELETE FROM customers WHERE region = 'west'");
    for (String mv : new String[] {"joined", "by_region", "unioned"}) {
      assertThat(refresh(mv).getString(1)).isEqualTo("INCREMENTAL");
    }
    assertMatches("joined", joined);
    assertMatches("by_region", byRegion);
    assertMatches("unioned", unioned);
  }
}
