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
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spark.SharedSpark;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.junit.jupiter.api.Test;

/** COUNT(DISTINCT) value counts packed in one binary value, and the merge of a refresh's net changes into them. */
class ValueCountsTest {
  private final SparkSession spark = SharedSpark.session();

  @Test
  void mergeAddsTheChangesDropsValuesThatEmptyAndAddsNewValuesThatArePositive() {
    List<String> merged = merged(
        "SELECT map(1L, 2L, 2L, 1L, 3L, 5L) AS stored, map(2L, -1L, 3L, 1L, 4L, 2L, 5L, -3L, 6L, 0L) AS change"
            + " UNION ALL SELECT map(1L, 2L), map()"
            + " UNION ALL SELECT map(1L, 2L, 2L, 1L), map(1L, -2L, 2L, -1L)"
            + " UNION ALL SELECT map(), map(7L, 1L)"
            + " UNION ALL SELECT map(-5L, 1L, 10L, 1L), map(-6L, 1L, 0L, 2L, 11L, 3L, 10L, -1L)",
        DataTypes.LongType);
    assertThat(merged).containsExactly(
        "[{1, 2}, {3, 6}, {4, 2}]",
        "[{1, 2}]",
        "[]",
        "[{7, 1}]",
        "[{-6, 1}, {-5, 1}, {0, 2}, {11, 3}]");
  }

  @Test
  void stringValuesAreComparedByTheirBytes() {
    assertThat(merged(
            "SELECT map('a', 1L, 'b', 2L, 'é', 1L) AS stored, map('a', -1L, 'c', 1L, 'b', 1L, 'É', 1L) AS change",
            DataTypes.StringType))
        .containsExactly("[{b, 3}, {c, 1}, {É, 1}, {é, 1}]");
  }

  @Test
  void packAddsUpCountsOfOneValueAndLeavesOutZeroCountsAndNulls() {
    Row row = spark.sql(
            "SELECT array(named_struct('v', 'x', 'n', 2L), named_struct('v', 'y', 'n', 1L),"
                + " named_struct('v', 'x', 'n', 3L), named_struct('v', 'z', 'n', 0L),"
                + " named_struct('v', CAST(NULL AS STRING), 'n', 4L), named_struct('v', 'w', 'n', -1L),"
                + " named_struct('v', 'w', 'n', 1L)) AS entries")
        .select(packed(col("entries")).as("p"))
        .select(array_sort(map_entries(unpacked(col("p"), DataTypes.StringType))).cast("string"), size(col("p")))
        .first();
    assertThat(row.getString(0)).isEqualTo("[{x, 5}, {y, 1}]");
    assertThat(row.getLong(1)).isEqualTo(2);
  }

  @Test
  void everyKeptTypeComesBackAsItWasPacked() {
    String[] values = {
      "true", "CAST(7 AS TINYINT)", "CAST(-300 AS SMALLINT)", "-42", "9223372036854775807", "DATE'2024-02-29'",
      "TIMESTAMP'2024-01-01 10:00:00'", "TIMESTAMP_NTZ'2024-01-01 10:00:00'", "INTERVAL '3' YEAR",
      "INTERVAL '2 03:04:05' DAY TO SECOND", "CAST(1.5 AS FLOAT)", "CAST('NaN' AS DOUBLE)", "-12345678901234567890.12BD",
      "CAST(-3.10 AS DECIMAL(5, 2))", "'Zürich'"
    };
    for (String value : values) {
      Dataset<Row> source = spark.sql("SELECT " + value + " AS v");
      DataType type = source.schema().apply("v").dataType();
      assertThat(ValueCounts.keeps(type)).as(value).isTrue();
      Row row = source
          .selectExpr("v", "array(struct(v, 3L), struct(v, 1L)) AS entries")
          .select(col("v"), unpacked(packed(col("entries")), type).as("m"))
          .selectExpr("map_keys(m)[0] <=> v", "m[v]", "CAST(map_keys(m)[0] AS STRING)", "CAST(v AS STRING)")
          .first();
      assertThat(row.getString(2)).as(value).isEqualTo(row.getString(3));
      assertThat(row.getBoolean(0)).as(value).isTrue();
      assertThat(row.getLong(1)).as(value).isEqualTo(4);
    }
  }

  @Test
  void negativeAndPositiveZeroAreOneValue() {
    Row row = spark.sql("SELECT array(named_struct('v', CAST(0.0 AS DOUBLE), 'n', 1L), named_struct('v', -CAST(0.0 AS DOUBLE), 'n', 2L)) AS entries")
        .select(size(packed(col("entries"))))
        .first();
    assertThat(row.getLong(0)).isEqualTo(1);
  }

