package io.floe.spark.command;

import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.spark.mv.FreshnessCheck;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.StorageCompaction;
import io.floe.sql.DescribeRelation;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.StructField;

/**
 * {@code DESCRIBE [EXTENDED] mv}: the view's columns and, extended, its definition, storage
 * table, schedule, last refresh and freshness.
 */
public final class DescribeMaterializedViewCommand extends FloeCommand<DescribeRelation> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);


  public DescribeMaterializedViewCommand(DescribeRelation statement) {
    super(statement, List.of(stringColumn("col_name"), stringColumn("data_type"), stringColumn("comment")));
  }


  static String formatTime(long epochMillis) {
    return TIME.format(Instant.ofEpochMilli(epochMillis));
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    MaterializedView mv = catalog.loadExisting(catalog.resolve(statement().name()), "describe");
    List<Row> rows = new ArrayList<>();
    // A collated column's type as reads give it; the view's schema cannot say.
    java.util.Map<String, org.apache.spark.sql.types.DataType> collated = mv.collatedColumns();
    for (StructField field : SparkSchemaUtil.convert(mv.view().schema()).fields()) {
      org.apache.spark.sql.types.DataType type = collated.getOrDefault(field.name(), field.dataType());
      rows.add(RowFactory.create(field.name(), type.simpleString(), field.getComment().getOrElse(() -> null)));
    }
    if (!statement().extended()) {
      return rows;
    }
    Table storage = mv.storageTable();
    Optional<RefreshState> state = mv.refreshState(storage);
    Optional<Snapshot> last = MaterializedView.lastRefreshSnapshot(storage);
    rows.add(RowFactory.create("", "", ""));
    rows.add(RowFactory.create("# Materialized View Information", "", ""));
    add(rows, "Catalog", mv.name().catalogName());
    add(rows, "Namespace", mv.name().namespaceText());
    add(rows, "Name", mv.name().name());
    add(rows, "Type", mv.managed() ? "MANAGED MATERIALIZED VIEW" : "MATERIALIZED VIEW");
    add(rows, "Comment", mv.comment().orElse(null));
    add(rows, "View Text", mv.query());
    add(rows, "View Version", Integer.toString(mv.versionId()));
    add(rows, "Storage Table", mv.storageName().toString());
    add(rows, "Schedule", mv.schedule().map(s -> s.toSql()).orElse("none (refresh on demand)"));
    add(rows, "Refresh Policy", mv.refreshPolicy().name());
    Map<String, String> settings = io.floe.spark.mv.DefinitionSettings.of(mv);
    if (!settings.isEmpty()) {
      add(rows, "SQL Settings", settings.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
          .collect(java.util.stream.Collectors.joining(", ")));
    }
    add(rows, "Last Refresh Time", state.map(s -> formatTime(s.refreshStartTimestampMs())).orElse("never"));
    add(rows, "Last Refresh Type", last.map(s -> s.summary().get(MaterializedViewProperties.SUMMARY_REFRESH_TYPE)).orElse("none"));
    add(rows, "Last Refresh Reason", last.map(s -> s.summary().get(MaterializedViewProperties.SUMMARY_REFRESH_REASON)).orElse(null));
    add(rows, "Storage Snapshot", last.map(s -> Long.toString(s.snapshotId())).orElse(null));
    add(rows, "Storage Files", StorageCompaction.describeFiles(storage));
    add(rows, "Last Compaction", StorageCompaction.lastCompaction(storage)
        .map(s -> formatTime(s.timestampMillis()) + " (" + s.summary().get(StorageCompaction.SUMMARY_PROPERTY) + ")")
        .orElse(!StorageCompaction.enabled(storage)
            ? "none (" + StorageCompaction.ENABLED + " = false)"
            : StorageCompaction.due(storage).map(why -> "none; due: " + why).orElse("none")));
    if (!mv.expectations().isEmpty()) {
      add(rows, "Expectations", mv.expectations().stream()
          .map(e -> "CONSTRAINT " + e.name() + " EXPECT (" + e.expression() + ")"
              + (e.onViolation() == io.floe.mv.OnViolation.KEEP ? "" : " ON VIOLATION " + e.onViolation().name().replace('_', ' ')))
          .collect(java.util.stream.Collectors.joining(", ")));
      add(rows, "Last Refresh Expectations", last
          .map(s -> s.summary().get(io.floe.refresh.ExpectationResultParser.SUMMARY_KEY))
          .map(json -> io.floe.refresh.ExpectationResultParser.fromJson(json).stream()
              .map(io.floe.refresh.ExpectationResult::describe)
              .collect(java.util.stream.Collectors.joining("; ")))
          .orElse("none"));
    }
    add(rows, "Freshness", new FreshnessCheck(catalog).evaluate(mv).describe());
    add(rows, "Sources", String.join(", ", mv.sourceNames()));
    state.ifPresent(
        s -> add(rows, "Source States", RefreshOutput.describeSources(s.sourceStates(), s.sourceStates())));
    return rows;
  }

  private static void add(List<Row> rows, String key, String value) {
    rows.add(RowFactory.create(key, value, ""));
  }
}
