package io.floe.spark.command;

import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.spark.refresh.RefreshHistory;
import io.floe.sql.ShowRefreshes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * {@code SHOW REFRESHES [FOR name] [LIMIT n]}: the refresh history of the current catalog, or of
 * the named view's catalog restricted to that view, newest first. A dropped view's history stays
 * and still shows.
 */
public final class ShowRefreshesCommand extends FloeCommand<ShowRefreshes> {

  public ShowRefreshesCommand(ShowRefreshes statement) {
    super(statement, attributes());
  }

  private static List<Attribute> attributes() {
    List<Attribute> columns = new ArrayList<>();
    for (Types.NestedField field : RefreshHistory.SCHEMA.columns()) {
      columns.add(column(field.name(), sparkType(field)));
    }
    return columns;
  }

  private static DataType sparkType(Types.NestedField field) {
    switch (field.type().typeId()) {
      case LONG:
        return DataTypes.LongType;
      case INTEGER:
        return DataTypes.IntegerType;
      case TIMESTAMP:
        return DataTypes.TimestampType;
      default:
        return DataTypes.StringType;
    }
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    Optional<ResolvedName> view = statement().materializedView().map(catalog::resolve);
    String catalogName =
        view.map(ResolvedName::catalogName).orElse(spark.sessionState().catalogManager().currentCatalog().name());
    Optional<Catalog> iceberg = view.map(ResolvedName::catalog).or(() -> catalog.icebergCatalog(catalogName));
    if (iceberg.isEmpty() || !iceberg.get().tableExists(RefreshHistory.IDENTIFIER)) {
      return List.of();
    }
    // Spark caches tables; the history may have grown since its last read.
    ResolvedName history =
        new ResolvedName(catalogName, iceberg.get(), RefreshHistory.IDENTIFIER);
    catalog.invalidateSparkCache(history);
    var rows = spark.table(history.quoted());
    if (view.isPresent()) {
      rows = rows.where(functions.col("materialized_view").equalTo(view.get().toString()));
    }
    rows = rows.orderBy(functions.col("started_at").desc(), functions.col("ended_at").desc());
    if (statement().limit().isPresent()) {
      rows = rows.limit(statement().limit().getAsInt());
    }
    String[] columns = RefreshHistory.SCHEMA.columns().stream().map(Types.NestedField::name).toArray(String[]::new);
    return rows.selectExpr(columns).collectAsList();
  }
}
