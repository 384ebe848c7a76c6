package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.array_sort;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.map_entries;
import static org.apache.spark.sql.functions.map_filter;
import static org.apache.spark.sql.functions.map_zip_with;
import static org.apache.spark.sql.functions.when;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.junit.jupiter.api.Test;

/** The merge of a stored COUNT(DISTINCT) value-count map with a refresh's net changes per value. */
class ValueCountMergeTest {
  private final SparkSession spark = SharedSpark.session();

  @Test
  void addsTheChangesDropsValuesThatEmptyAndAddsNewValuesThatArePositive() {
    List<Row> merged = merged(
        "SELECT map(1L, 2L, 2L, 1L, 3L, 5L) AS stored, map(2L, -1L, 3L, 1L, 4L, 2L, 5L, -3L, 6L, 0L) AS change"
            + " UNION ALL SELECT map(1L, 2L), map()"
            + " UNION ALL SELECT map(1L, 2L, 2L, 1L), map(1L, -2L, 2L, -1L)"
            + " UNION ALL SELECT map(), map(7L, 1L)");
    assertThat(merged).map(row -> row.getString(0)).containsExactly(
        "{1 -> 2, 3 -> 6, 4 -> 2}",
        "{1 -> 2}",
        "{}",
        "{7 -> 1}");
  }

  @Test
  void stringValuesAreComparedByTheirBytes() {
    List<Row> merged = merged("SELECT map('a', 1L, 'b', 2L) AS stored, map('a', -1L, 'c', 1L, 'b', 1L) AS change");
    assertThat(merged).map(row -> row.getString(0)).containsExactly("{b -> 3, c -> 1}");
  }

  @Test
  void agreesWithMapZipWithOnRandomMaps() {
    Dataset<Row> maps = spark.sql(
        "SELECT * FROM (SELECT g, map_from_entries(collect_list(struct(v, n))) AS stored FROM"
            + " (SELECT id % 50 AS g, CAST(id * 7 % 400 AS STRING) AS v, sum(1L + id % 2) AS n FROM range(0, 800)"
            + "  GROUP BY 1, 2) GROUP BY g) s"
            + " JOIN"
            + " (SELECT g, map_from_entries(collect_list(struct(v, n))) AS change FROM"
            + "  (SELECT id % 50 AS g, CAST(IF(id % 3 = 0, id * 7 % 400, id * 11 % 500) AS STRING) AS v, sum(id % 7 - 4) AS n FROM range(0, 1800)"
            + "   GROUP BY 1, 2) GROUP BY g) c USING (g)");
    Column reference = map_filter(
        map_zip_with(col("stored"), col("change"), (value, kept, change) -> {
          Column rows = coalesce(kept, lit(0L)).plus(coalesce(change, lit(0L)));
          return when(rows.gt(0L), rows);
        }),
        (value, rows) -> rows.isNotNull());
    Dataset<Row> expected = maps.select(col("g"), array_sort(map_entries(reference)).as("entries"));
    Dataset<Row> actual = maps.select(col("g"), array_sort(map_entries(merge())).as("entries"));
    assertThat(expected.count()).isEqualTo(50);
    assertThat(expected.exceptAll(actual).count()).isZero();
    assertThat(actual.exceptAll(expected).count()).isZero();
    // The changes do change the maps: values leave some and join others.
    Dataset<Row> sizes = actual.join(maps, "g");
    assertThat(sizes.filter("size(entries) < size(stored)").count()).isPositive();
    assertThat(sizes.filter("size(entries) > size(stored)").count()).isPositive();
  }

  @Test
  void mergesCountsKeyedByValuesWithProperEqualityOnly() {
    assertThat(ValueCountMerge.merges(DataTypes.createMapType(DataTypes.LongType, DataTypes.LongType))).isTrue();
    assertThat(ValueCountMerge.merges(DataTypes.createMapType(DataTypes.StringType, DataTypes.LongType))).isTrue();
    assertThat(ValueCountMerge.merges(DataTypes.createMapType(DataTypes.createDecimalType(12, 2), DataTypes.LongType))).isTrue();
    // A case-insensitive collation makes 'a' and 'A' one value: their bytes differ.
    assertThat(ValueCountMerge.merges(DataTypes.createMapType(StringType.apply("UTF8_LCASE"), DataTypes.LongType))).isFalse();
    assertThat(ValueCountMerge.merges(DataTypes.createMapType(DataTypes.LongType, DataTypes.IntegerType))).isFalse();
  }

  private List<Row> merged(String sql) {
    return spark.sql(sql).select(merge().cast("string")).collectAsList();
  }

  private static Column merge() {
    return ExpressionUtils.column(
        new ValueCountMerge(ExpressionUtils.expression(col("stored")), ExpressionUtils.expression(col("change"))));
  }
}
