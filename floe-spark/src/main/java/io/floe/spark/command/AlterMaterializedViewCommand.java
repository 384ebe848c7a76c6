package io.floe.spark.command;

import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.sql.AlterAction;
import io.floe.sql.AlterMaterializedView;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.view.UpdateViewProperties;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code ALTER MATERIALIZED VIEW}: schedule, refresh policy and properties. These change view or
 * storage table properties only, not the view version, so the stored data stays valid.
 */
public final class AlterMaterializedViewCommand extends FloeCommand<AlterMaterializedView> {
  /**
   * Properties that carry Floe's own bookkeeping, or that their own clauses set and check, and
   * cannot be set by hand.
   */
  private static final Set<String> RESERVED =
      Set.of(
          MaterializedViewProperties.STORAGE_TABLE,
          MaterializedViewProperties.MANAGED,
          MaterializedViewProperties.SCHEDULE,
          MaterializedViewProperties.REFRESH_POLICY,
          MaterializedView.SOURCES,
          MaterializedView.FIXED_READS,
          io.floe.spark.ivm.StorageLayout.PROPERTY,
          io.floe.spark.ivm.HiddenKeys.PROPERTY,
          MaterializedView.COLLATED_COLUMNS,
          io.floe.mv.ExpectationsParser.PROPERTY,
          io.floe.spark.pipeline.PipelineRun.PIPELINE,
          io.floe.spark.pipeline.PipelineRun.DEFINITION_HASH,
          "isMaterializedView",
          "spark.query-column-names");


  public AlterMaterializedViewCommand(AlterMaterializedView statement) {
    super(statement, List.of());
  }


  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.loadExisting(catalog.resolve(statement().name()), "alter materialized view");
    UpdateViewProperties update = mv.view().updateProperties();
    AlterAction action = statement().action();
    if (action instanceof AlterAction.SetSchedule) {
      update.set(MaterializedViewProperties.SCHEDULE, ((AlterAction.SetSchedule) action).schedule().toSql());
    } else if (action instanceof AlterAction.DropSchedule) {
      if (mv.schedule().isEmpty()) {
        throw new FloeException("Cannot drop the schedule of " + mv + ": it has none");
      }
      update.remove(MaterializedViewProperties.SCHEDULE);
    } else if (action instanceof AlterAction.SetRefreshPolicy) {
      io.floe.mv.RefreshPolicy policy = ((AlterAction.SetRefreshPolicy) action).policy();
      if (policy == io.floe.mv.RefreshPolicy.INCREMENTAL) {
        // As CREATE does: INCREMENTAL promises that source changes never force a full refresh.
        new io.floe.spark.refresh.RefreshExecutor(spark)
            .whyNeverIncremental(mv)
            .ifPresent(why -> {
              throw new FloeException("Cannot set REFRESH POLICY INCREMENTAL on " + mv + ": " + why);
            });
      }
      update.set(MaterializedViewProperties.REFRESH_POLICY, policy.name());
    } else if (action instanceof AlterAction.SetProperties) {
      setProperties(mv, ((AlterAction.SetProperties) action).properties(), update);
      return List.of();
    } else if (action instanceof AlterAction.UnsetProperties) {
      unsetProperties(mv, (AlterAction.UnsetProperties) action, update);
      return List.of();
    }
    update.commit();
    return List.of();
  }

  /**
   * Sets {@code comment} on the view and every other key on the storage table, where {@code CREATE}
   * puts an MV's TBLPROPERTIES and where Floe reads them (compaction, retention, quarantine).
   */
  private static void setProperties(MaterializedView mv, Map<String, String> properties, UpdateViewProperties view) {
    properties.keySet().forEach(key -> checkNotReserved(mv, key));
    StorageProperties.check("alter materialized view " + mv, properties);
    UpdateProperties storage = mv.storageTable().updateProperties();
    boolean onView = false;
    boolean onStorage = false;
    for (Map.Entry<String, String> property : properties.entrySet()) {
      if (property.getKey().equals(MaterializedViewProperties.COMMENT)) {
        view.set(property.getKey(), property.getValue());
        onView = true;
      } else {
        storage.set(property.getKey(), property.getValue());
        onStorage = true;
      }
    }
    if (onStorage) {
      storage.commit();
    }
    if (onView) {
      view.commit();
    }
  }

  /** Removes each key from where it is set: the storage table, the view (comment, or a key set there before), or both. */
  private static void unsetProperties(MaterializedView mv, AlterAction.UnsetProperties unset, UpdateViewProperties view) {
    org.apache.iceberg.Table table = mv.storageTable();
    Map<String, String> stored = table.properties();
    UpdateProperties storage = table.updateProperties();
    boolean onView = false;
    boolean onStorage = false;
    for (String key : unset.keys()) {
      checkNotReserved(mv, key);
      boolean inStorage = stored.containsKey(key) && !key.equals(MaterializedViewProperties.COMMENT);
      boolean inView = mv.properties().containsKey(key);
      if (inStorage) {
        storage.remove(key);
        onStorage = true;
      }
      if (inView) {
        view.remove(key);
        onView = true;
      }
      if (!inStorage && !inView && !unset.ifExists()) {
        throw new FloeException("Cannot unset property '" + key + "' of " + mv + ": it is not set");
      }
    }
    if (onStorage) {
      storage.commit();
    }
    if (onView) {
      view.commit();
    }
  }

  private static void checkNotReserved(MaterializedView mv, String key) {
    if (RESERVED.contains(key) || key.startsWith(io.floe.spark.mv.DefinitionSettings.PREFIX) || StorageProperties.kept(key)) {
      throw new FloeException("Cannot change property '" + key + "' of " + mv + ": Floe maintains it");
    }
  }
}
