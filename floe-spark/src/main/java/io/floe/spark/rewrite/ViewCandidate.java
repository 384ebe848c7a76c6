package io.floe.spark.rewrite;

import io.floe.mv.RefreshState;
import io.floe.spark.mv.MaterializedView;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Table;

/**
 * A materialized view that may answer part of a query: its definition in canonical form, its
 * storage table, and the table UUIDs its last refresh read.
 *
 * @param definition the definition's block, or empty when it has none (then {@code reason} says why)
 */
record ViewCandidate(
    MaterializedView mv,
    Table storage,
    Optional<RefreshState> lastRefresh,
    Set<String> sourceTables,
    Optional<QueryBlock> definition,
    String reason) {

  String name() {
    return mv.name().toString();
  }
}
