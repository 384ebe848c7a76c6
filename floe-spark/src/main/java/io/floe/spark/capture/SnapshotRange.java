package io.floe.spark.capture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

/**
 * The snapshots of a table after one snapshot (exclusive) up to another (inclusive), found by
 * walking parents back from the newer one, and why no incremental capture is possible across
 * them, if that is so.
 */
final class SnapshotRange {
  private static final Set<String> KNOWN_OPERATIONS =
      Set.of(DataOperations.APPEND, DataOperations.REPLACE, DataOperations.OVERWRITE, DataOperations.DELETE);

  private final List<Snapshot> snapshots;
  private final String unsupportedReason;

  private SnapshotRange(List<Snapshot> snapshots, String unsupportedReason) {
    this.snapshots = List.copyOf(snapshots);
    this.unsupportedReason = unsupportedReason;
  }

  /**
   * Walks from {@code to} back to {@code fromExclusive}, or to the oldest snapshot still in the
   * table metadata when {@code fromExclusive} is null.
   *
   * @param tableName how reasons name the table
   */
  static SnapshotRange between(Table table, String tableName, Long fromExclusive, Snapshot to) {
    return between(table, tableName, fromExclusive, to, false);
  }

  /**
   * As {@link #between(Table, String, Long, Snapshot)}; with {@code acrossSchemas}, snapshots
   * written in different schemas do not make the range unsupported (the caller checked that the
   * columns it reads are the same fields in each).
   */
  static SnapshotRange between(Table table, String tableName, Long fromExclusive, Snapshot to, boolean acrossSchemas) {
    if (fromExclusive != null && table.snapshot(fromExclusive) == null) {
      return unsupported(
          "snapshot %d of %s has expired: it is no longer in the table metadata", fromExclusive, tableName);
    }
    List<Snapshot> newestFirst = new ArrayList<>();
    Snapshot current = to;
    while (fromExclusive == null || current.snapshotId() != fromExclusive) {
      newestFirst.add(current);
      Long parentId = current.parentId();
      Snapshot parent = parentId == null ? null : table.snapshot(parentId);
      if (parent == null) {
        if (fromExclusive == null) {
          // Everything at `to` counts as added, so history older than what is left is not needed.
          break;
        }
        if (parentId == null) {
          return unsupported(
              "snapshot %d of %s is not an ancestor of snapshot %d (the table was rolled back or its history branched)",
              fromExclusive, tableName, to.snapshotId());
        }
        return unsupported(
            "snapshot %d of %s, between snapshots %d and %d, has expired",
            parentId, tableName, fromExclusive, to.snapshotId());
      }
      current = parent;
    }
    Collections.reverse(newestFirst);
    if (fromExclusive == null) {
      // Reading all of `to` with its own delete files applied is right whatever happened before.
      return new SnapshotRange(newestFirst, null);
    }
    Optional<String> reason = whyNotIncremental(table, tableName, table.snapshot(fromExclusive), to, newestFirst, acrossSchemas);
    return new SnapshotRange(newestFirst, reason.orElse(null));
  }

  private static Optional<String> whyNotIncremental(
      Table table, String tableName, Snapshot from, Snapshot to, List<Snapshot> snapshots, boolean acrossSchemas) {
    for (Snapshot snapshot : snapshots) {
      if (snapshot.operation() == null || !KNOWN_OPERATIONS.contains(snapshot.operation())) {
        return Optional.of(
            String.format(
                "snapshot %d of %s has the unknown operation '%s'",
                snapshot.snapshotId(), tableName, snapshot.operation()));
      }
    }
    if (!acrossSchemas && from.schemaId() != null && to.schemaId() != null && !from.schemaId().equals(to.schemaId())) {
      return Optional.of(
          String.format(
              "the schema of %s changed between snapshots %d (schema %d) and %d (schema %d)",
              tableName, from.snapshotId(), from.schemaId(), to.snapshotId(), to.schemaId()));
    }
    for (Snapshot snapshot : snapshots) {
      // An append adds data files only, so only the other operations can carry delete files.
      if (!DataOperations.APPEND.equals(snapshot.operation()) && addsEqualityDeletes(table, snapshot)) {
        return Optional.of(
            String.format(
                "snapshot %d of %s added equality delete files, whose deleted rows cannot be told apart cheaply",
                snapshot.snapshotId(), tableName));
      }
    }
    return Optional.empty();
  }

