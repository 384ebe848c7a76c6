package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.broadcast;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;

import io.floe.refresh.ExpectationResult;
import io.floe.spark.capture.ChangeCapture;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.ExpectationCheck;
import io.floe.spark.refresh.PinnedDefinition;
import io.floe.spark.refresh.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.iceberg.Snapshot;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;

/**
 * The delta rule of a {@link KeyedShape}: the keys the change touches are read from the changed
 * rows of each source (a deleted row carries its old key, an inserted one its new key); the view
 * rows of those keys are replaced by the definition's rows for them at the new snapshot, read
 * from the sources' rows of those keys (or of their range) where {@link KeyNarrowing} can filter
 * the reads. The
 * result is a change of a {@link StorageLayout#ROWS} storage table: view rows with a weight and a
 * hash, merged like a linear definition's.
 */
final class KeyedRecompute {
  /**
   * The change to merge, or the reason it cannot be computed incrementally; with the rows the
   * expectations judged, to quarantine once the change is committed.
   */
  record Change(
      Optional<Dataset<Row>> rows, String fallback, List<ExpectationResult> expectations, Optional<Dataset<Row>> judged) {
    Change(Optional<Dataset<Row>> rows, String fallback) {
      this(rows, fallback, List.of(), Optional.empty());
    }
  }

  private static final String WEIGHT = ChangeCapture.WEIGHT;
  private static final String MATCHED = "__floe_matched_";
  private static final String KEY_VALUE = "__floe_key_value_";

  private final SparkSession spark;

  KeyedRecompute(SparkSession spark) {
    this.spark = spark;
  }

  /**
   * Computes the change.
   *
   * @param changed the sources that changed
   * @param zsets each changed source's rows with their weights, as the definition reads them
   * @param rowsRead rows read per source, to which the recomputation's reads are added
   */
  Change change(
      MaterializedView mv,
      KeyedShape shape,
      Snapshot readSnapshot,
      PinnedDefinition pinned,
      List<Source> changed,
      List<Dataset<Row>> zsets,
      Map<String, Long> rowsRead,
      ExpectationCheck check) {
    // The stored row's columns: the view's, then the hidden key columns the definition appends.
    List<String> view = mv.rowColumns();
    Dataset<Row> definition = org.apache.spark.sql.classic.Dataset.ofRows(spark, pinned.plan());
    Dataset<Row> fresh = definition.toDF(view.toArray(new String[0]));
    List<Dataset<Row>> touched = new ArrayList<>();
    for (KeyedShape.Key key : shape.keys()) {
      List<DataType> types = new ArrayList<>();
      for (KeyedShape.KeyColumn column : key.columns()) {
        types.add(fresh.select(keyValue(view, column)).schema().fields()[0].dataType());
      }
      Dataset<Row> keys = null;
      for (int s = 0; s < changed.size(); s++) {
        Source source = changed.get(s);
        List<Column> values = new ArrayList<>();
        for (int c = 0; c < key.columns().size(); c++) {
          Optional<org.apache.spark.sql.catalyst.expressions.Expression> value =
              key.columns().get(c).valueIn(source.table().uuid().toString());
          if (value.isEmpty()) {
            return new Change(
                Optional.empty(),
                "source " + source.name() + " changed, and its rows do not carry the " + shape.operator().unit()
                    + " of the view, so any " + shape.operator().unit() + " may be touched");
          }
          values.add(org.apache.spark.sql.classic.ExpressionUtils.column(value.get()).cast(types.get(c)).as(KEY_VALUE + c));
        }
        Dataset<Row> sourceKeys = zsets.get(s).select(values.toArray(new Column[0]));
        keys = keys == null ? sourceKeys : keys.union(sourceKeys);
      }
      try {
        touched.add(keys.distinct().localCheckpoint(true));
      } catch (RuntimeException e) {
        if (!key.computed()) {
          throw e;
        }
        // The partition expression runs on every changed row, also on those the definition's
        // filters leave out, where it may fail (a CAST under ANSI mode): recompute it all.
        return new Change(
            Optional.empty(),
            "the " + shape.operator().unit() + " expression of the view failed on a changed source row ("
                + io.floe.ErrorMessages.firstLine(e.getMessage()) + "), which the definition may leave out");
      }
    }
    Optional<KeyNarrowing> narrowing =
        touched.size() == 1
            ? KeyNarrowing.of(definition.queryExecution().analyzed(), shape.keys().get(0), touched.get(0))
            : Optional.empty();
    if (narrowing.isPresent()) {
      fresh = org.apache.spark.sql.classic.Dataset.ofRows(spark, narrowing.get().plan()).toDF(view.toArray(new String[0]));
    }
    for (Source source : pinned.sources()) {
      long read = narrowing.map(n -> n.rowsRead(source)).orElse(source.totalRecords());
      rowsRead.merge(source.name().toString(), read, Long::sum);
    }

    Dataset<Row> old =
        spark.sql("SELECT * FROM " + mv.storageName().quoted() + " VERSION AS OF " + readSnapshot.snapshotId());
    Dataset<Row> removed =
        touchedRows(old, view, shape, touched).select(withWeight(view, col(StorageLayout.quote(StorageLayout.COUNT)).multiply(-1)));
    Dataset<Row> recomputed = touchedRows(fresh, view, shape, touched);
    List<ExpectationResult> expectations = List.of();
    Optional<Dataset<Row>> judgedRows = Optional.empty();
    if (!check.isEmpty()) {
      // The recomputed rows of the touched keys are the change the expectations judge; the stored
      // rows they replace passed when they were stored, so dropping here keeps the view consistent.
      ExpectationCheck.Judged judged = check.judgeIncoming(recomputed);
      expectations = judged.results();
      recomputed = judged.passing();
      judgedRows = Optional.of(judged.judged());
    }
    Dataset<Row> added = recomputed.groupBy(StorageLayout.columns(view)).agg(count(lit(1)).as(WEIGHT));
    Dataset<Row> change =
        removed.unionByName(added.select(withWeight(view, col(WEIGHT))))
            .groupBy(StorageLayout.columns(view))
            .agg(sum(col(WEIGHT)).as(WEIGHT))
            .filter(col(WEIGHT).notEqual(0));
    return new Change(Optional.of(StorageLayout.withRowKey(change, view).localCheckpoint(true)), "", expectations, judgedRows);
  }

