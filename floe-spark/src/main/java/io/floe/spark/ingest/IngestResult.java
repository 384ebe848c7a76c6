package io.floe.spark.ingest;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one ingestion run did: how many new files and rows it loaded, how many rows landed in
 * {@value StreamingTable#RESCUED_DATA}, the columns schema drift added, the warnings (empty files, type
 * conflicts, files changed after loading) and the snapshot it committed (none when no file was new).
 */
public record IngestResult(
    String table,
    int filesLoaded,
    long rowsLoaded,
    long rowsRescued,
    List<String> columnsAdded,
    List<String> warnings,
    long durationMs,
    Long snapshotId) {

  public IngestResult {
    Objects.requireNonNull(table, "table");
    columnsAdded = List.copyOf(columnsAdded);
    warnings = List.copyOf(warnings);
  }

  public Optional<Long> snapshot() {
    return Optional.ofNullable(snapshotId);
  }
}
