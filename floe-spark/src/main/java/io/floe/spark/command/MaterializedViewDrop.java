package io.floe.spark.command;

import io.floe.graph.DependencyGraph;
import io.floe.spark.capture.ChangeFeed;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Removes a materialized view: first the view, so readers stop seeing it, then its storage data. */
final class MaterializedViewDrop {
  private static final Logger LOG = LoggerFactory.getLogger(MaterializedViewDrop.class);

  private MaterializedViewDrop() {}

  static void drop(MaterializedViewCatalog catalog, MaterializedView mv) {
    drop(catalog, mv.name(), mv.storageName());
  }

  /**
   * Drops {@code views} in their order (readers before what they read), then closes the change feed
   * of each MV they read that no MV left reads any more ({@link ChangeFeed#close}), so that its
   * refreshes stop writing one. A reader that a catalog could not list for opens it again at its
   * next refresh, and reads the changes made in between from the storage files: closing costs
   * time, never a wrong answer. So a feed that cannot be closed is logged, and the drop stands.
   */
  static void dropAll(MaterializedViewCatalog catalog, String catalogName, List<MaterializedView> views) {
    views.forEach(view -> drop(catalog, view));
    Set<String> read = new HashSet<>();
    views.forEach(view -> read.addAll(view.dependencyNames()));
    closeFeedsNoLongerRead(catalog, catalogName, read);
  }

  /**
   * Closes the change feed of each MV named in {@code formerlyRead} (read by views dropped, or by the
   * old definition of a replaced one) that no MV of the catalogs reads now, as {@link #dropAll}
   * describes. Lists the catalogs only when there is a name to look at.
   */
  static void closeFeedsNoLongerRead(MaterializedViewCatalog catalog, String catalogName, Set<String> formerlyRead) {
    if (formerlyRead.isEmpty()) {
      return;
    }
    Map<String, MaterializedView> left;
    try {
      left = catalog.byNameWithOtherCatalogs(catalogName, false);
    } catch (RuntimeException e) {
      LOG.warn("Cannot list the materialized views left after a drop or replacement; the change feeds of {} stay open",
          formerlyRead, e);
      return;
    }
    for (String name : formerlyRead) {
      MaterializedView source = left.get(name);
      if (source == null || left.values().stream().anyMatch(reader -> reader.dependencyNames().contains(name))) {
        continue;
      }
      try {
        if (ChangeFeed.close(source.storageTable())) {
          LOG.info("Closed the change feed of {}: no materialized view reads it any more", source);
        }
      } catch (RuntimeException e) {
        LOG.warn("Cannot close the change feed of {}, which no materialized view reads any more; its refreshes keep"
            + " writing it", source, e);
      }
    }
  }

  /**
   * Drops the view {@code name} and the table {@code storage}, whichever of them exists, and the old
   * storage a replacement interrupted before it could clean up left aside ({@link ReplacedView}).
   */
  static void drop(MaterializedViewCatalog catalog, ResolvedName name, ResolvedName storage) {
    name.viewCatalog().dropView(name.identifier());
    ResolvedName aside = ReplacedView.asideName(storage);
    for (ResolvedName table : List.of(storage, aside)) {
      name.catalog().dropTable(table.identifier(), true);
      // Spark's catalog caches tables; it would keep serving, and block re-creating, the dropped one.
      catalog.invalidateSparkCache(table);
    }
  }

  /**
   * The materialized views among {@code names} (tables, views and MVs of the catalog, by full name)
   * and every one that reads from any of them, directly or through another: what dropping them
   * drops, readers before what they read.
   */
  static List<MaterializedView> readersFirst(MaterializedViewCatalog catalog, String catalogName, Set<String> names) {
    Map<String, MaterializedView> all = catalog.byNameWithOtherCatalogs(catalogName, true);
    DependencyGraph<String> graph = MaterializedViewCatalog.dependencies(all.values());
    Set<String> dropped = new HashSet<>();
    for (String name : names) {
      if (all.containsKey(name)) {
        dropped.add(name);
      }
      if (graph.nodes().contains(name)) {
        dropped.addAll(graph.allReadersOf(name));
      }
    }
    List<String> order = new ArrayList<>(graph.topologicalOrder());
    Collections.reverse(order);
    return order.stream().filter(dropped::contains).filter(all::containsKey).map(all::get).toList();
  }
}
