package io.floe.spark.command;

import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.RefreshExecutor;
import io.floe.sql.ExplainRefresh;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code EXPLAIN REFRESH MATERIALIZED VIEW name}: what a refresh would do now, per source and for
 * the definition, and the reason for a full refresh, without running it.
 */
public final class ExplainRefreshCommand extends FloeCommand<ExplainRefresh> {

  public ExplainRefreshCommand(ExplainRefresh statement) {
    super(statement, List.of(stringColumn("item"), stringColumn("detail")));
  }


  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.loadExisting(catalog.resolve(statement().name()), "explain the refresh of");
    List<Row> rows = new ArrayList<>();
    for (String[] line : new RefreshExecutor(spark).explain(mv)) {
      rows.add(RowFactory.create((Object[]) line));
    }
    return rows;
  }
}
