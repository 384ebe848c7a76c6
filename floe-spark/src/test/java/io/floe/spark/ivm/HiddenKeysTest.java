package io.floe.spark.ivm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spark.SameRows;
import io.floe.spark.SharedSpark;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * Keyed definitions and aggregates that do not select their key (an outer join's key, a group, a
 * window's partition, the column an IN or EXISTS subquery or a semi join matches) keep it in a hidden storage column
 * and refresh incrementally; readers never see the column.
 */
class HiddenKeysTest {
  private static final String MOR =
      "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'";

  private static final String[][] VIEWS = {
    {"enriched", "SELECT o.id, o.amount, c.segment FROM orders o LEFT JOIN customers c ON o.cust = c.cust"},
    {"matched", "SELECT o.id, c.segment, coalesce(o.amount, 0) AS amount FROM orders o FULL JOIN customers c ON o.cust = c.cust"},
    {"biggest", "SELECT id, amount FROM (SELECT *, row_number() OVER (PARTITION BY cust ORDER BY amount DESC, id) AS rn"
        + " FROM orders) WHERE rn = 1"},
    {"busy", "SELECT SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY cust HAVING COUNT(*) > 1"},
    {"gold_orders", "SELECT id, amount FROM orders WHERE cust IN (SELECT cust FROM customers WHERE segment = 'gold')"},
    {"known", "SELECT o.id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.cust = o.cust)"},
    {"unknown", "SELECT o.id, o.amount FROM orders o LEFT ANTI JOIN customers c ON c.cust = o.cust"},
    {"gold_totals", "SELECT COUNT(*) AS n, SUM(o.amount) AS total FROM orders o LEFT SEMI JOIN customers c"
        + " ON c.cust = o.cust AND c.segment = 'gold' GROUP BY o.cust"},
    {"customer_segments", "SELECT c.segment, SUM(o.amount) AS total, COUNT(*) AS n FROM orders o LEFT JOIN customers c"
        + " ON o.cust = c.cust GROUP BY o.cust, c.segment"},
    {"per_customer", "SELECT COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT amount) AS amounts, MAX(amount) AS top"
        + " FROM orders GROUP BY cust"},
    {"through_cte", "WITH big AS (SELECT * FROM orders WHERE amount > 1) SELECT big.id, c.segment FROM big FULL JOIN customers c"
        + " ON big.cust = c.cust"},
  };

  private SparkSession spark;

  @Test
  void keyedViewsThatDoNotSelectTheirKeyRefreshIncrementally() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("hiddenkeys");
    spark.sql("CREATE TABLE orders (id INT, cust INT, amount DECIMAL(10,2)) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE customers (cust INT, segment STRING) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO orders VALUES (1, 10, 5.00), (2, 10, 7.00), (3, 20, 1.00), (4, NULL, 2.00), (5, 30, 3.00), (5, 30, 3.00)");
    spark.sql("INSERT INTO customers VALUES (10, 'gold'), (20, 'silver'), (40, 'gold'), (NULL, 'void')");
    for (String[] view : VIEWS) {
      // REFRESH POLICY INCREMENTAL refuses a definition that cannot be incremental.
      spark.sql("CREATE MATERIALIZED VIEW " + view[0] + " REFRESH POLICY INCREMENTAL AS " + view[1]);
      assertMatches(view[0], view[1]);
    }
    spark.sql("CREATE MATERIALIZED VIEW segment_totals AS SELECT segment, COUNT(*) AS n, SUM(amount) AS total FROM enriched GROUP BY segment");

    // Readers see the view's columns only; EXPLAIN names the column the storage keeps.
    assertThat(spark.sql("SELECT * FROM enriched").columns()).containsExactly("id", "amount", "segment");
    assertThat(describedColumns("enriched")).containsExactly("id", "amount", "segment");
    // Outer joins need no key: a change of either side follows the outer join's delta rule.
    assertThat(ExplainedRefresh.detail(spark, "enriched", "definition")).startsWith("filters and projections over joins (LEFT OUTER)");
    assertThat(ExplainedRefresh.detail(spark, "matched", "definition")).startsWith("filters and projections over joins (FULL OUTER)");
    for (String view : new String[] {"enriched", "matched"}) {
      assertThat(spark.sql("SHOW TBLPROPERTIES " + view).collectAsList().stream().map(r -> r.getString(0)))
          .doesNotContain("floe.hidden-keys");
    }
    assertThat(ExplainedRefresh.detail(spark, "gold_orders", "definition")).contains("orders.cust (hidden)");
    assertThat(ExplainedRefresh.detail(spark, "busy", "definition")).isEqualTo("GROUP BY with HAVING, recomputed by group (orders.cust (hidden))");
    assertThat(ExplainedRefresh.detail(spark, "per_customer", "definition")).contains("orders.cust (hidden): key");
    assertThat(spark.sql("SELECT * FROM per_customer").columns()).containsExactly("n", "total", "amounts", "top");
    assertThat(spark.sql("SHOW CREATE TABLE enriched").first().getString(0))
        .doesNotContain("__floe").contains(VIEWS[0][1]);

    // Customers change segment, arrive and leave; orders move between customers and to NULL.
    spark.sql("INSERT INTO customers VALUES (30, 'gold')");
    spark.sql("UPDATE customers SET segment = 'bronze' WHERE cust = 10");
    spark.sql("DELETE FROM customers WHERE cust = 20");
    spark.sql("INSERT INTO orders VALUES (6, 40, 9.00), (7, 20, 4.00)");
    spark.sql("UPDATE orders SET cust = NULL WHERE id = 1");
    spark.sql("DELETE FROM orders WHERE id = 3");
    assertEachRefreshedIncrementally();

    // A MERGE touching both tables, then a source row that deletes a whole key.
    spark.sql("MERGE INTO orders t USING (SELECT 2 AS id, 40 AS cust, 8.00 AS amount UNION ALL SELECT 8, 10, 1.00) s"
        + " ON t.id = s.id WHEN MATCHED THEN UPDATE SET cust = s.cust, amount = s.amount WHEN NOT MATCHED THEN INSERT *");
    spark.sql("DELETE FROM customers WHERE cust = 30");
    spark.sql("DELETE FROM orders WHERE cust = 30");
    assertEachRefreshedIncrementally();

    Row downstream = spark.sql("REFRESH MATERIALIZED VIEW segment_totals").first();
    assertThat(downstream.getString(1)).as("refresh of a view over one with hidden keys: %s", downstream.getString(2))
        .isEqualTo("INCREMENTAL");
    assertMatches("segment_totals", "SELECT segment, COUNT(*) AS n, SUM(amount) AS total FROM (" + VIEWS[0][1] + ") GROUP BY segment");

    // Floe keeps the hidden keys itself.
    assertThatThrownBy(() -> spark.sql("ALTER MATERIALIZED VIEW busy SET TBLPROPERTIES ('floe.hidden-keys' = 'id')"))
        .hasMessageContaining("floe.hidden-keys");

    // Replaced by a definition that selects its key, the view keeps no hidden column.
    String selected =
        "SELECT o.id, o.cust, c.cust AS ccust, c.segment FROM orders o FULL JOIN customers c ON o.cust = c.cust";
    spark.sql("CREATE OR REPLACE MATERIALIZED VIEW matched AS " + selected);
    assertThat(spark.sql("SHOW TBLPROPERTIES matched").collectAsList().stream().map(r -> r.getString(0)))
        .doesNotContain("floe.hidden-keys");
    assertThat(ExplainedRefresh.detail(spark, "matched", "definition"))
        .startsWith("outer join, recomputed by join key (").doesNotContain("hidden");
    spark.sql("INSERT INTO orders VALUES (9, 10, 2.50)");
    assertRefreshedIncrementally("matched", selected);
  }

  /**
   * The hidden key is named as the definition's scope qualifies it, so a source that later gains a
   * column of the same name leaves it unambiguous; a column list renaming repeated names keeps the
   * view's columns by position.
   */
  @Test
  void hiddenKeysStayUnambiguousAndRepeatedNamesKeepTheirPositions() {
    spark = SharedSpark.session();
    SharedSpark.freshNamespace("hiddenkeynames");
    spark.sql("CREATE TABLE lefts (id INT, lk INT) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("CREATE TABLE rights (rk INT, id INT, label STRING) USING iceberg TBLPROPERTIES (" + MOR + ")");
    spark.sql("INSERT INTO lefts VALUES (1, 1), (2, NULL), (3, 2)");
    spark.sql("INSERT INTO rights VALUES (1, 100, 'a'), (2, 200, 'b')");
    String labelled = "SELECT l.id, r.label FROM lefts l LEFT JOIN rights r ON l.lk = r.rk";
    String pairs = "SELECT l.id, r.id FROM lefts l LEFT JOIN rights r ON l.lk = r.rk";
    spark.sql("CREATE MATERIALIZED VIEW labelled AS " + labelled);
    spark.sql("CREATE MATERIALIZED VIEW pairs (left_id, right_id) AS " + pairs);
    assertMatches("labelled", labelled);
    assertMatches("pairs", pairs);
    assertThat(spark.sql("SELECT * FROM pairs").columns()).containsExactly("left_id", "right_id");

    spark.sql("ALTER TABLE rights ADD COLUMN lk INT");
    spark.sql("INSERT INTO lefts VALUES (4, 1)");
    spark.sql("UPDATE rights SET label = 'c', lk = 9 WHERE rk = 2");
    assertRefreshedIncrementally("labelled", labelled);
    assertRefreshedIncrementally("pairs", pairs);
  }

  private void assertEachRefreshedIncrementally() {
    for (String[] view : VIEWS) {
      assertRefreshedIncrementally(view[0], view[1]);
    }
  }

  private void assertRefreshedIncrementally(String mv, String query) {
    Row result = spark.sql("REFRESH MATERIALIZED VIEW " + mv).first();
    assertThat(result.getString(1)).as("refresh type of %s: %s", mv, result.getString(2)).isEqualTo("INCREMENTAL");
    assertMatches(mv, query);
  }

  private void assertMatches(String mv, String query) {
    SameRows.assertSameRows(mv, spark.sql("SELECT * FROM " + mv), spark.sql(query));
    assertThat(spark.sql("SELECT * FROM " + mv).count()).as("rows of %s", mv).isPositive();
  }

  private List<String> describedColumns(String mv) {
    return spark.sql("DESCRIBE " + mv).collectAsList().stream()
        .map(r -> r.getString(0))
        .takeWhile(name -> !name.isEmpty() && !name.startsWith("#"))
        .collect(Collectors.toList());
  }
}
