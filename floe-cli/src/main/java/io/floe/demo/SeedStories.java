package io.floe.demo;

import io.floe.demo.data.Order;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.spark.sql.SparkSession;

/**
 * The stories of the seed documents, told in one run of {@code floe demo}. Each run first drops the
 * demo's namespaces and raw files, so it starts over cleanly on the same warehouse.
 */
public final class SeedStories {
  private final SparkSession spark;
  private final Path warehouse;
  private final DemoConsole console;
  private final String catalog;

  private List<List<String>> ordersSummary;
  private List<Order> messyOrders;

  public SeedStories(SparkSession spark, Path warehouse, PrintStream out, String catalog) {
    this.spark = spark;
    this.warehouse = warehouse;
    this.console = new DemoConsole(spark, out);
    this.catalog = catalog;
  }

  public void tellAll() {
    reset();
    new RideSharingStory(console, catalog).tell();
    ordersSummary = new OrdersSummaryStory(console, catalog).tell();
    messyOrders = new MessyOrdersStory(console, catalog, landing()).tell();
  }

  /** The orders summary table after its refresh, as printed. */
  public List<List<String>> ordersSummary() {
    return ordersSummary;
  }

  /** The raw orders the messy-orders story generated. */
  public List<Order> messyOrders() {
    return messyOrders;
  }

  Path landing() {
    return warehouse.resolve("landing").resolve("orders");
  }

  /** Drops what an earlier run left: the demo namespaces with their views and tables, and the raw files. */
  void reset() {
    MaterializedViewCatalog views = new MaterializedViewCatalog(spark);
    Catalog lake =
        views
            .icebergCatalog(catalog)
            .orElseThrow(() -> new IllegalStateException("Catalog " + catalog + " is not an Iceberg catalog"));
    for (String name :
        List.of(RideSharingStory.NAMESPACE, OrdersSummaryStory.NAMESPACE, MessyOrdersStory.NAMESPACE)) {
      Namespace namespace = Namespace.of(name);
      if (!(lake instanceof SupportsNamespaces) || !((SupportsNamespaces) lake).namespaceExists(namespace)) {
        continue;
      }
      if (lake instanceof ViewCatalog) {
        for (TableIdentifier view : ((ViewCatalog) lake).listViews(namespace)) {
          ((ViewCatalog) lake).dropView(view);
        }
      }
      for (TableIdentifier table : lake.listTables(namespace)) {
        lake.dropTable(table, true);
        views.invalidateSparkCache(new ResolvedName(catalog, lake, table));
      }
      ((SupportsNamespaces) lake).dropNamespace(namespace);
    }
    deleteRecursively(landing());
    spark.sql("USE " + catalog);
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove " + dir, e);
    }
  }
}
