package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.floe.refresh.ExpectationResult;
import io.floe.spark.refresh.ExpectationCheck;
import io.floe.spark.Scala;
import io.floe.spark.capture.ChangeCapture;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The delta rule of a definition of plain rows: its change as consolidated rows with weights,
 * matched to the stored rows by a hash of their values, or by their source rows' ids ({@link
 * RowLineage}); and the MERGE that applies it.
 */
final class LinearDelta {
  private static final String WEIGHT = ChangeCapture.WEIGHT;

  private final ChangeTerms terms;

  LinearDelta(ChangeTerms terms) {
    this.terms = terms;
  }

  // LINEAR: consolidated rows with weights, keyed by a hash of their values.

  static Dataset<Row> linearChange(MaterializedView mv, Dataset<Row> inserted, Dataset<Row> deleted) {
    List<String> view = mv.rowColumns();
    Dataset<Row> change =
        inserted.withColumn(WEIGHT, lit(1L))
            .unionByName(deleted.withColumn(WEIGHT, lit(-1L)))
            .groupBy(StorageLayout.columns(view))
            .agg(sum(col(WEIGHT)).as(WEIGHT))
            .filter(col(WEIGHT).notEqual(0));
    return StorageLayout.withRowKey(change, view).localCheckpoint(true);
  }
  /** The summary of a change of plain rows, and its distinct row keys when they are few enough to list. */
  record LinearSummary(ChangeSummary summary, Optional<Set<Long>> keys) {}

  /**
   * The summary of a change of plain rows, bounded by the column the storage is clustered by: the
   * bounds of other columns rarely prune files and each costs the aggregate three more columns.
   *
   * <p>A change of at most {@link #MAX_LISTED_KEYS} rows is collected once, its keys, weights and
   * clustering values, and summarized here: a small refresh spends tens of milliseconds on every
   * Spark job, and an aggregate of a few rows costs one or two of them for nothing. A larger change
   * is summarized by an aggregate and lists no keys.
   */
  static LinearSummary linearSummary(MaterializedView mv, Dataset<Row> change, Table storage, Snapshot readSnapshot) {
    List<StructField> view = new ArrayList<>();
    for (String column : mv.viewColumns()) {
      view.add(change.schema().apply(column));
    }
    List<String> clustering =
        StorageLayout.clusteringColumn(new StructType(view.toArray(new StructField[0]))).stream().toList();
    ChangeBounds bounds = ChangeBounds.of(change, clustering);
    List<Column> collected = new ArrayList<>(List.of(col(StorageLayout.quote(StorageLayout.KEY)), col(WEIGHT)));
    collected.addAll(bounds.exactValues());
    List<Row> rows = change.select(collected.toArray(new Column[0])).limit(MAX_LISTED_KEYS + 1).collectAsList();
    if (rows.size() > MAX_LISTED_KEYS) {
      ChangeSummary summary = ChangeSummary.of(
          change,
          sum(when(col(WEIGHT).gt(0), col(WEIGHT))),
          sum(when(col(WEIGHT).lt(0), col(WEIGHT).multiply(-1))),
          clustering,
          storage,
          readSnapshot);
      return new LinearSummary(summary, Optional.empty());
    }
    long written = 0;
    long removed = 0;
    Set<Long> keys = new java.util.HashSet<>();
    for (Row row : rows) {
      keys.add(row.getLong(0));
      long weight = row.getLong(1);
      if (weight > 0) {
        written += weight;
      } else {
        removed -= weight;
      }
    }
    List<Object> summaryRow = new ArrayList<>(List.of(written, removed));
    summaryRow.addAll(bounds.aggregated(rows, 2));
    Optional<String> condition = bounds.condition(RowFactory.create(summaryRow.toArray()), 2, "t", storage, readSnapshot);
    return new LinearSummary(new ChangeSummary(written, removed, condition), Optional.of(keys));
  }

  /**
   * Up to how many changed row keys the storage MERGE lists. MERGE joins the storage table with the
   * change as a right outer join (unmatched change rows are inserted), which Spark cannot run with
   * the small change broadcast, so it shuffles every stored row. A condition on the target alone
   * is applied to the storage scan before that join: with the keys listed, only the few stored rows
   * that can match are shuffled. Beyond this many keys the set shipped with every task of the
   * storage scan grows large ({@link StorageMerge}).
   */
  private static final int MAX_LISTED_KEYS = 50_000;