  @Test
  void mergeAgreesWithMapZipWithOnRandomMaps() {
    Dataset<Row> maps = spark.sql(
        "SELECT * FROM (SELECT g, map_from_entries(collect_list(struct(v, n))) AS stored FROM"
            + " (SELECT id % 50 AS g, CAST(id * 7 % 400 AS STRING) AS v, sum(1L + id % 2) AS n FROM range(0, 800)"
            + "  GROUP BY 1, 2) GROUP BY g) s"
            + " JOIN"
            + " (SELECT g, map_from_entries(collect_list(struct(v, n))) AS change FROM"
            + "  (SELECT id % 50 AS g, CAST(IF(id % 3 = 0, id * 7 % 400, id * 11 % 500) AS STRING) AS v, sum(id % 7 - 4) AS n"
            + "   FROM range(0, 1800) GROUP BY 1, 2) GROUP BY g) c USING (g)");
    Column reference = map_filter(
        map_zip_with(col("stored"), col("change"), (value, kept, change) -> {
          Column rows = coalesce(kept, lit(0L)).plus(coalesce(change, lit(0L)));
          return when(rows.gt(0L), rows);
        }),
        (value, rows) -> rows.isNotNull());
    Dataset<Row> expected = maps.select(col("g"), array_sort(map_entries(reference)).as("entries"));
    Column merged = merge(packed(map_entries(col("stored"))), packed(map_entries(col("change"))));
    Dataset<Row> actual = maps.select(
        col("g"), array_sort(map_entries(unpacked(merged, DataTypes.StringType))).as("entries"), size(merged).as("n"));
    assertThat(expected.count()).isEqualTo(50);
    assertThat(expected.exceptAll(actual.drop("n")).count()).isZero();
    assertThat(actual.drop("n").exceptAll(expected).count()).isZero();
    assertThat(actual.filter("n <> size(entries)").count()).isZero();
    // The changes do change the maps: values leave some and join others.
    Dataset<Row> sizes = actual.join(maps, "g");
    assertThat(sizes.filter("size(entries) < size(stored)").count()).isPositive();
    assertThat(sizes.filter("size(entries) > size(stored)").count()).isPositive();
  }

  @Test
  void keepsAtomicValuesWithProperEqualityOnly() {
    assertThat(ValueCounts.keeps(DataTypes.LongType)).isTrue();
    assertThat(ValueCounts.keeps(DataTypes.StringType)).isTrue();
    assertThat(ValueCounts.keeps(DataTypes.createDecimalType(12, 2))).isTrue();
    // A case-insensitive collation makes 'a' and 'A' one value: their bytes differ.
    assertThat(ValueCounts.keeps(StringType.apply("UTF8_LCASE"))).isFalse();
    assertThat(ValueCounts.keeps(DataTypes.BinaryType)).isFalse();
    assertThat(ValueCounts.keeps(DataTypes.createArrayType(DataTypes.LongType))).isFalse();
  }

  @Test
  void bytesOfAnotherFormatAreRefusedByName() {
    assertThatThrownBy(() -> ValueCounts.size(new byte[] {9, 0, 0, 0, 0}))
        .hasMessageContaining("COUNT(DISTINCT) state")
        .hasMessageContaining("format byte 9");
  }

  private List<String> merged(String sql, DataType type) {
    Column stored = packed(map_entries(col("stored")));
    Column change = packed(map_entries(col("change")));
    return spark.sql(sql)
        .select(array_sort(map_entries(unpacked(merge(stored, change), type))).cast("string"))
        .collectAsList()
        .stream()
        .map(row -> row.getString(0))
        .toList();
  }

  private static Column packed(Column entries) {
    return ExpressionUtils.column(new ValueCounts.Pack(ExpressionUtils.expression(entries)));
  }

  private static Column merge(Column stored, Column change) {
    return ExpressionUtils.column(new ValueCounts.Merge(ExpressionUtils.expression(stored), ExpressionUtils.expression(change)));
  }

  private static Column size(Column packed) {
    return ExpressionUtils.column(new ValueCounts.Size(ExpressionUtils.expression(packed)));
  }

  private static Column unpacked(Column packed, DataType type) {
    return ExpressionUtils.column(new ValueCounts.Unpack(ExpressionUtils.expression(packed), type));
  }
}
