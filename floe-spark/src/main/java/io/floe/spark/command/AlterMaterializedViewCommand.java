package io.floe.spark.command;

import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.sql.AlterAction;
import io.floe.sql.AlterMaterializedView;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.view.UpdateViewProperties;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code ALTER MATERIALIZED VIEW}: schedule, refresh policy and properties. These change view
 * properties only, not the view version, so the stored data stays valid.
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
          io.floe.spark.ivm.StorageLayout.PROPERTY,
          io.floe.mv.ExpectationsParser.PROPERTY,
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
      ((AlterAction.SetProperties) action)
          .properties()
          .forEach(
              (key, value) -> {
                checkNotReserved(mv, key);
                update.set(key, value);
              });
    } else if (action instanceof AlterAction.UnsetProperties) {
      AlterAction.UnsetProperties unset = (AlterAction.UnsetProperties) action;
      for (String key : unset.keys()) {
        checkNotReserved(mv, key);
        if (!mv.properties().containsKey(key)) {
          if (unset.ifExists()) {
            continue;
          }
          throw new FloeException("Cannot unset property '" + key + "' of " + mv + ": it is not set");
        }
        update.remove(key);
      }
    }
    update.commit();
    return List.of();
  }

  private static void checkNotReserved(MaterializedView mv, String key) {
    if (RESERVED.contains(key)) {
      throw new FloeException("Cannot change property '" + key + "' of " + mv + ": Floe maintains it");
    }
  }
}
