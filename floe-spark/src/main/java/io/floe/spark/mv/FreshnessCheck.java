package io.floe.spark.mv;

import io.floe.FloeException;
import io.floe.mv.Freshness;
import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.mv.SourceState;
import io.floe.spark.capture.ChangeCapture;
import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.view.View;

/** Evaluates a materialized view's freshness against the catalog as it is now. */
public final class FreshnessCheck {
  private final MaterializedViewCatalog catalog;

  public FreshnessCheck(MaterializedViewCatalog catalog) {
    this.catalog = catalog;
  }

  public Freshness evaluate(MaterializedView mv) {
    Table storage = mv.storageTable();
    Optional<RefreshState> recorded = mv.refreshState(storage);
    if (recorded.isEmpty()) {
      Optional<String> outside = MaterializedView.writtenOutsideARefresh(storage);
      if (outside.isPresent()) {
        return Freshness.stale(outside.get());
      }
    }
    return Freshness.evaluate(mv.versionId(), recorded, sourcesOf(mv));
  }

  private Freshness.Sources sourcesOf(MaterializedView mv) {
    return new Freshness.Sources() {
      /** Each table source loaded once per evaluation: its state, compaction and ancestry read the same metadata. */
      private final java.util.Map<String, Optional<Table>> loaded = new java.util.HashMap<>();

      @Override
      public Optional<SourceState> current(SourceState recorded) {
        ResolvedName name = locate(mv, recorded);
        return recorded.type() == SourceState.Type.TABLE ? table(recorded).map(t -> tableState(name, t)) : currentView(name);
      }

      @Override
      public boolean sameRows(SourceState recorded, SourceState current) {
        return table(recorded)
            .map(t -> ChangeCapture.sameRows(t, recorded.snapshotId().orElseThrow(), current.snapshotId().orElseThrow()))
            .orElse(false);
      }

      @Override
      public boolean descendsFromRecorded(SourceState recorded, SourceState current) {
        return table(recorded)
            .map(t -> org.apache.iceberg.util.SnapshotUtil.isAncestorOf(
                t, current.snapshotId().orElseThrow(), recorded.snapshotId().orElseThrow()))
            // Its state says more: the dropped table is reported as such.
            .orElse(true);
      }

      /** The recorded table source as it is now; empty when it was dropped. */
      private Optional<Table> table(SourceState recorded) {
        ResolvedName name = locate(mv, recorded);
        return loaded.computeIfAbsent(name.toString(), key -> {
          try {
            return Optional.of(name.catalog().loadTable(name.identifier()));
          } catch (NoSuchTableException e) {
            return Optional.empty();
          }
        });
      }

      @Override
      public Freshness upstream(SourceState viewSource) {
        return catalog
            .load(locate(mv, viewSource))
            .map(FreshnessCheck.this::evaluate)
            .orElse(Freshness.stale("it is no longer a materialized view"));
      }
    };
  }

  /**
   * Finds the catalog of a recorded source among the MV's fully qualified source names: the
   * source itself, or the MV whose storage table it is (a refresh reads an upstream MV's storage).
   *
   * @throws FloeException naming the catalog when the source's catalog is not configured here
   */
  private ResolvedName locate(MaterializedView mv, SourceState state) {
    List<List<String>> candidates = new ArrayList<>();
    candidates.add(inCatalog(state.namespace(), state.name()));
    String suffix = MaterializedViewProperties.STORAGE_TABLE_SUFFIX;
    if (state.name().endsWith(suffix)) {
      candidates.add(inCatalog(state.namespace(), state.name().substring(0, state.name().length() - suffix.length())));
    }
    for (List<String> candidate : candidates) {
      for (QualifiedName source : mv.sources()) {
        List<String> parts = source.parts();
        if (parts.size() == candidate.size() + 1 && parts.subList(1, parts.size()).equals(candidate)) {
          String catalogName = parts.get(0);
          Catalog found = catalog.icebergCatalog(catalogName).orElseThrow(() -> new FloeException(
              "Materialized view " + mv + " reads " + source + ", and catalog " + catalogName + " is not configured here"));
          return new ResolvedName(catalogName, found, identifier(state));
        }
      }
    }
    return mv.name().withIdentifier(identifier(state));
  }

  private static List<String> inCatalog(List<String> namespace, String name) {
    List<String> parts = new ArrayList<>(namespace);
    parts.add(name);
    return parts;
  }

  private static TableIdentifier identifier(SourceState state) {
    return TableIdentifier.of(Namespace.of(state.namespace().toArray(new String[0])), state.name());
  }

  private static SourceState tableState(ResolvedName name, Table table) {
    return SourceState.table(
        name.namespace(),
        name.name(),
        table.uuid().toString(),
        table.currentSnapshot() == null ? null : table.currentSnapshot().snapshotId(),
        table.schema().schemaId());
  }

  private static Optional<SourceState> currentView(ResolvedName name) {
    if (!(name.catalog() instanceof ViewCatalog)) {
      return Optional.empty();
    }
    try {
      View view = ((ViewCatalog) name.catalog()).loadView(name.identifier());
      return Optional.of(
          SourceState.view(
              new ArrayList<>(List.of(name.identifier().namespace().levels())),
              name.name(),
              view.uuid().toString(),
              view.currentVersion().versionId()));
    } catch (NoSuchViewException e) {
      return Optional.empty();
    }
  }
}