  static StorageMerge linearMerge(
      MaterializedView mv, String changes, StructType changeSchema, Optional<Set<Long>> changedKeys, Optional<String> bounds) {
    // The stored row: the view's columns and the hidden key columns, all matched by the row key.
    List<String> view = mv.rowColumns();
    String count = StorageLayout.quote(StorageLayout.COUNT);
    String key = StorageLayout.quote(StorageLayout.KEY);
    String weight = StorageLayout.quote(WEIGHT);
    // The listed keys and the bounds are implied by the match, so they change which rows are read,
    // not the result.
    Optional<Set<Long>> listedKeys = changedKeys.filter(keys -> !keys.isEmpty());
    String listed = listedKeys.map(keys -> " AND " + StorageMerge.listedKeysCondition("t." + key)).orElse("");
    String key2 = StorageLayout.quote(StorageLayout.KEY2);
    // Columns the key does not tell apart are compared by value (StorageLayout.withRowKey).
    String nested =
        view.stream()
            .filter(c -> !StorageLayout.identifiedByKey(changeSchema.apply(c).dataType()))
            .map(c -> " AND t." + StorageLayout.quote(c) + " <=> s." + StorageLayout.quote(c))
            .collect(Collectors.joining());
    String match =
        "t." + key + " = s." + key + " AND t." + key2 + " = s." + key2
            + nested
            + listed
            + bounds.map(b -> " AND " + b).orElse("");
    // A matched row has the change row's values (the 128-bit key and the compared nested columns
    // say so), so an update sets them from the change: the MERGE then reads only the keys and the
    // count of the stored rows, not their values.
    String values =
        view.stream().map(c -> "t." + StorageLayout.quote(c) + " = s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String insertColumns = view.stream().map(StorageLayout::quote).collect(Collectors.joining(", "));
    String insertValues = view.stream().map(c -> "s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String sql = "MERGE INTO %s t USING " + changes + " s ON " + match
        + " WHEN MATCHED AND t." + count + " + s." + weight + " <= 0 THEN DELETE"
        + " WHEN MATCHED THEN UPDATE SET " + values + ", t." + count + " = t." + count + " + s." + weight
        + " WHEN NOT MATCHED AND s." + weight + " > 0 THEN INSERT (" + insertColumns + ", " + count + ", " + key + ", " + key2
        + ") VALUES (" + insertValues + ", s." + weight + ", s." + key + ", s." + key2 + ")";
    return listedKeys.map(keys -> StorageMerge.listing(sql, keys)).orElse(StorageMerge.of(sql));
  }

  // LINEAR keyed by row lineage: each changed source row's view row as of the newer snapshot, or its removal.

  /** The change column saying that the stored row of the row id goes. */
  private static final String REMOVED = "__floe_removed";

  /**
   * A change of storage rows keyed by row lineage ({@link RowLineage}).
   *
   * @param rows one row per changed source row id: the view row it now gives, or {@value #REMOVED}
   *     when it gives none (deleted, or filtered out or rejected by a constraint now)
   * @param ids the row ids, when few enough to list for the MERGE
   * @param repeated how many row ids gave more than one row (none, unless the source's writers broke its lineage)
   */
  record LineageChange(
      Dataset<Row> rows, Optional<Set<Long>> ids, long repeated, List<ExpectationResult> expectations,
      Optional<Dataset<Row>> judged) {}

  LineageChange lineageChange(
      MaterializedView mv, LogicalPlan keyed, List<Source> sources, List<Source> oldSources, Dataset<Row> zset,
      ExpectationCheck check, String suffix, List<String> views) {
    String newer = "__floe_newer_" + suffix;
    zset.filter(col(WEIGHT).gt(0)).drop(WEIGHT).createOrReplaceTempView(newer);
    views.add(newer);
    List<String> names = new ArrayList<>(mv.rowColumns());
    names.add(RowLineage.COLUMN);
    Dataset<Row> upserts = terms.term(mv, keyed, names, sources, oldSources, 0, newer);
    List<ExpectationResult> expectations = List.of();
    Optional<Dataset<Row>> judged = Optional.empty();
    if (!check.isEmpty()) {
      ExpectationCheck.Judged judgement = check.judgeIncoming(upserts);
      expectations = judgement.results();
      upserts = judgement.passing();
      judged = Optional.of(judgement.judged().drop(RowLineage.COLUMN));
    }
    Column id = col(StorageLayout.quote(RowLineage.COLUMN));
    Dataset<Row> kept = RowLineage.storageRows(upserts).withColumn(REMOVED, lit(false));
    Dataset<Row> gone =
        zset.select(col(ChangeCapture.ROW_ID).as(RowLineage.COLUMN)).distinct()
            .join(upserts.select(id), Scala.seq(RowLineage.COLUMN), "left_anti")
            .withColumn(REMOVED, lit(true));
    Dataset<Row> rows = kept.unionByName(gone, true).localCheckpoint(true);
    List<Row> listed = rows.select(id).limit(MAX_LISTED_KEYS + 1).collectAsList();
    if (listed.size() <= MAX_LISTED_KEYS) {
      Set<Long> ids = listed.stream().map(r -> r.getLong(0)).collect(Collectors.toSet());
      return new LineageChange(rows, Optional.of(ids), listed.size() - ids.size(), expectations, judged);
    }
    long repeated = rows.groupBy(id).count().filter(col("count").gt(1L)).count();
    return new LineageChange(rows, Optional.empty(), repeated, expectations, judged);
  }

  /** The MERGE of a change keyed by row lineage: a stored row is matched by its source row's id alone. */
  static StorageMerge lineageMerge(MaterializedView mv, String changes, LineageChange change) {
    List<String> columns = new ArrayList<>(mv.rowColumns());
    columns.addAll(List.of(StorageLayout.COUNT, StorageLayout.KEY, StorageLayout.KEY2));
    String id = StorageLayout.quote(RowLineage.COLUMN);
    String removed = StorageLayout.quote(REMOVED);
    Optional<Set<Long>> listedIds = change.ids().filter(ids -> !ids.isEmpty());
    String listed = listedIds.map(ids -> " AND " + StorageMerge.listedKeysCondition("t." + id)).orElse("");
    String values =
        columns.stream().map(c -> "t." + StorageLayout.quote(c) + " = s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String insertColumns = columns.stream().map(StorageLayout::quote).collect(Collectors.joining(", "));
    String insertValues = columns.stream().map(c -> "s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String sql = "MERGE INTO %s t USING " + changes + " s ON t." + id + " = s." + id + listed
        + " WHEN MATCHED AND s." + removed + " THEN DELETE"
        + " WHEN MATCHED THEN UPDATE SET " + values
        + " WHEN NOT MATCHED AND NOT s." + removed + " THEN INSERT (" + insertColumns + ", " + id + ") VALUES ("
        + insertValues + ", s." + id + ")";
    return listedIds.map(ids -> StorageMerge.listing(sql, ids)).orElse(StorageMerge.of(sql));
  }
}
