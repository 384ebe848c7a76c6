package io.floe.spark.command;

import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;

/** Removes a materialized view: first the view, so readers stop seeing it, then its storage data. */
final class MaterializedViewDrop {
  private MaterializedViewDrop() {}

  static void drop(MaterializedViewCatalog catalog, MaterializedView mv) {
    mv.name().viewCatalog().dropView(mv.identifier());
    mv.name().catalog().dropTable(mv.storageName().identifier(), true);
    // Spark's catalog caches tables; it would keep serving, and block re-creating, the dropped one.
    catalog.invalidateSparkCache(mv.storageName());
  }
}
