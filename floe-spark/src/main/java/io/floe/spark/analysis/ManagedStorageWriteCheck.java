package io.floe.spark.analysis;

import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.refresh.StorageWriteGuard;
import org.apache.iceberg.spark.source.SparkTable;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.plans.logical.V2WriteCommand;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.write.RowLevelOperationTable;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Refuses writes to the storage table of a MANAGED materialized view, except the refresh's own
 * commit. Runs on analyzed plans, where INSERT has become a V2 write command and DELETE, UPDATE
 * and MERGE have become row-level writes (a V2 write command on a {@link RowLevelOperationTable})
 * or, for tables without row-level support, stayed row-level commands.
 */
public final class ManagedStorageWriteCheck extends AbstractFunction1<LogicalPlan, BoxedUnit> {
  @Override
  public BoxedUnit apply(LogicalPlan plan) {
    plan.foreach(
        node -> {
          if (node instanceof V2WriteCommand) {
            check((LogicalPlan) ((V2WriteCommand) node).table());
          } else if (node instanceof DeleteFromTable) {
            check(((DeleteFromTable) node).table());
          } else if (node instanceof UpdateTable) {
            check(((UpdateTable) node).table());
          } else if (node instanceof MergeIntoTable) {
            check(((MergeIntoTable) node).targetTable());
          }
          return BoxedUnit.UNIT;
        });
    return BoxedUnit.UNIT;
  }

  private static void check(LogicalPlan target) {
    while (target instanceof SubqueryAlias) {
      target = ((SubqueryAlias) target).child();
    }
    if (!(target instanceof DataSourceV2Relation)) {
      return;
    }
    Table written = ((DataSourceV2Relation) target).table();
    // DELETE, UPDATE and MERGE write through a wrapper around the Iceberg table.
    if (written instanceof RowLevelOperationTable) {
      written = ((RowLevelOperationTable) written).table();
    }
    if (!(written instanceof SparkTable)) {
      return;
    }
    SparkTable table = (SparkTable) written;
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
