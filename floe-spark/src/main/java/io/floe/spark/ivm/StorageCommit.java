package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.col;

import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.refresh.ExpectationResult;
import io.floe.refresh.ExpectationResultParser;
import io.floe.refresh.RefreshType;
import io.floe.spark.capture.ChangeFeed;
import io.floe.spark.capture.ChangeCapture;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.StorageWriteGuard;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.CommitMetadata;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits a computed change to an MV's storage table through a branch ({@link BranchCommit}), with
 * the refresh state in the snapshot summary, and records it in the storage's change feed when a
 * reader opened one.
 */
final class StorageCommit {
  private static final Logger LOG = LoggerFactory.getLogger(StorageCommit.class);
  private static final String WEIGHT = ChangeCapture.WEIGHT;

  private final SparkSession spark;

  StorageCommit(SparkSession spark) {
    this.spark = spark;
  }

  // Commits.

  /**
   * A change to record in the storage table's {@link ChangeFeed}: its rows in the storage columns,
   * the multiplicity column holding the signed change, and whether it only adds rows.
   */
  record FeedEntry(Dataset<Row> rows, boolean addsOnly) {}

  /** A computed change of a {@link StorageLayout#ROWS} storage as feed rows: its weight as the multiplicity. */
  static Dataset<Row> feedRows(MaterializedView mv, Dataset<Row> change) {
    List<Column> columns = new ArrayList<>(List.of(StorageLayout.columns(mv.rowColumns())));
    columns.add(col(WEIGHT).as(StorageLayout.COUNT));
    columns.add(col(StorageLayout.quote(StorageLayout.KEY)));
    columns.add(col(StorageLayout.quote(StorageLayout.KEY2)));
    return change.select(columns.toArray(new Column[0]));
  }


  long merge(
      MaterializedView mv, Table storage, Snapshot readSnapshot, StorageMerge merge, Optional<FeedEntry> feed, String stateJson,
      String reason, List<ExpectationResult> expectations, boolean byLineage) {
    Map<String, String> properties = summary(stateJson, reason, expectations);
    properties.put(RowLineage.SUMMARY_KEY, String.valueOf(byLineage));
    try (BranchCommit commit = new BranchCommit(storage, readSnapshot.snapshotId())) {
      new io.floe.spark.mv.MaterializedViewCatalog(spark).invalidateSparkCache(mv.storageName());
      if (feed.isPresent()) {
        recordInFeed(mv, storage, feed.get())
            .ifPresent(entry -> properties.put(ChangeFeed.SNAPSHOT_PROPERTY, String.valueOf(entry)));
      }
      String target = commit.sparkName(mv.storageName().quoted());
      StorageWriteGuard.allowWritesTo(
          storage.uuid().toString(),
          () ->
              CommitMetadata.withCommitProperties(
                  properties,
                  () -> {
                    merge.run(spark, target);
                    return null;
                  },
                  RuntimeException.class));
      long published = commit.publish();
      new io.floe.spark.mv.MaterializedViewCatalog(spark).invalidateSparkCache(mv.storageName());
      return published;
    }
  }

  /**
   * Appends a change to the storage table's feed branch and returns the feed snapshot, or nothing
   * when the feed was closed (its last reader dropped) since the refresh found it open: the change
   * then goes unrecorded, as it would have had the refresh started after the close. A refresh that
   * loses the race for main leaves an entry no main snapshot refers to, which {@link
   * ChangeFeed#trim} drops.
   */
  private java.util.OptionalLong recordInFeed(MaterializedView mv, Table storage, FeedEntry entry) {
    String token = UUID.randomUUID().toString();
    Map<String, String> properties =
        Map.of(ChangeFeed.TOKEN_PROPERTY, token, ChangeFeed.ADDS_ONLY_PROPERTY, String.valueOf(entry.addsOnly()));
    String branch = mv.storageName().quoted() + ".`branch_" + ChangeFeed.BRANCH + "`";
    boolean appended = StorageWriteGuard.allowWritesTo(
        storage.uuid().toString(),
        () -> CommitMetadata.withCommitProperties(properties, () -> {
          try {
            entry.rows().writeTo(branch).append();
            return true;
          } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
            LOG.info("The change feed of {} was closed during its refresh; the refresh's change is not recorded in it",
                mv.storageName());
            return false;
          }
        }, RuntimeException.class));
    return appended ? java.util.OptionalLong.of(ChangeFeed.appendedWith(storage, token)) : java.util.OptionalLong.empty();
  }

  /** Records the new source states without changing any row: the sources moved, their data did not. */
  static long stateOnly(
      Table storage, Snapshot readSnapshot, String stateJson, String reason, List<ExpectationResult> expectations,
      boolean byLineage) {
    try (BranchCommit commit = new BranchCommit(storage, readSnapshot.snapshotId())) {
      var append = storage.newAppend().toBranch(commit.branch());
      summary(stateJson, reason, expectations).forEach(append::set);
      append.set(RowLineage.SUMMARY_KEY, String.valueOf(byLineage));
      append.set(ChangeFeed.SNAPSHOT_PROPERTY, ChangeFeed.NONE);
      append.commit();
      return commit.publish();
    }
  }

  private static Map<String, String> summary(String stateJson, String reason, List<ExpectationResult> expectations) {
    Map<String, String> properties = new LinkedHashMap<>();
    if (!expectations.isEmpty()) {
      properties.put(ExpectationResultParser.SUMMARY_KEY, ExpectationResultParser.toJson(expectations));
    }
    properties.put(RefreshState.SUMMARY_KEY, stateJson);
    properties.put(MaterializedViewProperties.SUMMARY_REFRESH_TYPE, RefreshType.INCREMENTAL.name());
    properties.put(MaterializedViewProperties.SUMMARY_REFRESH_REASON, reason);
    return properties;
  }
}
