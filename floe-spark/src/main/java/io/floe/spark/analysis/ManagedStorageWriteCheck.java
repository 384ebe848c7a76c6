package io.floe.spark.analysis;

import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.refresh.StorageWriteGuard;
import org.apache.iceberg.spark.source.SparkTable;
import org.apache.spark.sql.catalyst.analysis.NamedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.V2WriteCommand;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Refuses writes to the storage table of a MANAGED materialized view, except the refresh's own
 * commit. Runs on analyzed plans, where every write has become a V2 write command.
 */
public final class ManagedStorageWriteCheck extends AbstractFunction1<LogicalPlan, BoxedUnit> {
  @Override
  public BoxedUnit apply(LogicalPlan plan) {
    plan.foreach(
        node -> {
          if (node instanceof V2WriteCommand) {
            check(((V2WriteCommand) node).table());
          }
          return BoxedUnit.UNIT;
        });
    return BoxedUnit.UNIT;
  }

  private static void check(NamedRelation target) {
    if (!(target instanceof DataSourceV2Relation)) {
      return;
    }
    DataSourceV2Relation relation = (DataSourceV2Relation) target;
    if (!(relation.table() instanceof SparkTable)) {
      return;
    }
    SparkTable table = (SparkTable) relation.table();
    var properties = table.table().properties();
    String owner = properties.get(MaterializedViewProperties.MATERIALIZED_VIEW);
    if (owner != null
        && Boolean.parseBoolean(properties.get(MaterializedViewProperties.MANAGED))
        && !StorageWriteGuard.writesAllowed(table.table().uuid().toString())) {
      throw new FloeException(
          "Cannot write to "
              + table.name()
              + ": it stores the MANAGED materialized view "
              + owner
              + ", which only REFRESH MATERIALIZED VIEW may change");
    }
  }
}
