package io.floe.spark.refresh;

import io.floe.mv.RefreshState;
import io.floe.mv.SourceState;
import io.floe.spark.capture.ChangeFeed;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a storage table's history bounded. Every refresh commits a snapshot, and every commit
 * rewrites the table metadata listing all snapshots; a view refreshed every minute would otherwise
 * keep every data and delete file it ever wrote and commit ever larger metadata files. After a
 * refresh, the snapshots older than the table's retention ({@value
 * TableProperties#MAX_SNAPSHOT_AGE_MS}, one day unless set) are expired with Iceberg's {@code
 * ExpireSnapshots}, which also deletes the files only they used, keeping:
 *
 * <ul>
 *   <li>the snapshot of the last refresh, which holds the view's refresh state, and later ones
 *       (compactions since);
 *   <li>the last {@value TableProperties#MIN_SNAPSHOTS_TO_KEEP} (default 1) snapshots of main,
 *       and every branch head (a refresh in flight commits through a branch);
 *   <li>for each materialized view that reads this one, the snapshot its last refresh recorded and
 *       all later ones, so that its next refresh can still read this view's change.
 * </ul>
 *
 * After an expiry, the changes no remaining snapshot refers to are dropped from the table's {@link
 * ChangeFeed}, so that a later expiry deletes their files too.
 *
 * Expiry runs once at least {@value #BATCH} snapshots can go, so that it costs one commit per
 * {@value #BATCH} refreshes, not one each. Storage tables also delete their superseded metadata
 * files after each commit ({@value TableProperties#METADATA_DELETE_AFTER_COMMIT_ENABLED}),
 * keeping the last {@value TableProperties#METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT}.
 */
public final class StorageRetention {
  private static final Logger LOG = LoggerFactory.getLogger(StorageRetention.class);

  /** How long storage snapshots are kept unless the table says otherwise. */
  public static final long DEFAULT_MAX_AGE_MS = TimeUnit.DAYS.toMillis(1);

  /** The fewest expirable snapshots worth an expiry commit. */
  static final int BATCH = 10;

  private final MaterializedViewCatalog catalog;
  private final int batch;

  public StorageRetention(MaterializedViewCatalog catalog) {
    this(catalog, BATCH);
  }

  /** Retention that expires once {@code batch} snapshots can go. */
  StorageRetention(MaterializedViewCatalog catalog, int batch) {
    this.catalog = catalog;
    this.batch = batch;
  }

  /** The table properties a new storage table gets for its history. */
  public static Map<String, String> creationProperties() {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true");
    properties.put(TableProperties.MAX_SNAPSHOT_AGE_MS, Long.toString(DEFAULT_MAX_AGE_MS));
    return properties;
  }

  /**
   * Expires what {@code mv}'s storage no longer needs at time {@code nowMs}; returns how many
   * snapshots were expired.
   */
  public int apply(MaterializedView mv, Table storage, long nowMs) {
    if (!storage.properties().containsKey(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED)) {
      // A storage table created before Floe set this: from now on, like a new one.
      storage.updateProperties().set(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true").commit();
    }
    long maxAge = PropertyUtil.propertyAsLong(storage.properties(), TableProperties.MAX_SNAPSHOT_AGE_MS, DEFAULT_MAX_AGE_MS);
    int keep = PropertyUtil.propertyAsInt(
        storage.properties(), TableProperties.MIN_SNAPSHOTS_TO_KEEP, TableProperties.MIN_SNAPSHOTS_TO_KEEP_DEFAULT);
    long cutoff = nowMs - maxAge;
    if (expirable(storage, cutoff, keep) < batch) {
      return 0;
    }
    // The last refresh's snapshot holds the view's refresh state, also under later compactions.
    Optional<Snapshot> lastRefresh = MaterializedView.lastRefreshSnapshot(storage);
    if (lastRefresh.isPresent()) {
      cutoff = Math.min(cutoff, lastRefresh.get().timestampMillis());
    }
    // Only now, with something to expire, list the readers: that reads every view of the catalog.
    cutoff = Math.min(cutoff, oldestNeededByReaders(mv, storage));
    int expirable = expirable(storage, cutoff, keep);
    if (expirable < batch) {
      return 0;
    }
    storage.expireSnapshots().expireOlderThan(cutoff).retainLast(keep).commit();
    LOG.info("Expired {} snapshots of {} older than {}", expirable, storage.name(), cutoff);
    // The changes recorded for the expired snapshots leave the feed; the next expiry deletes them.
    int dropped = ChangeFeed.trim(storage);
    if (dropped > 0) {
      LOG.info("Dropped {} change files no snapshot of {} refers to from its change feed", dropped, storage.name());
    }
    return expirable;
  }

  /** Snapshots older than {@code cutoff} that are neither among main's last {@code keep} nor a branch head. */
  private static int expirable(Table storage, long cutoff, int keep) {
    Set<Long> kept = new HashSet<>();
    storage.refs().values().forEach(ref -> kept.add(ref.snapshotId()));
    if (storage.currentSnapshot() != null) {
      int n = 0;
      for (Snapshot s : SnapshotUtil.currentAncestors(storage)) {
        if (n++ >= keep) {
          break;
        }
        kept.add(s.snapshotId());
      }
    }
    int count = 0;
    for (Snapshot s : storage.snapshots()) {
      if (s.timestampMillis() < cutoff && !kept.contains(s.snapshotId())) {
        count++;
      }
    }
    return count;
  }

  /**
   * The commit time of the oldest snapshot of {@code storage} that a reading view's last refresh
   * recorded, or {@link Long#MAX_VALUE} when no reader needs one.
   */
  private long oldestNeededByReaders(MaterializedView mv, Table storage) {
    long oldest = Long.MAX_VALUE;
    String uuid = storage.uuid().toString();
    for (MaterializedView reader : catalog.readersOf(mv.name(), false)) {
      Optional<RefreshState> state = reader.refreshState(reader.storageTable());
      if (state.isEmpty()) {
        continue;
      }
      List<SourceState> sources = state.get().sourceStates();
      for (SourceState source : sources) {
        if (source.type() != SourceState.Type.TABLE || !uuid.equals(source.uuid()) || source.snapshotId().isEmpty()) {
          continue;
        }
        Snapshot recorded = storage.snapshot(source.snapshotId().get());
        if (recorded != null) {
          oldest = Math.min(oldest, recorded.timestampMillis());
        }
      }
    }
    return oldest;
  }
}