  /** A view row's value of a key column: the first non-null of its positions. */
  private static Column keyValue(List<String> view, KeyedShape.KeyColumn column) {
    List<Column> values = new ArrayList<>();
    column.positions().forEach(p -> values.add(col(StorageLayout.quote(view.get(p)))));
    return values.size() == 1 ? values.get(0) : coalesce(values.toArray(new Column[0]));
  }

  /** The rows of {@code rows} whose value of some key is among the touched ones (NULL matching NULL). */
  private static Dataset<Row> touchedRows(
      Dataset<Row> rows, List<String> view, KeyedShape shape, List<Dataset<Row>> touched) {
    if (touched.size() == 1) {
      return rows.join(broadcast(touched.get(0)), matches(rows, touched.get(0), KEY_VALUE, view, shape.keys().get(0)), "left_semi");
    }
    // A row is touched through any of its keys: mark the matches of each, keep the marked rows.
    Dataset<Row> marked = rows;
    Column any = lit(false);
    for (int k = 0; k < touched.size(); k++) {
      String prefix = KEY_VALUE + k + "_";
      List<String> names = new ArrayList<>();
      for (String column : touched.get(k).columns()) {
        names.add(prefix + column.substring(KEY_VALUE.length()));
      }
      Dataset<Row> keys = touched.get(k).toDF(names.toArray(new String[0])).withColumn(MATCHED + k, lit(true));
      marked = marked.join(broadcast(keys), matches(marked, keys, prefix, view, shape.keys().get(k)), "left");
      any = any.or(col(MATCHED + k).isNotNull());
    }
    List<Column> original = new ArrayList<>();
    for (String column : rows.columns()) {
      original.add(col(StorageLayout.quote(column)));
    }
    return marked.filter(any).select(original.toArray(new Column[0]));
  }

  private static Column matches(
      Dataset<Row> rows, Dataset<Row> keys, String prefix, List<String> view, KeyedShape.Key key) {
    Column condition = lit(true);
    for (int c = 0; c < key.columns().size(); c++) {
      List<Column> values = new ArrayList<>();
      for (int p : key.columns().get(c).positions()) {
        values.add(rows.col(StorageLayout.quote(view.get(p))));
      }
      Column value = values.size() == 1 ? values.get(0) : coalesce(values.toArray(new Column[0]));
      condition = condition.and(value.eqNullSafe(keys.col(prefix + c)));
    }
    return condition;
  }

  private static Column[] withWeight(List<String> view, Column weight) {
    List<Column> result = new ArrayList<>();
    view.forEach(c -> result.add(col(StorageLayout.quote(c))));
    result.add(weight.cast("long").as(WEIGHT));
    return result.toArray(new Column[0]);
  }

}
