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
    forEachNode(
        plan,
        node -> {
          if (node instanceof BatchScanExec scan) {
            action.accept(scan);
          }
        });
  }

  /**
   * Every operator of an executed plan, through adaptive plans (their final plan), query stages and
   * subqueries; the adaptive and stage wrappers themselves are passed over.
   */
  public static void forEachNode(SparkPlan plan, Consumer<SparkPlan> action) {
    if (plan instanceof AdaptiveSparkPlanExec adaptive) {
      forEachNode(adaptive.executedPlan(), action);
      return;
    }
    if (plan instanceof QueryStageExec stage) {
      forEachNode(stage.plan(), action);
      return;
    }
    action.accept(plan);
    Scala.list(plan.children()).forEach(child -> forEachNode(child, action));
    Scala.list(plan.subqueries()).forEach(sub -> forEachNode(sub, action));
  }
}
