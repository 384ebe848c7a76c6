package io.floe.spark.command;

import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;

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
public final class DropNamespaceCascadeCommand extends SparkDropCommand<DropNamespaceCascadeCommand.Target> {
  /** The namespace as written; Spark's plan of the statement says what a missing one does. */
  public record Target(List<String> parts) {}

  public DropNamespaceCascadeCommand(Target target, LogicalPlan sparkDrop) {
    super(target, sparkDrop);
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
      runSparkDrop(spark);
      return List.of();
    }
    List<Namespace> inside = new ArrayList<>(List.of(namespace));
    inside.addAll(MaterializedViewCatalog.descendants(namespaces, namespace));

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
    Set<String> names = new HashSet<>();
    tables.forEach(t -> names.add(t.toString()));
    views.forEach(v -> names.add(v.toString()));
    MaterializedViewDrop.dropAll(catalog, catalogName, MaterializedViewDrop.readersFirst(catalog, catalogName, names));
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
}
