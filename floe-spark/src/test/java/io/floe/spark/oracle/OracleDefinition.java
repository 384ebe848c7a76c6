package io.floe.spark.oracle;

import java.util.List;
import java.util.function.Function;

/**
 * A generated materialized view definition: SQL with the placeholders {@code {t1}} and {@code
 * {t2}} where its sources are read, so the same text yields the definition Floe stores and the
 * recomputation at pinned snapshots.
 *
 * @param sources the placeholders' table names the template reads, in order
 * @param partitionColumn an output column the storage table may be partitioned by, or null
 * @param notInSubquery the subquery of the definition's NOT IN filter, as a template, or null
 */
record OracleDefinition(
    OracleShape shape, String template, List<String> sources, String partitionColumn, String notInSubquery) {
  OracleDefinition(OracleShape shape, String template, List<String> sources) {
    this(shape, template, sources, null, null);
  }

  OracleDefinition(OracleShape shape, String template, List<String> sources, String partitionColumn) {
    this(shape, template, sources, partitionColumn, null);
  }

  /**
   * A definition filtering by {@code NOT IN (notInSubquery)} (a template like the definition's):
   * incremental while the subquery stays empty, or stays without a NULL, or keeps one.
   */
  static OracleDefinition notIn(String template, List<String> sources, String notInSubquery) {
    return new OracleDefinition(OracleShape.SUBQUERY_NOT_IN, template, sources, null, notInSubquery);
  }

  /** The definition with every source placeholder replaced by {@code reference.apply(table)}. */
  String sql(Function<String, String> reference) {
    String sql = template;
    for (String table : List.of("t1", "t2")) {
      sql = sql.replace("{" + table + "}", reference.apply(table));
    }
    return sql;
  }
}
