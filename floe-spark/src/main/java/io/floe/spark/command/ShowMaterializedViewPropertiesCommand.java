package io.floe.spark.command;

import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.sql.ShowTableProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code SHOW TBLPROPERTIES mv}: the view's properties plus the keys Glue shows for a materialized
 * view ({@code isMaterializedView}, {@code lastRefreshType}, {@code viewOriginalText}, {@code
 * current-snapshot-id}).
 */
public final class ShowMaterializedViewPropertiesCommand extends FloeCommand<ShowTableProperties> {

  public ShowMaterializedViewPropertiesCommand(ShowTableProperties statement) {
    super(statement, List.of(stringColumn("key"), stringColumn("value")));
  }


  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.loadExisting(catalog.resolve(statement().name()), "show properties of");
    Table storage = mv.storageTable();
    Optional<Snapshot> last = MaterializedView.lastRefreshSnapshot(storage);
    // The MV's TBLPROPERTIES live on its storage table (CREATE and ALTER put them there); Floe's own
    // view properties and the keys Glue shows come on top.
    Map<String, String> properties = new TreeMap<>();
    storage.properties().forEach((key, value) -> {
      if (!StorageProperties.kept(key)) {
        properties.put(key, value);
      }
    });
    properties.putAll(mv.properties());
    properties.put("isMaterializedView", "true");
    properties.put("viewOriginalText", mv.query());
    properties.put("lastRefreshType", last.map(s -> s.summary().get(MaterializedViewProperties.SUMMARY_REFRESH_TYPE)).orElse("NONE"));
    properties.put(
        "current-snapshot-id",
        storage.currentSnapshot() == null ? "none" : Long.toString(storage.currentSnapshot().snapshotId()));
    properties.put("storageTable", mv.storageName().toString());
    List<Row> rows = new ArrayList<>();
    if (statement().key().isPresent()) {
      String key = statement().key().get();
      rows.add(
          RowFactory.create(
              key,
              properties.getOrDefault(key, "Materialized view " + mv + " does not have property: " + key)));
      return rows;
    }
    properties.forEach((key, value) -> rows.add(RowFactory.create(key, value)));
    return rows;
  }
}
