package io.floe.spark.command;

import io.floe.graph.DependencyGraph;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import scala.collection.immutable.Seq;

/**
 * {@code DROP NAMESPACE ... CASCADE} (or {@code DATABASE}, {@code SCHEMA}) of a namespace of an
 * Iceberg catalog. Iceberg's catalogs drop only an empty namespace, whatever {@code CASCADE} says,
 * and a materialized view must go before what it reads and with its storage table. So Floe empties
 * the namespace first, as {@code DROP TABLE ... CASCADE} would for each table in it: the
 * materialized views that read its tables or views (in any namespace, readers first), its own
 * materialized views, its plain views, its tables (without purging their files, as {@code DROP
 * TABLE} without {@code PURGE}), and its child namespaces likewise; then the namespace. Anything
 * else is Spark's statement, run as parsed.
 */
public final class DropNamespaceCascadeCommand extends FloeCommand<DropNamespaceCascadeCommand.Target> {
  /** The namespace as written, and whether a missing one is fine. */
  public record Target(List<String> parts, boolean ifExists) {}

  private final LogicalPlan sparkDrop;

  public DropNamespaceCascadeCommand(Target target, LogicalPlan sparkDrop) {
    super(target, List.of());
    this.sparkDrop = sparkDrop;
  }

  /** Spark copies plan nodes through their constructor; the parsed drop is its second argument. */
  @Override
  public Seq<Object> otherCopyArgs() {
    return Scala.seq(List.<Object>of(sparkDrop));
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    List<String> parts = statement().parts();
    org.apache.spark.sql.connector.catalog.CatalogManager manager = spark.sessionState().catalogManager();
    boolean named = parts.size() > 1 && manager.isCatalogRegistered(parts.get(0));
    String catalogName = named ? parts.get(0) : manager.currentCatalog().name();
    List<String> levels = named ? parts.subList(1, parts.size()) : parts;
    Optional<Catalog> iceberg = catalog.icebergCatalog(catalogName);
    Namespace namespace = Namespace.of(levels.toArray(new String[0]));
    if (iceberg.isEmpty()
        || !(iceberg.get() instanceof SupportsNamespaces namespaces)
        || !namespaces.namespaceExists(namespace)) {
      Dataset.ofRows(spark, sparkDrop);
      return List.of();
    }
    List<Namespace> inside = new ArrayList<>(List.of(namespace));
    inside.addAll(MaterializedViewCatalog.descendants(namespaces, namespace));

    Set<String> insideNames = new HashSet<>();
    List<ResolvedName> tables = new ArrayList<>();
    List<ResolvedName> views = new ArrayList<>();
    for (Namespace level : inside) {
      for (TableIdentifier table : iceberg.get().listTables(level)) {
        tables.add(new ResolvedName(catalogName, iceberg.get(), table));
      }
      if (iceberg.get() instanceof ViewCatalog viewCatalog) {
        for (TableIdentifier view : viewCatalog.listViews(level)) {
          views.add(new ResolvedName(catalogName, iceberg.get(), view));
        }
      }
    }
    tables.forEach(t -> insideNames.add(t.toString()));
    views.forEach(v -> insideNames.add(v.toString()));

    for (MaterializedView mv : materializedViewsToDrop(catalog, catalogName, insideNames)) {
      MaterializedViewDrop.drop(catalog, mv);
      insideNames.remove(mv.name().toString());
    }
    for (ResolvedName view : views) {
      if (view.viewCatalog().viewExists(view.identifier())) {
        view.viewCatalog().dropView(view.identifier());
      }
    }
    for (ResolvedName table : tables) {
      // A storage table went with its view above.
      if (table.catalog().tableExists(table.identifier())) {
        table.catalog().dropTable(table.identifier(), false);
        catalog.invalidateSparkCache(table);
      }
    }
    for (int i = inside.size() - 1; i >= 0; i--) {
      namespaces.dropNamespace(inside.get(i));
    }
    return List.of();
  }

  /**
   * The materialized views in the namespace and every one that reads from it, directly or through
   * another, readers before what they read.
   */
  private static List<MaterializedView> materializedViewsToDrop(
      MaterializedViewCatalog catalog, String catalogName, Set<String> insideNames) {
    Map<String, MaterializedView> all = new LinkedHashMap<>();
    DependencyGraph<String> graph = new DependencyGraph<>();
    for (MaterializedView mv : catalog.listAll(catalogName)) {
      all.put(mv.name().toString(), mv);
      graph.addNode(mv.name().toString());
      mv.sourceNames().forEach(source -> graph.addEdge(source, mv.name().toString()));
    }
    Set<String> dropped = new HashSet<>();
    for (String name : insideNames) {
      if (all.containsKey(name)) {
        dropped.add(name);
      }
      if (graph.nodes().contains(name)) {
        dropped.addAll(graph.allReadersOf(name));
      }
    }
    List<String> order = new ArrayList<>(graph.topologicalOrder());
    java.util.Collections.reverse(order);
    return order.stream().filter(dropped::contains).filter(all::containsKey).map(all::get).toList();
  }
}
