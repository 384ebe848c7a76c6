package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.lit;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.Dataset;

/**
 * What a computed change writes to and removes from the storage, and the condition its rows'
 * value ranges put on the stored rows the MERGE can match ({@link ChangeBounds}).
 */
record ChangeSummary(long written, long removed, Optional<String> bounds) {
  /**
   * The summary of a change, from one pass over it: two counts and the matched columns' bounds,
   * kept only when they leave out a data file of the storage at {@code readSnapshot} (the bounds
   * of a change spread over the storage's whole range would only make the MERGE read their
   * columns to drop nothing).
   */
  static ChangeSummary of(
      Dataset<Row> change, Column written, Column removed, List<String> matched, Table storage, Snapshot readSnapshot) {
    ChangeBounds bounds = ChangeBounds.of(change, matched);
    List<Column> more = new ArrayList<>(List.of(coalesce(removed, lit(0L))));
    more.addAll(bounds.aggregates());
    Row row = change.agg(coalesce(written, lit(0L)), more.toArray(new Column[0])).first();
    return new ChangeSummary(row.getLong(0), row.getLong(1), bounds.condition(row, 2, "t", storage, readSnapshot));
  }
}
