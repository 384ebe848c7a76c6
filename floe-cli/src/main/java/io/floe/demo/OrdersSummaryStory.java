package io.floe.demo;

import java.util.List;

/**
 * The orders summary of the "Glue Iceberg materialized views, tried out" post: ten orders, an MV
 * grouping them by region and category, two more orders and a full refresh. The post's Glue job
 * script runs unchanged but for the catalog name.
 */
final class OrdersSummaryStory {
  static final String NAMESPACE = "iceberg_mv";
  static final String SUMMARY_QUERY =
      "SELECT * FROM %s.iceberg_mv.orders_summary_mv\nORDER BY region, product_category";

  private final DemoConsole console;
  private final String catalog;

  OrdersSummaryStory(DemoConsole console, String catalog) {
    this.console = console;
    this.catalog = catalog;
  }

  /** Tells the story; returns the summary table after the refresh, as printed. */
  List<List<String>> tell() {
    console.heading("Story 2: orders summary MV (region x category)");
    console.run("CREATE DATABASE IF NOT EXISTS " + catalog + ".iceberg_mv");
    console.run("USE " + catalog + ".iceberg_mv");
    console.run(
        "CREATE TABLE "
            + catalog
            + ".iceberg_mv.orders (\n"
            + "    order_id INT,\n"
            + "    customer_name STRING,\n"
            + "    product_category STRING,\n"
            + "    amount DECIMAL(10, 2),\n"
            + "    quantity INT,\n"
            + "    order_date DATE,\n"
            + "    region STRING\n"
            + ")\n"
            + "USING iceberg\n"
            + "PARTITIONED BY (region)");
    console.run(
        "INSERT INTO "
            + catalog
            + ".iceberg_mv.orders VALUES\n"
            + "    (1, 'Tanaka Taro', 'Electronics', 150000.00, 1, DATE('2025-12-01'), 'Tokyo'),\n"
            + "    (2, 'Suzuki Hanako', 'Clothing', 25000.00, 3, DATE('2025-12-02'), 'Osaka'),\n"
            + "    (3, 'Yamamoto Ken', 'Electronics', 89000.00, 2, DATE('2025-12-03'), 'Tokyo'),\n"
            + "    (4, 'Sato Yuki', 'Books', 5500.00, 5, DATE('2025-12-04'), 'Fukuoka'),\n"
            + "    (5, 'Watanabe Akira', 'Electronics', 45000.00, 1, DATE('2025-12-05'), 'Tokyo'),\n"
            + "    (6, 'Takahashi Mika', 'Clothing', 18000.00, 2, DATE('2025-12-06'), 'Osaka'),\n"
            + "    (7, 'Ito Kenji', 'Books', 12000.00, 4, DATE('2025-12-07'), 'Sapporo'),\n"
            + "    (8, 'Nakamura Emi', 'Electronics', 200000.00, 1, DATE('2025-12-08'), 'Tokyo'),\n"
            + "    (9, 'Kobayashi Ryo', 'Clothing', 35000.00, 2, DATE('2025-12-09'), 'Osaka'),\n"
            + "    (10, 'Kato Ayumi', 'Books', 8500.00, 3, DATE('2025-12-10'), 'Sapporo')");
    console.run(
        "CREATE MATERIALIZED VIEW "
            + catalog
            + ".iceberg_mv.orders_summary_mv\n"
            + "AS SELECT\n"
            + "    region,\n"
            + "    product_category,\n"
            + "    COUNT(*) AS order_count,\n"
            + "    SUM(quantity) AS total_quantity,\n"
            + "    SUM(amount) AS total_amount,\n"
            + "    AVG(amount) AS avg_amount,\n"
            + "    MIN(order_date) AS first_order_date,\n"
            + "    MAX(order_date) AS last_order_date\n"
            + "FROM "
            + catalog
            + ".iceberg_mv.orders\n"
            + "GROUP BY region, product_category");
    console.run(String.format(SUMMARY_QUERY, catalog));
    console.run(
        "INSERT INTO "
            + catalog
            + ".iceberg_mv.orders VALUES\n"
            + "    (11, 'Morita Sota', 'Electronics', 320000.00, 1, DATE('2025-12-11'), 'Tokyo'),\n"
            + "    (12, 'Honda Sakura', 'Books', 15000.00, 6, DATE('2025-12-12'), 'Nagoya')");
    console.run("REFRESH MATERIALIZED VIEW " + catalog + ".iceberg_mv.orders_summary_mv FULL");
    List<List<String>> summary = console.run(String.format(SUMMARY_QUERY, catalog));
    console.run("SHOW TBLPROPERTIES " + catalog + ".iceberg_mv.orders_summary_mv");
    return summary;
  }
}
