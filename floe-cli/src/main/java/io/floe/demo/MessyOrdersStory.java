package io.floe.demo;

import io.floe.cli.output.ScanStatistics;
import io.floe.demo.data.MessyOrdersGenerator;
import io.floe.demo.data.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The messy orders lake of the "medallion data lake with AWS Glue" tutorial: 550 raw JSON orders
 * with duplicates, mixed-case categories, null amounts and two date formats land as files in two
 * batches; a streaming table loads each batch's files once (the crawler and the job bookmarks); a
 * Silver MV cleans them as the tutorial's Glue job does, with expectations counting and dropping
 * null amounts and unparseable dates instead of losing them without trace; two Gold MVs aggregate
 * completed orders. No jobs, crawlers or workflow: one streaming table and three MV definitions.
 */
final class MessyOrdersStory {
  static final String NAMESPACE = "medallion_db";

  /** The orders of the first batch of files; the rest arrive later. */
  static final int FIRST_BATCH = 330;

  /** The tutorial job's rules as expectations: rows without an amount or a date are counted and dropped. */
  static final String SILVER_EXPECTATIONS =
      "  CONSTRAINT valid_amount EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW,\n"
          + "  CONSTRAINT valid_order_date EXPECT (order_date IS NOT NULL) ON VIOLATION DROP ROW";

  /** The tutorial job's cleaning, as one definition: dedupe, normalize, cast, parse both date formats. */
  static final String SILVER_QUERY =
      "SELECT order_id, customer_id, category, amount, order_date, status, quantity\n"
          + "FROM (\n"
          + "  SELECT order_id, customer_id,\n"
          + "         lower(trim(category)) AS category,\n"
          + "         CAST(amount AS DECIMAL(10,2)) AS amount,\n"
          + "         coalesce(to_date(try_to_timestamp(order_date, 'yyyy-MM-dd')),\n"
          + "                  to_date(try_to_timestamp(order_date, 'MM/dd/yyyy'))) AS order_date,\n"
          + "         status, CAST(quantity AS INT) AS quantity,\n"
          + "         row_number() OVER (PARTITION BY order_id\n"
          + "                            ORDER BY customer_id, category, amount, order_date, status, quantity) AS occurrence\n"
          + "  FROM %1$s.medallion_db.bronze_orders\n"
          + "  WHERE order_id IS NOT NULL)\n"
          + "WHERE occurrence = 1";

  private final DemoConsole console;
  private final String catalog;
  private final Path landing;

  MessyOrdersStory(DemoConsole console, String catalog, Path landing) {
    this.console = console;
    this.catalog = catalog;
    this.landing = landing;
  }

  private String db() {
    return catalog + "." + NAMESPACE;
  }

  /** Tells the story; returns the generated orders. */
  List<Order> tell() {
    console.heading("Story 3: messy orders lake (raw JSON -> Bronze -> Silver -> Gold)");
    List<Order> orders = MessyOrdersGenerator.generate(42);
    List<Path> first;
    List<Path> second;
    try {
      first = MessyOrdersGenerator.writeJsonLines(orders.subList(0, FIRST_BATCH), landing, 3);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the raw order files to " + landing, e);
    }
    console.say(
        "Wrote the first " + FIRST_BATCH + " of " + orders.size() + " raw orders (500 orders, 50 duplicates) as JSON lines in "
            + first.size() + " files under " + landing);
    console.run("CREATE NAMESPACE IF NOT EXISTS " + db());
    console.say("\nBronze: a streaming table loads each new file once, inferring the schema (the crawler's job).");
    console.run(
        "CREATE STREAMING TABLE " + db() + ".bronze_orders AS\nSELECT * FROM STREAM read_files('" + landing.toAbsolutePath()
            + "', format => 'json')");

    console.say("\nSilver: the Glue job's cleaning as one materialized view; its rules are expectations, counted at every refresh.");
    console.run(
        "CREATE MATERIALIZED VIEW " + db() + ".silver_orders (\n" + SILVER_EXPECTATIONS + ")\n"
            + "COMMENT 'Silver: deduplicated, typed and normalized orders'\nAS\n"
            + String.format(SILVER_QUERY, catalog));

    try {
      second = MessyOrdersGenerator.writeJsonLines(orders.subList(FIRST_BATCH, orders.size()), landing, 2, first.size() + 1);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the raw order files to " + landing, e);
    }
    console.say("\nA second batch lands: " + (orders.size() - FIRST_BATCH) + " orders in " + second.size()
        + " new files. Only they are loaded (the job bookmark's job).");
    console.run("REFRESH STREAMING TABLE " + db() + ".bronze_orders");
    console.run("SELECT COUNT(*) AS total_orders, COUNT(DISTINCT _source_file) AS files FROM " + db() + ".bronze_orders");
    console.run(
        "SELECT category, SUM(amount) AS total_revenue\nFROM " + db()
            + ".bronze_orders\nGROUP BY category\nORDER BY total_revenue DESC");
    console.run("REFRESH MATERIALIZED VIEW " + db() + ".silver_orders");
    console.run("SELECT COUNT(*) AS silver_orders FROM " + db() + ".silver_orders");
    console.run("SELECT DISTINCT category FROM " + db() + ".silver_orders ORDER BY category");

    console.say("\nGold: revenue by category and customer lifetime value, on completed orders.");
    console.run(
        "CREATE MATERIALIZED VIEW " + db() + ".revenue_by_category AS\n"
            + "SELECT category, SUM(amount) AS total_revenue, COUNT(order_id) AS order_count,\n"
            + "       AVG(amount) AS avg_order_value\n"
            + "FROM " + db() + ".silver_orders\nWHERE status = 'completed'\nGROUP BY category");
    console.run(
        "CREATE MATERIALIZED VIEW " + db() + ".customer_ltv AS\n"
            + "SELECT customer_id, SUM(amount) AS total_spend, COUNT(order_id) AS total_orders,\n"
            + "       AVG(amount) AS avg_order_value\n"
            + "FROM " + db() + ".silver_orders\nWHERE status = 'completed'\nGROUP BY customer_id");
    console.run(
        "SELECT category, total_revenue, order_count\nFROM " + db()
            + ".revenue_by_category\nORDER BY total_revenue DESC");

    console.say("\nBronze vs Gold: the same question of both layers, with the data each query scanned.");
    DemoConsole.Measured bronze =
        console.runShowingScans(
            "SELECT SUM(amount) AS bronze_revenue\nFROM " + db() + ".bronze_orders\nWHERE status = 'completed'");
    DemoConsole.Measured gold =
        console.runShowingScans("SELECT SUM(total_revenue) AS gold_revenue\nFROM " + db() + ".revenue_by_category");
    console.say("");
    console.say(String.format(Locale.ROOT, "%-8s %14s %14s", "layer", "total_revenue", "data scanned"));
    console.say(side("Bronze", bronze));
    console.say(side("Gold", gold));
    console.say("Duplicates inflate the raw revenue; Gold reads a small pre-aggregated table instead of every raw order.");
    console.run(
        "SELECT customer_id, total_spend, total_orders, avg_order_value\nFROM " + db()
            + ".customer_ltv\nORDER BY total_spend DESC\nLIMIT 5");
    return orders;
  }

  private static String side(String layer, DemoConsole.Measured measured) {
    String revenue = measured.rows().isEmpty() ? "" : measured.rows().get(0).get(0);
    String scanned = measured.scanned().map(s -> ScanStatistics.size(s.bytes())).orElse("-");
    return String.format(Locale.ROOT, "%-8s %14s %14s", layer, revenue, scanned);
  }
}
