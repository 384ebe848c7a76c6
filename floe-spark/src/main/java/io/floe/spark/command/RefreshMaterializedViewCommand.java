package io.floe.spark.command;

import io.floe.graph.DependencyGraph;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshStatus;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.GraphRefresh;
import io.floe.spark.refresh.GraphRefreshResult;
import io.floe.spark.refresh.RefreshExecutor;
import io.floe.sql.RefreshMaterializedView;
import java.util.ArrayList;
import java.util.Map;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code REFRESH MATERIALIZED VIEW name [FULL] [CASCADE]}: refreshes the view, and with CASCADE
 * every materialized view that reads it, directly or not, as one graph refresh ({@link
 * GraphRefresh}): sources before readers, independent views in parallel, all at one consistent set
 * of source snapshots. A failed view of a cascade does not fail the statement: its row says
 * FAILED and the views reading it SKIPPED, while what succeeded stays committed. Only a failure
 * of the named view itself fails the statement, as it does without CASCADE.
 */
public final class RefreshMaterializedViewCommand extends FloeCommand<RefreshMaterializedView> {

  public RefreshMaterializedViewCommand(RefreshMaterializedView statement) {
    super(statement, RefreshOutput.attributes());
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.loadExisting(catalog.resolve(statement().name()), "refresh");
    if (!statement().cascade()) {
      return List.of(RefreshOutput.row(new RefreshExecutor(spark).refresh(mv, statement().full())));
    }
    GraphRefreshResult result = GraphRefresh.of(spark).target(mv).fullRefreshAll(statement().full()).refresh();
    RefreshOutcome own = result.outcome(mv.name().toString()).orElseThrow();
    if (own.status() == RefreshStatus.FAILED) {
      throw own.failure().orElseThrow();
    }
    List<Row> rows = new ArrayList<>();
    result.outcomes().forEach(outcome -> rows.add(RefreshOutput.row(outcome)));
    return rows;
  }

  /** Every MV reading {@code mv} transitively, each after the MVs it reads. */
  static List<MaterializedView> downstreamInOrder(MaterializedViewCatalog catalog, MaterializedView mv) {
    Map<String, MaterializedView> all = catalog.byNameWithOtherCatalogs(mv.name().catalogName(), true);
    DependencyGraph<String> graph = MaterializedViewCatalog.dependencies(all.values());
    List<String> readers = graph.allReadersOf(mv.name().toString());
    List<MaterializedView> ordered = new ArrayList<>();
    for (String node : graph.topologicalOrder()) {
      if (readers.contains(node) && all.containsKey(node)) {
        ordered.add(all.get(node));
      }
    }
    return ordered;
  }
}
