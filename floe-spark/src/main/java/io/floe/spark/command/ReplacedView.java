package io.floe.spark.command;

import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.spark.mv.ViewVersions;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.view.UpdateViewProperties;
import org.apache.iceberg.view.View;
import org.apache.iceberg.view.ViewVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A materialized view that {@code CREATE OR REPLACE} is replacing, kept until the replacement's
 * first refresh commits, so that a replacement that fails leaves the view as it was: its
 * definition (the same view version, so its recorded refresh state still matches), its properties,
 * and its storage table with its rows. A replacement that needs a new storage table renames the old
 * one aside ({@code <storage>__replaced}) instead of dropping it, and drops it once the replacement
 * committed. A catalog that cannot rename tables gets the old behaviour: the old storage is dropped
 * and a failed replacement keeps the new definition, empty.
 */
public final class ReplacedView {
  private static final Logger LOG = LoggerFactory.getLogger(ReplacedView.class);
  private static final String ASIDE_SUFFIX = "__replaced";

  private final MaterializedViewCatalog catalog;
  private final MaterializedView before;
  private final ViewVersion version;
  private final Schema schema;
  private final Map<String, String> viewProperties;
  private final Map<String, String> storageProperties;
  private final boolean newStorage;
  private final Optional<ResolvedName> aside;

  /**
   * Keeps what {@code before} is; when the replacement needs {@code newStorage}, moves its storage
   * table out of the way.
   */
  ReplacedView(MaterializedViewCatalog catalog, MaterializedView before, boolean newStorage) {
    this.catalog = catalog;
    this.before = before;
    this.version = before.view().currentVersion();
    this.schema = before.view().schema();
    this.viewProperties = Map.copyOf(before.view().properties());
    Table storage = before.storageTable();
    this.storageProperties = Map.copyOf(storage.properties());
    this.newStorage = newStorage;
    this.aside = newStorage ? moveStorageAside() : Optional.empty();
  }

  /** Where a replacement keeps the old {@code storage} table until it commits. */
  static ResolvedName asideName(ResolvedName storage) {
    return storage.sibling(storage.name() + ASIDE_SUFFIX);
  }

  private Optional<ResolvedName> moveStorageAside() {
    ResolvedName storage = before.storageName();
    ResolvedName asideName = asideName(storage);
    // One left by a replacement that was interrupted before it could clean up.
    storage.catalog().dropTable(asideName.identifier(), true);
    Optional<ResolvedName> moved;
    try {
      storage.catalog().renameTable(storage.identifier(), asideName.identifier());
      moved = Optional.of(asideName);
    } catch (UnsupportedOperationException e) {
      LOG.warn("Catalog {} cannot rename tables; replacing {} drops its old storage first", storage.catalogName(), before, e);
      storage.catalog().dropTable(storage.identifier(), true);
      moved = Optional.empty();
    }
    // Spark's catalog caches tables; without this its CREATE TABLE of the new storage sees the old one.
    catalog.invalidateSparkCache(storage);
    catalog.invalidateSparkCache(asideName);
    return moved;
  }

  /**
   * The replacement committed: the old storage table is dropped, and the change feeds of the MVs
   * only the old definition read are closed ({@link MaterializedViewDrop#closeFeedsNoLongerRead}).
   * Neither can undo the replacement: a table that cannot be dropped is logged and left (the next
   * replacement drops it first).
   */
  public void commit() {
    aside.ifPresent(
        name -> {
          try {
            name.catalog().dropTable(name.identifier(), true);
            catalog.invalidateSparkCache(name);
          } catch (RuntimeException e) {
            LOG.warn("Replaced {}, but cannot drop its old storage table {}; drop it by hand", before, name, e);
          }
        });
    // Only what the new definition stopped reading can be left without readers: the common
    // replacement, an unchanged or widened definition, stops reading nothing and lists no catalog.
    java.util.Set<String> noLongerRead = new java.util.HashSet<>(before.dependencyNames());
    try {
      catalog.load(before.name()).ifPresent(now -> noLongerRead.removeAll(now.dependencyNames()));
    } catch (RuntimeException e) {
      LOG.warn("Replaced {}, but cannot load it back to tell which views it stopped reading", before, e);
      return;
    }
    MaterializedViewDrop.closeFeedsNoLongerRead(catalog, before.name().catalogName(), noLongerRead);
  }

  /**
   * The replacement failed: the view, its properties and its storage table are put back as they
   * were. A failure to do so is added to {@code failure}, which the caller throws.
   */
  public void restore(RuntimeException failure) {
    if (newStorage && aside.isEmpty()) {
      return; // the old storage is gone; the view keeps its new definition, as created
    }
    try {
      ResolvedName storage = before.storageName();
      if (newStorage) {
        storage.catalog().dropTable(storage.identifier(), true);
        storage.catalog().renameTable(aside.get().identifier(), storage.identifier());
        catalog.invalidateSparkCache(aside.get());
      } else {
        Table table = storage.catalog().loadTable(storage.identifier());
        UpdateProperties update = table.updateProperties();
        storageProperties.forEach(update::set);
        table.properties().keySet().stream().filter(k -> !storageProperties.containsKey(k)).forEach(update::remove);
        update.commit();
      }
      catalog.invalidateSparkCache(storage);
      restoreView();
      catalog.invalidateSparkCache(before.name());
    } catch (RuntimeException e) {
      LOG.error("Cannot put {} back as it was before its failed replacement", before, e);
      failure.addSuppressed(e);
    }
  }

  private void restoreView() {
    View view = before.name().viewCatalog().loadView(before.name().identifier());
    // The old version itself, id and all, so that the recorded refresh state matches it again.
    ViewVersions.restore(view, version, schema);
    View replaced = before.name().viewCatalog().loadView(before.name().identifier());
    UpdateViewProperties update = replaced.updateProperties();
    viewProperties.forEach(update::set);
    replaced.properties().keySet().stream().filter(k -> !viewProperties.containsKey(k)).forEach(update::remove);
    update.commit();
  }
}
