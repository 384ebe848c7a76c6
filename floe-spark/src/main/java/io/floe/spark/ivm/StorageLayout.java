package io.floe.spark.ivm;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.UserDefinedType;
import org.apache.spark.sql.types.VariantType;

/**
 * How a storage table keeps a materialized view's rows, so that a refresh can change them in place.
 * Hidden bookkeeping columns start with {@value #HIDDEN_PREFIX}; readers in a Floe session never
 * see them, and the view itself (what other engines read) has only the MV's columns.
 *
 * <ul>
 *   <li>{@link #PLAIN}: the rows as the definition returns them; refreshed in full only.
 *   <li>{@link #ROWS}: one storage row per distinct MV row, with its multiplicity ({@value
 *       #COUNT}) and two independent 64-bit hashes of its values ({@value #KEY}, {@value #KEY2}),
 *       together a 128-bit key that finds it again without reading its values.
 *   <li>{@link #GROUPS}: one storage row per group of an aggregate MV, with the group's source row
 *       count ({@value #COUNT}), for every SUM column the count of its non-null inputs, for every
 *       AVG column that count and the running sum ({@link AverageState}) and, for every
 *       COUNT(DISTINCT x) column, a map from each value of x to its row count.
 * </ul>
 */
public enum StorageLayout {
  PLAIN,
  ROWS,
  GROUPS;

  /** View property holding the layout name. */
  public static final String PROPERTY = "floe.storage-layout";

  public static final String HIDDEN_PREFIX = "__floe_";
  public static final String COUNT = "__floe_count";
  public static final String KEY = "__floe_key";
  /**
   * The second hash of a {@link #ROWS} row's values. With {@link #KEY} it makes a 128-bit key, so a
   * refresh can match stored rows of atomic columns on the two hashes alone: two different such
   * rows share both with a chance of about 2<sup>-128</sup> per pair, where 64 bits would make a
   * collision plausible in tables of billions of rows ({@link #withRowKey}).
   */
  public static final String KEY2 = "__floe_key2";
  /** What {@link #KEY2} hashes ahead of the row's values, so that it is independent of {@link #KEY}. */
  private static final String KEY2_SALT = "floe.row-key";

  /** The hidden count of non-null inputs of the SUM or AVG in output column {@code position}. */
  public static String nonNullCount(int position) {
    return HIDDEN_PREFIX + "nn_" + position;
  }

  /** The hidden running sum of the AVG in output column {@code position}, in AVG's sum type. */
  public static String runningSum(int position) {
    return HIDDEN_PREFIX + "sum_" + position;
  }

  /**
   * The hidden map of the COUNT(DISTINCT x) in output column {@code position}: each value of x in
   * the group to its number of source rows.
   */
  public static String distinctState(int position) {
    return HIDDEN_PREFIX + "dv_" + position;
  }

  public static boolean isDistinctState(String column) {
    return column.startsWith(HIDDEN_PREFIX + "dv_");
  }

  /** Whether a column name has the reserved prefix, in any case: Spark resolves names in any case. */
  public static boolean isHidden(String column) {
    return column.regionMatches(true, 0, HIDDEN_PREFIX, 0, HIDDEN_PREFIX.length());
  }

  /**
   * A query reading the MV's rows from {@code tableReference}, a Spark table reference, with the
   * select list {@code readColumns} (see {@link io.floe.spark.mv.MaterializedView#readColumns()}).
   */
  public String readSql(String tableReference, List<String> readColumns) {
    String columns = String.join(", ", readColumns);
    if (this == ROWS) {
      return "SELECT " + columns + " FROM " + tableReference + " AS __floe_s"
          + " LATERAL VIEW explode(array_repeat(0, CAST(" + COUNT + " AS INT))) __floe_x AS __floe_r";
    }
    return "SELECT " + columns + " FROM " + tableReference;
  }

