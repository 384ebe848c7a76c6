package io.floe.server;

import io.floe.cli.output.FailureLine;
import io.floe.mv.Freshness;
import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.mv.FreshnessCheck;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Table;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reads every materialized view of the server's catalog with its schedule, last refresh and freshness. */
final class LakehouseViews {
  private static final Logger LOG = LoggerFactory.getLogger(LakehouseViews.class);

  private final SparkSession spark;
  private final String catalog;

  LakehouseViews(SparkSession spark, String catalog) {
    this.spark = spark;
    this.catalog = catalog;
  }

  /** Every view, by namespace and name. A view whose state cannot be read is reported with its error. */
  List<ViewStatus> scan() {
    MaterializedViewCatalog views = new MaterializedViewCatalog(spark);
    List<MaterializedView> all = views.listAll(catalog);
    Set<String> names = new HashSet<>();
    all.forEach(mv -> names.add(mv.name().toString()));
    FreshnessCheck freshness = new FreshnessCheck(views);
    List<ViewStatus> found = new ArrayList<>();
    for (MaterializedView mv : all) {
      List<String> sources = mv.sourceNames();
      List<String> upstream = sources.stream().filter(names::contains).toList();
      try {
        Table storage = mv.storageTable();
        Optional<String> type = MaterializedView.lastRefreshSnapshot(storage)
            .map(s -> s.summary().get(MaterializedViewProperties.SUMMARY_REFRESH_TYPE));
        Optional<Instant> last = mv.refreshState(storage).map(s -> Instant.ofEpochMilli(s.refreshStartTimestampMs()));
        found.add(new ViewStatus(mv.name().toString(), mv.schedule(), type, last, freshness.evaluate(mv), sources,
            upstream, Optional.empty()));
      } catch (Exception e) { // Spark's catalog errors are checked, thrown undeclared
        LOG.warn("Cannot read the state of materialized view {}", mv.name(), e);
        found.add(new ViewStatus(mv.name().toString(), Optional.empty(), Optional.empty(), Optional.empty(),
            Freshness.stale("cannot read its state: " + FailureLine.of(e)), sources, upstream,
            Optional.of(FailureLine.of(e))));
      }
    }
    return found;
  }
}
