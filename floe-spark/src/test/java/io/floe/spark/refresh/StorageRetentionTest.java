package io.floe.spark.refresh;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.SourceState;
import io.floe.refresh.RefreshResult;
import io.floe.refresh.RefreshType;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.MvTestSupport;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;

/** Expiry of storage snapshots after refreshes, and what it must keep. */
class StorageRetentionTest extends MvTestSupport {
  @Override
  protected String prefix() {
    return "retention";
  }

  /** The materialized view {@code name} of this test's namespace. */
  private MaterializedView view(MaterializedViewCatalog catalog, String name) {
    return catalog.loadExisting(catalog.resolve(List.of("lake", ns, name), "lake", List.of(ns)), "load");
  }

  /** Refreshes {@code mv} alone, without the views reading it. */
  private RefreshResult refreshAlone(String mv, boolean full) {
    return new RefreshExecutor((org.apache.spark.sql.classic.SparkSession) spark)
        .refresh(view(new MaterializedViewCatalog(spark), mv), full);
  }

  /** Applies retention to {@code a}'s storage now, expiring as soon as one snapshot can go. */
  private int expireNow() {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    return new StorageRetention(catalog, 1).apply(view(catalog, "a"), table("a__storage"), System.currentTimeMillis());
  }

  private static List<String> liveDataFiles(Table table) throws Exception {
    List<String> files = new ArrayList<>();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        DataFile file = task.file();
        files.add(file.location());
      }
    }
    return files;
  }

  private static long metadataFiles(Table table) throws Exception {
    Path folder = Path.of(URI.create(table.location() + "/metadata"));
    try (Stream<Path> files = Files.list(folder)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".metadata.json")).count();
    }
  }

  /** Table {@code src} with {@code rows} rows and MV {@code a} over it, its storage retention 1 ms. */
  private void sourceAndView(int rows, String property, String value, String query) {
    sql("CREATE TABLE src (id INT, v INT) USING iceberg");
    sql("INSERT INTO src SELECT CAST(id + 1 AS INT), CAST((id + 1) * 10 AS INT) FROM range(" + rows + ")");
    sql("CREATE MATERIALIZED VIEW a TBLPROPERTIES ('" + TableProperties.MAX_SNAPSHOT_AGE_MS + "' = '1', '"
        + property + "' = '" + value + "') AS " + query);
  }

  @Test
  void oldSnapshotsAndTheirFilesGoWhileAReadersRecordedSnapshotStays() throws Exception {
    // Snapshots older than 1 ms may go; 3 previous metadata files are kept.
    sourceAndView(2, TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "3", "SELECT id, v * 2 AS w FROM src WHERE v > 0");
    sql("CREATE MATERIALIZED VIEW b AS SELECT id, w + 1 AS x FROM a");
    Table storage = table("a__storage");
    assertThat(storage.properties()).containsEntry(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true");
    assertThat(table("b__storage").properties())
        .containsEntry(TableProperties.MAX_SNAPSHOT_AGE_MS, Long.toString(StorageRetention.DEFAULT_MAX_AGE_MS));

    List<String> firstFiles = liveDataFiles(storage);
    assertThat(firstFiles).isNotEmpty();
    assertThat(refreshAlone("a", true).type()).isEqualTo(RefreshType.FULL);
    sql("INSERT INTO src VALUES (3, 30)");
    assertThat(refreshAlone("a", false).type()).isEqualTo(RefreshType.INCREMENTAL);
    // b records a's snapshot now: only what came before it may go.
    assertThat(refreshAlone("b", false).type()).isEqualTo(RefreshType.INCREMENTAL);
    long recorded = currentSnapshotId("a__storage");
    assertThat(refreshState("b").sourceStates()).extracting(SourceState::snapshotId).contains(java.util.Optional.of(recorded));
    for (int id = 4; id < 6; id++) {
      sql("INSERT INTO src VALUES (" + id + ", " + id * 10 + ")");
      sql("DELETE FROM src WHERE id = " + (id - 2));
      assertThat(refreshAlone("a", false).type()).isEqualTo(RefreshType.INCREMENTAL);
    }
    int before = 0;
    for (Snapshot ignored : table("a__storage").snapshots()) {
      before++;
    }
    int expired = expireNow();
    assertThat(expired).isPositive();

    Table expiredStorage = table("a__storage");
    storage = expiredStorage;
    List<Long> kept = new ArrayList<>();
    storage.snapshots().forEach(s -> kept.add(s.snapshotId()));
    assertThat(kept).as("b's recorded snapshot of a").contains(recorded);
    Snapshot oldest = storage.snapshot(recorded);
    storage.snapshots().forEach(s -> assertThat(s.timestampMillis()).isGreaterThanOrEqualTo(oldest.timestampMillis()));
    List<Long> main = new ArrayList<>();
    org.apache.iceberg.util.SnapshotUtil.currentAncestors(storage).forEach(s -> main.add(s.snapshotId()));
    assertThat(main).hasSize(3);
    // The rest is the change feed branch: the changes b still needs (those of the two refreshes
    // after its recorded snapshot; the earlier ones expired) and the commit that then dropped the
    // expired ones from the branch.
    Snapshot feedHead = storage.snapshot(storage.refs().get(io.floe.spark.capture.ChangeFeed.BRANCH).snapshotId());
    List<Long> feed = new ArrayList<>();
    org.apache.iceberg.util.SnapshotUtil.ancestorIds(feedHead, expiredStorage::snapshot).forEach(feed::add);
    assertThat(kept).containsExactlyInAnyOrderElementsOf(
        java.util.stream.Stream.concat(main.stream(), feed.stream()).distinct().toList());
    assertThat(feed).hasSize(3);
    long recordedEntries = main.stream()
        .map(id -> expiredStorage.snapshot(id).summary().get(io.floe.spark.capture.ChangeFeed.SNAPSHOT_PROPERTY))
        .filter(entry -> entry != null && !entry.equals(io.floe.spark.capture.ChangeFeed.NONE))
        .filter(entry -> expiredStorage.snapshot(Long.parseLong(entry)) != null)
        .count();
    // Those b needs, from its recorded snapshot on, are all there.
    assertThat(recordedEntries).isEqualTo(2);
    int feedFiles = 0;
    try (var files = storage.newScan().useRef(io.floe.spark.capture.ChangeFeed.BRANCH).planFiles()) {
      for (var ignored : files) {
        feedFiles++;
      }
    }
    assertThat(feedFiles).isEqualTo(recordedEntries);
    assertThat(before - expired).isGreaterThanOrEqualTo(main.size());
    // The first refresh's files were replaced by the full refresh; only expired snapshots used them.
    for (String file : firstFiles) {
      assertThat(Path.of(URI.create(file))).doesNotExist();
    }
    for (String file : liveDataFiles(storage)) {
      assertThat(Path.of(URI.create(file))).exists();
    }
    assertThat(metadataFiles(storage)).isLessThanOrEqualTo(4);

    // b still reads a's change from its recorded snapshot, and both stay exact.
    RefreshResult reader = refreshAlone("b", false);
    assertThat(reader.type()).isEqualTo(RefreshType.INCREMENTAL);
    assertSameRows("SELECT * FROM a", "SELECT id, v * 2 FROM src WHERE v > 0", 3);
    assertSameRows("SELECT * FROM b", "SELECT id, v * 2 + 1 FROM src WHERE v > 0", 3);
  }

  @Test
  void aViewWithoutReadersKeepsOnlyItsRetention() throws Exception {
    sourceAndView(1, TableProperties.MIN_SNAPSHOTS_TO_KEEP, "2", "SELECT id, v FROM src");
    for (int id = 2; id < 2 + StorageRetention.BATCH + 2; id++) {
      sql("INSERT INTO src VALUES (" + id + ", " + id * 10 + ")");
      refreshAlone("a", false);
    }
    Table storage = table("a__storage");
    int snapshots = 0;
    for (Snapshot ignored : storage.snapshots()) {
      snapshots++;
    }
    // Expiry waits for a batch: between the 2 kept and 2 + BATCH - 1 remain.
    assertThat(snapshots).isBetween(2, 2 + StorageRetention.BATCH - 1);
    assertSameRows("SELECT * FROM a", "SELECT * FROM src", 2 + StorageRetention.BATCH + 1);
  }

  @Test
  void aCompactedStorageKeepsItsRefreshStateThroughRefreshesAndExpiry() throws Exception {
    sourceAndView(2, TableProperties.MIN_SNAPSHOTS_TO_KEEP, "1", "SELECT id, v FROM src");
    sql("INSERT INTO src VALUES (3, 30)");
    assertThat(refreshAlone("a", false).type()).isEqualTo(RefreshType.INCREMENTAL);
    long refreshed = currentSnapshotId("a__storage");
    String lastRefreshTime = describe("a").get("Last Refresh Time");

    sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".a__storage', options => map('rewrite-all', 'true'))");
    assertThat(table("a__storage").currentSnapshot().operation()).isEqualTo(DataOperations.REPLACE);
    // The compaction left the rows of the last refresh: still fresh, still that refresh.
    assertThat(freshness("a")).isEqualTo("FRESH");
    assertThat(describe("a").get("Last Refresh Time")).isEqualTo(lastRefreshTime);
    assertThat(describe("a").get("Storage Snapshot")).isEqualTo(Long.toString(refreshed));

    // Expiry keeps the last refresh's snapshot under the compaction, however old.
    expireNow();
    assertThat(table("a__storage").snapshot(refreshed)).isNotNull();
    assertThat(freshness("a")).isEqualTo("FRESH");

    sql("INSERT INTO src VALUES (4, 40)");
    sql("DELETE FROM src WHERE id = 1");
    assertThat(refreshAlone("a", false).type()).isEqualTo(RefreshType.INCREMENTAL);
    assertSameRows("SELECT * FROM a", "SELECT * FROM src", 3);

    // Any other write to the storage leaves no refresh state to go on: the next refresh is full.
    sql("INSERT INTO " + ns + ".a__storage SELECT * FROM " + ns + ".a__storage LIMIT 0");
    // The first write after the last refresh is named.
    long outside = table("a__storage").currentSnapshot().snapshotId();
    sql("DELETE FROM " + ns + ".a__storage WHERE id = 2");
    String written = "its storage table lake." + ns + ".a__storage was written outside a refresh (snapshot " + outside
        + ", append) after its last refresh";
    assertThat(freshness("a")).startsWith("STALE").contains(written);
    assertThat(sql("EXPLAIN REFRESH MATERIALIZED VIEW a").toString()).contains("FULL: " + written);
    io.floe.refresh.RefreshResult result = refreshAlone("a", false);
    assertThat(result.type()).isEqualTo(RefreshType.FULL);
    assertThat(result.reason()).isEqualTo(written);
    assertSameRows("SELECT * FROM a", "SELECT * FROM src", 3);
  }
}
