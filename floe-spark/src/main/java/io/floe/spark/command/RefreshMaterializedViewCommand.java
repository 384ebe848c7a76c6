package io.floe.spark.command;

import io.floe.graph.DependencyGraph;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.RefreshExecutor;
import io.floe.sql.RefreshMaterializedView;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code REFRESH MATERIALIZED VIEW name [FULL] [CASCADE]}: refreshes the view, and with CASCADE
 * every materialized view that reads it, directly or not, sources before readers.
 */
public final class RefreshMaterializedViewCommand extends FloeCommand<RefreshMaterializedView> {

  public RefreshMaterializedViewCommand(RefreshMaterializedView statement) {
    super(statement, RefreshOutput.attributes());
  }


  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.loadExisting(catalog.resolve(statement().name()), "refresh");
    RefreshExecutor executor = new RefreshExecutor(spark);
    List<Row> rows = new ArrayList<>();
    rows.add(RefreshOutput.row(executor.refresh(mv, statement().full())));
    if (statement().cascade()) {
      for (MaterializedView reader : downstreamInOrder(catalog, mv)) {
        rows.add(RefreshOutput.row(executor.refresh(reader, statement().full())));
      }
    }
    return rows;
  }

  /** Every MV reading {@code mv} transitively, each after the MVs it reads. */
  static List<MaterializedView> downstreamInOrder(MaterializedViewCatalog catalog, MaterializedView mv) {
    Map<String, MaterializedView> all = new LinkedHashMap<>();
    DependencyGraph<String> graph = new DependencyGraph<>();
    for (MaterializedView candidate : catalog.listAll(mv.name().catalogName())) {
      all.put(candidate.name().toString(), candidate);
      graph.addNode(candidate.name().toString());
      for (String source : candidate.sourceNames()) {
        graph.addEdge(source, candidate.name().toString());
      }
    }
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