  /**
   * Reads the delete manifests {@code snapshot} wrote. Unlike {@link Snapshot#addedDeleteFiles},
   * this passes the table's partition specs, which Iceberg otherwise reads (deprecated) from each
   * manifest's metadata.
   */
  private static boolean addsEqualityDeletes(Table table, Snapshot snapshot) {
    for (ManifestFile manifest : snapshot.deleteManifests(table.io())) {
      if (!Objects.equals(manifest.snapshotId(), snapshot.snapshotId()) || !manifest.hasAddedFiles()) {
        continue;
      }
      try (ManifestReader<DeleteFile> reader =
          ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
        for (DeleteFile deleteFile : reader) {
          // A manifest can carry older files along; a file added here has this snapshot's
          // sequence number (unknown in manifests of old writers: then count it as added).
          boolean added =
              deleteFile.fileSequenceNumber() == null
                  || deleteFile.fileSequenceNumber() == snapshot.sequenceNumber();
          if (added && deleteFile.content() == FileContent.EQUALITY_DELETES) {
            return true;
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot read delete manifest " + manifest.path(), e);
      }
    }
    return false;
  }

  private static SnapshotRange unsupported(String format, Object... args) {
    return new SnapshotRange(List.of(), String.format(format, args));
  }

  /** The snapshots in the range, oldest first; empty when the range is unsupported. */
  List<Snapshot> snapshots() {
    return snapshots;
  }

  List<String> operations() {
    return snapshots.stream().map(Snapshot::operation).map(op -> Objects.requireNonNullElse(op, "unknown")).toList();
  }

  Optional<String> unsupportedReason() {
    return Optional.ofNullable(unsupportedReason);
  }

  /**
   * The runs of the range between its rewrites: each run of snapshots that are not {@code replace}
   * (compaction of data or delete files), from the snapshot before it (exclusive) to its last one.
   * A rewrite changes no row, so the table's data before a run equals its data after the run
   * before, and the range's change is the sum of its runs' changes; a run never spans a rewrite,
   * so capturing it reads none of the files a compaction wrote.
   *
   * @param fromExclusive the snapshot the range starts after
   */
  List<Run> runsBetweenRewrites(long fromExclusive) {
    List<Run> runs = new ArrayList<>();
    long start = fromExclusive;
    Long end = null;
    boolean appendsOnly = true;
    for (Snapshot snapshot : snapshots) {
      if (DataOperations.REPLACE.equals(snapshot.operation())) {
        if (end != null) {
          runs.add(new Run(start, end, appendsOnly));
          end = null;
          appendsOnly = true;
        }
        start = snapshot.snapshotId();
      } else {
        end = snapshot.snapshotId();
        appendsOnly &= DataOperations.APPEND.equals(snapshot.operation());
      }
    }
    if (end != null) {
      runs.add(new Run(start, end, appendsOnly));
    }
    return runs;
  }

  /**
   * Whether {@code older} is an ancestor of {@code newer} with only rewrites ({@code replace}
   * snapshots, which change no row) after it, so the table holds the same rows at both.
   */
  static boolean onlyRewritesBetween(Table table, long older, long newer) {
    Snapshot snapshot = table.snapshot(newer);
    while (snapshot != null && snapshot.snapshotId() != older) {
      if (!DataOperations.REPLACE.equals(snapshot.operation())) {
        return false;
      }
      snapshot = snapshot.parentId() == null ? null : table.snapshot(snapshot.parentId());
    }
    return snapshot != null;
  }

  /** Snapshots after {@code fromExclusive} up to {@code toInclusive}, none a rewrite. */
  record Run(long fromExclusive, long toInclusive, boolean appendsOnly) {}

  /** True when every snapshot in the range has one of {@code operations} (and so when it is empty). */
  boolean consistsOnlyOf(Set<String> operations) {
    return snapshots.stream()
        .allMatch(snapshot -> snapshot.operation() != null && operations.contains(snapshot.operation()));
  }
}
