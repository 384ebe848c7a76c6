package io.floe.spark.command;

import io.floe.mv.RefreshState;
import io.floe.spark.mv.FreshnessCheck;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.sql.ShowMaterializedViews;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.SparkSession;

/** {@code SHOW MATERIALIZED VIEWS [FROM|IN namespace] [LIKE 'pattern']}. */
public final class ShowMaterializedViewsCommand extends FloeCommand<ShowMaterializedViews> {

  public ShowMaterializedViewsCommand(ShowMaterializedViews statement) {
    super(statement, 
        List.of(
            stringColumn("namespace"),
            stringColumn("viewName"),
            stringColumn("lastRefreshType"),
            stringColumn("lastRefreshTime"),
            stringColumn("freshness"),
            stringColumn("schedule")));
  }


  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    var catalogs = spark.sessionState().catalogManager();
    String catalogName = catalogs.currentCatalog().name();
    List<String> namespace = Arrays.asList(catalogs.currentNamespace());
    if (statement().namespace().isPresent()) {
      List<String> parts = statement().namespace().get().parts();
      if (parts.size() > 1 && catalogs.isCatalogRegistered(parts.get(0))) {
        catalogName = parts.get(0);
        namespace = parts.subList(1, parts.size());
      } else {
        namespace = parts;
      }
    }
    Optional<Pattern> like = statement().likePattern().map(ShowMaterializedViewsCommand::likeToRegex);
    FreshnessCheck freshness = new FreshnessCheck(catalog);
    List<Row> rows = new ArrayList<>();
    // No namespace given and none current (a fresh session): every namespace's views, rather than
    // an error about the empty namespace.
    List<MaterializedView> views = namespace.isEmpty()
        ? catalog.listAll(catalogName)
        : catalog.list(catalogName, Namespace.of(namespace.toArray(new String[0])));
    for (MaterializedView mv : views) {
      if (like.isPresent() && !like.get().matcher(mv.name().name()).matches()) {
        continue;
      }
      String schedule = mv.schedule().map(io.floe.schedule.Schedule::toSql).orElse(null);
      try {
        Table storage = mv.storageTable();
        Optional<Snapshot> last = MaterializedView.lastRefreshSnapshot(storage);
        rows.add(
            RowFactory.create(
                mv.name().namespaceText(),
                mv.name().name(),
                last.map(s -> s.summary().get(io.floe.mv.MaterializedViewProperties.SUMMARY_REFRESH_TYPE)).orElse(null),
                mv.refreshState(storage).map(RefreshState::refreshStartTimestampMs).map(DescribeMaterializedViewCommand::formatTime).orElse(null),
                freshness.evaluate(mv).describe(),
                schedule));
      } catch (Exception e) { // one view whose state cannot be read does not hide the others
        rows.add(RowFactory.create(mv.name().namespaceText(), mv.name().name(), null, null,
            "UNKNOWN: cannot read its state: " + io.floe.ErrorMessages.firstLineOf(e), schedule));
      }
    }
    return rows;
  }

  /** Spark's SHOW ... LIKE pattern: {@code *} any characters, {@code |} alternatives. */
  static Pattern likeToRegex(String like) {
    StringBuilder regex = new StringBuilder();
    for (String alternative : like.split("\\|")) {
      if (regex.length() > 0) {
        regex.append('|');
      }
      regex.append("(?:");
      for (String piece : alternative.trim().split("\\*", -1)) {
        regex.append(Pattern.quote(piece)).append(".*");
      }
      regex.setLength(regex.length() - 2);
      regex.append(')');
    }
    return Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE);
  }
}