  /**
   * Hidden counter columns (BIGINT) of this layout for an MV with the given SUM column positions;
   * {@link DefinitionShape#hiddenFields()} adds the AVG columns' counts and sums and the
   * distinct-value maps, after these (a storage table created before Floe kept them gets them
   * appended, and the aggregate's hidden columns are matched to the storage's by position).
   */
  public List<String> hiddenColumns(List<Integer> sumPositions) {
    List<String> hidden = new ArrayList<>();
    if (this == ROWS) {
      hidden.add(COUNT);
      hidden.add(KEY);
      hidden.add(KEY2);
    } else if (this == GROUPS) {
      hidden.add(COUNT);
      sumPositions.forEach(p -> hidden.add(nonNullCount(p)));
    }
    return hidden;
  }

  /**
   * The column a {@link #ROWS} storage table is clustered by when refreshed in full: the first
   * view column of a type whose file bounds a MERGE can prune on ({@link ChangeBounds}). With the
   * rows in ranges of it, a change of rows close in that column (new or recently written ids, recent
   * times) reads few storage files. Empty when no column qualifies.
   */
  public static Optional<String> clusteringColumn(StructType viewSchema) {
    for (StructField field : viewSchema.fields()) {
      if (ChangeBounds.prunable(field.dataType())) {
        return Optional.of(field.name());
      }
    }
    return Optional.empty();
  }

  /**
   * {@code rows} with the {@link #ROWS} row key of their {@code viewColumns} appended: {@value #KEY}
   * and {@value #KEY2}, xxHash64 of the values and of which of them are NULL. Spark's hash skips a
   * NULL, so without the NULL flags {@code ('x', NULL)} and {@code (NULL, 'x')} would hash alike.
   * The second hashes a constant first, which makes it a different function of the same input.
   *
   * <p>For rows whose columns are all of {@linkplain #identifiedByKey atomic types} the key tells
   * different rows apart but by chance; nested values can still hash alike when their NULLs or
   * elements shift, so a MERGE also compares columns of other types by value.
   */
  public static Dataset<Row> withRowKey(Dataset<Row> rows, List<String> viewColumns) {
    List<org.apache.spark.sql.Column> input = new ArrayList<>(List.of(columns(viewColumns)));
    // One flag bit per column, 62 columns a BIGINT.
    for (int first = 0; first < viewColumns.size(); first += 62) {
      org.apache.spark.sql.Column nulls = functions.lit(0L);
      for (int i = first; i < Math.min(first + 62, viewColumns.size()); i++) {
        nulls =
            nulls.plus(
                functions.when(functions.col(quote(viewColumns.get(i))).isNull(), functions.lit(1L << (i - first)))
                    .otherwise(functions.lit(0L)));
      }
      input.add(nulls);
    }
    List<org.apache.spark.sql.Column> salted = new ArrayList<>();
    salted.add(functions.lit(KEY2_SALT));
    salted.addAll(input);
    return rows.withColumn(KEY, functions.xxhash64(input.toArray(new org.apache.spark.sql.Column[0])))
        .withColumn(KEY2, functions.xxhash64(salted.toArray(new org.apache.spark.sql.Column[0])));
  }

  /**
   * Whether a column of this type is told apart by the row key alone: an atomic type, hashed whole.
   * Arrays, maps, structs and variants are not: their hash skips nested NULLs and does not mark
   * where one element ends, so a MERGE compares them by value.
   */
  public static boolean identifiedByKey(DataType type) {
    return !(type instanceof StructType
        || type instanceof ArrayType
        || type instanceof MapType
        || type instanceof VariantType
        || type instanceof UserDefinedType);
  }

  /** Column references to {@code names}, each quoted. */
  static org.apache.spark.sql.Column[] columns(List<String> names) {
    return names.stream().map(n -> org.apache.spark.sql.functions.col(quote(n))).toArray(org.apache.spark.sql.Column[]::new);
  }

  public static String quote(String identifier) {
    return "`" + identifier.replace("`", "``") + "`";
  }
}
