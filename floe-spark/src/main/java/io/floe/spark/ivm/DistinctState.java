package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.collect_list;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.struct;
import static org.apache.spark.sql.functions.sum;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.ExpressionUtils;

/**
 * The hidden state that keeps COUNT(DISTINCT x) incremental under inserts, updates and deletes:
 * for each group of the storage table, every non-null value of x in the group with its number of
 * source rows, packed in one {@code BINARY} column ({@link ValueCounts}). A change adds the rows it
 * inserts and subtracts those it deletes, value by value; a value whose count reaches zero leaves,
 * and the distinct count is the number of values left. A refresh reads and rewrites the counts of
 * the groups a change touches only, never the sources.
 *
 * <p>The state holds one entry per distinct (group, value) pair, so it is as large as the view's
 * distinct counts add up to. The code speaks of a group's packed counts as its map.
 */
public final class DistinctState {
  /** The column of a value of x in {@link DefinitionShape.DistinctColumn#valueCounts()}. */
  public static final String VALUE = "__floe_value";
  /** The column of the value's row count in {@link DefinitionShape.DistinctColumn#valueCounts()}. */
  public static final String ROWS = "__floe_rows";
  /** The column of a group's net change per value while it is merged into the stored map. */
  private static final String CHANGE = "__floe_value_change";

  private DistinctState() {}

  /** The columns of a value-count plan's rows: the group {@code keys}, {@value #VALUE}, {@value #ROWS}. */
  static List<String> countColumns(List<String> keys) {
    List<String> columns = new ArrayList<>(keys);
    columns.add(VALUE);
    columns.add(ROWS);
    return columns;
  }

  /**
   * One map per group from row counts per group and value ({@code keys}, {@value #VALUE}, {@value
   * #ROWS}), named {@code column}. Without keys, the one group of the whole input.
   */
  public static Dataset<Row> maps(Dataset<Row> counts, List<String> keys, String column) {
    Column entries =
        ExpressionUtils.column(new ValueCounts.Pack(ExpressionUtils.expression(collect_list(struct(col(VALUE), col(ROWS))))))
            .as(column);
    return keys.isEmpty() ? counts.agg(entries) : counts.groupBy(StorageLayout.columns(keys)).agg(entries);
  }

  /**
   * {@code rows} with the maps named {@code name} attached by group (null-safe on the keys); a group
   * without any non-null value gets an empty map.
   */
  public static Dataset<Row> attach(Dataset<Row> rows, Dataset<Row> maps, List<String> keys, String name) {
    List<String> renamed = new ArrayList<>();
    for (String key : keys) {
      renamed.add("__floe_m_" + key);
    }
    renamed.add(name);
    Dataset<Row> right = maps.toDF(renamed.toArray(new String[0]));
    Column condition = lit(true);
    for (String key : keys) {
      condition = condition.and(rows.col(StorageLayout.quote(key)).eqNullSafe(right.col(StorageLayout.quote("__floe_m_" + key))));
    }
    List<Column> output = new ArrayList<>();
    for (String existing : rows.columns()) {
      output.add(rows.col(StorageLayout.quote(existing)));
    }
    output.add(orEmpty(right.col(StorageLayout.quote(name))).as(name));
    return rows.join(right, condition, "left").select(output.toArray(new Column[0]));
  }

  /**
   * The {@code affected} groups, each with its stored value maps of {@code columns} from {@code
   * stored} (the stored rows of those groups); a group not stored yet gets empty maps. The stored rows
   * are kept where they are, in the partitions of {@code stored}, and only their keys are looked up
   * by the groups that are new: the maps, nearly all of a refresh's data, are then merged by as many
   * tasks as {@code stored} has partitions, never shipped whole to each task.
   */
  static Dataset<Row> withStoredMaps(
      Dataset<Row> affected, Dataset<Row> stored, List<String> keys, Collection<DefinitionShape.DistinctColumn> columns) {
    List<Column> kept = new ArrayList<>(List.of(StorageLayout.columns(keys)));
    List<Column> empty = new ArrayList<>(List.of(StorageLayout.columns(keys)));
    for (DefinitionShape.DistinctColumn column : columns) {
      String state = column.stateColumn();
      kept.add(col(StorageLayout.quote(state)));
      empty.add(lit(ValueCounts.empty()).as(state));
    }
    Dataset<Row> storedKeys = stored.select(StorageLayout.columns(keys));
    Dataset<Row> fresh =
        affected
            .join(storedKeys, AggregateDelta.joinCondition(affected, storedKeys, keys), "left_anti")
            .select(empty.toArray(new Column[0]));
    return stored.select(kept.toArray(new Column[0])).unionByName(fresh);
  }

  /**
   * The {@code groups} a change touches, which carry their stored map of {@code column} ({@link
   * #withStoredMaps}), with the new map: the stored one plus the rows the change inserts, minus
   * those it deletes, value by value, without the values whose count is no longer positive.
   *
   * <p>The change is small, so it is summed into one small map per group; that map is merged into the
   * stored one row by row ({@link ValueCounts#merge}), in the task that holds the stored row. The
   * stored maps are never exploded: the runs of entries between changed values are copied whole.
   */
  static Dataset<Row> maintained(
      Dataset<Row> groups, Dataset<Row> inserted, Dataset<Row> deleted, List<String> keys, DefinitionShape.DistinctColumn column) {
    String state = column.stateColumn();
    List<String> grouping = new ArrayList<>(keys);
    grouping.add(VALUE);
    Dataset<Row> net =
        inserted
            .unionByName(deleted.withColumn(ROWS, col(ROWS).multiply(-1)))
            .groupBy(StorageLayout.columns(grouping))
            .agg(sum(col(ROWS)).as(ROWS))
            .filter(col(ROWS).notEqual(0));
    Dataset<Row> both = attach(groups, maps(net, keys, CHANGE), keys, CHANGE);
    Column merged = ExpressionUtils.column(
        new ValueCounts.Merge(ExpressionUtils.expression(col(StorageLayout.quote(state))), ExpressionUtils.expression(col(CHANGE))));
    return both.withColumn(state, merged).drop(CHANGE);
  }

  /** The map, or an empty map where there is none. */
  static Column orEmpty(Column map) {
    return coalesce(map, lit(ValueCounts.empty()));
  }

  /** The number of values in a group's map: its COUNT(DISTINCT x). */
  static Column size(Column map) {
    return ExpressionUtils.column(new ValueCounts.Size(ExpressionUtils.expression(map)));
  }

}
