package io.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;

/** The listed-values test Floe puts on large scans, against Catalyst's own {@code InSet}. */
class IntegralInTest {
  private final SparkSession spark = SharedSpark.session();

  /** BIGINT values over the whole range, an INT column, and a column with NULLs. */
  private Dataset<Row> rows() {
    return spark.sql(
        "SELECT id, id * 1000003L * IF(id % 2 = 0, 1, -1) AS l, CAST(id AS INT) AS i, IF(id % 10 = 0, NULL, id) AS n"
            + " FROM range(-20000, 20000)"
            + " UNION ALL SELECT 0, 9223372036854775807L, 2147483647, -9223372036854775808L"
            + " UNION ALL SELECT 1, -9223372036854775808L, -2147483648, NULL");
  }

  /** Some values of each column, some absent from all, and the extremes. */
  private static Set<Long> listedLongs() {
    Random random = new Random(7);
    Set<Long> listed = new HashSet<>(List.of(Long.MAX_VALUE, Long.MIN_VALUE, 0L));
    for (int k = 0; k < 3000; k++) {
      long id = random.nextInt(60000) - 30000;
      listed.add(random.nextBoolean() ? id : id * 1000003L * (id % 2 == 0 ? 1 : -1));
    }
    listed.add(random.nextLong());
    return listed;
  }

  private static Column integralIn(String column, Set<?> values) {
    return ExpressionUtils.column(IntegralIn.of(ExpressionUtils.expression(functions.col(column)), values));
  }

  private static Column inSet(String column, Set<?> values) {
    return ExpressionUtils.column(
        new InSet(ExpressionUtils.expression(functions.col(column)), Scala.set(new HashSet<Object>(values))));
  }

  /** Each column's test by both expressions, side by side, NULLs included, and the rows each filter keeps. */
  private void assertAgreesWithInSet() {
    Set<Long> longs = listedLongs();
    Set<Integer> ints = new HashSet<>();
    longs.stream().filter(v -> v == (int) (long) v).forEach(v -> ints.add((int) (long) v));
    Dataset<Row> tested = rows().select(
        functions.col("id"),
        integralIn("l", longs).as("l_ours"), inSet("l", longs).as("l_theirs"),
        integralIn("i", ints).as("i_ours"), inSet("i", ints).as("i_theirs"),
        integralIn("n", longs).as("n_ours"), inSet("n", longs).as("n_theirs"));
    assertThat(tested.filter("NOT (l_ours <=> l_theirs) OR NOT (i_ours <=> i_theirs) OR NOT (n_ours <=> n_theirs)").count())
        .isZero();
    // The tests do tell rows apart: some are in, some are out, and a NULL is neither.
    assertThat(tested.filter("l_ours").count()).isPositive();
    assertThat(tested.filter("NOT l_ours").count()).isPositive();
    assertThat(tested.filter("i_ours").count()).isPositive();
    assertThat(tested.filter("n_ours IS NULL").count()).isEqualTo(4001);

    Dataset<Row> ours = rows().filter(integralIn("l", longs));
    Dataset<Row> theirs = rows().filter(inSet("l", longs));
    assertThat(ours.exceptAll(theirs).count()).isZero();
    assertThat(theirs.exceptAll(ours).count()).isZero();
    assertThat(ours.filter("l = 9223372036854775807L OR l = -9223372036854775808L").count()).isEqualTo(2);
  }

  @Test
  void agreesWithInSetInGeneratedCode() {
    // Code that fails to compile fails the query instead of falling back to the interpreted test.
    withSettings(java.util.Map.of("spark.sql.codegen.fallback", "false", "spark.sql.codegen.factoryMode", "CODEGEN_ONLY"),
        this::assertAgreesWithInSet);
  }

  @Test
  void agreesWithInSetInterpreted() {
    withSettings(java.util.Map.of("spark.sql.codegen.wholeStage", "false", "spark.sql.codegen.factoryMode", "NO_CODEGEN"),
        this::assertAgreesWithInSet);
  }

  private void withSettings(java.util.Map<String, String> settings, Runnable body) {
    java.util.Map<String, String> before = new java.util.HashMap<>();
    settings.keySet().forEach(key -> before.put(key, spark.conf().get(key, null)));
    settings.forEach(spark.conf()::set);
    try {
      body.run();
    } finally {
      before.forEach((key, value) -> {
        if (value == null) {
          spark.conf().unset(key);
        } else {
          spark.conf().set(key, value);
        }
      });
    }
  }

  @Test
  void showsHowManyValuesItListsNotTheValues() {
    Set<Long> listed = new HashSet<>();
    for (long v = 0; v < 1000; v++) {
      listed.add(v * 31);
    }
    IntegralIn test = IntegralIn.of(ExpressionUtils.expression(functions.col("l")), listed);
    assertThat(test.listedCount()).isEqualTo(1000);
    String plan = rows().filter(ExpressionUtils.column(test)).queryExecution().optimizedPlan().toString();
    assertThat(plan).contains("1000 values").doesNotContain("30969");
  }

  @Test
  void listsIntegralValuesOnly() {
    assertThat(IntegralIn.tests(DataTypes.LongType)).isTrue();
    assertThat(IntegralIn.tests(DataTypes.IntegerType)).isTrue();
    assertThat(IntegralIn.tests(DataTypes.StringType)).isFalse();
    List<Object> strings = new ArrayList<>(List.of("a"));
    assertThatThrownBy(() -> IntegralIn.of(ExpressionUtils.expression(functions.col("l")), strings))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("integral values");
  }
}
