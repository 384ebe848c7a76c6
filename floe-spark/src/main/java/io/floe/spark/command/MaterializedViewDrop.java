package io.floe.spark.command;

import io.floe.spark.mv.MaterializedView;

/** Removes a materialized view: first the view, so readers stop seeing it, then its storage data. */
final class MaterializedViewDrop {
  private MaterializedViewDrop() {}

  static void drop(MaterializedView mv) {
    mv.name().viewCatalog().dropView(mv.identifier());
    mv.name().catalog().dropTable(mv.storageName().identifier(), true);
  }
}
