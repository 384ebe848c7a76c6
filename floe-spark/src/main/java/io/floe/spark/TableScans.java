package io.floe.spark;

import java.util.function.Consumer;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;

/** The table scans of an executed plan, through adaptive plans, query stages and subqueries. */
public final class TableScans {
  private TableScans() {}

  public static void forEach(SparkPlan plan, Consumer<BatchScanExec> action) {
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      forEach(adaptive.executedPlan(), action);
      return;
    }
    if (plan instanceof QueryStageExec stage) {
      forEach(stage.plan(), action);
      return;
    }
    if (plan instanceof BatchScanExec scan) {
      action.accept(scan);
    }
    Scala.list(plan.children()).forEach(child -> forEach(child, action));
    Scala.list(plan.subqueries()).forEach(sub -> forEach(sub, action));
  }
}
