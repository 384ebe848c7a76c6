package io.floe.spark.ivm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The bounds of a few collected change rows, found on the driver, against Spark's aggregates. */
class ChangeBoundsTest {
  private final SparkSession spark = SharedSpark.session();

  private static final List<String> COLUMNS = List.of("s", "n", "big", "amount", "d", "ts", "ntz");

  private Dataset<Row> rows(String values) {
    return spark.sql(
        "SELECT CAST(s AS STRING) AS s, CAST(n AS TINYINT) AS n, CAST(big AS BIGINT) AS big, CAST(amount AS DECIMAL(12,3)) AS amount,"
            + " CAST(d AS DATE) AS d, CAST(ts AS TIMESTAMP) AS ts, CAST(ntz AS TIMESTAMP_NTZ) AS ntz"
            + " FROM VALUES " + values + " AS v(s, n, big, amount, d, ts, ntz)");
  }

  /** The driver's bounds of {@code change} and Spark's, as lists of the same shape. */
  private List<List<Object>> bothWays(Dataset<Row> change) {
    ChangeBounds bounds = ChangeBounds.of(change, COLUMNS);
    List<Row> collected = change.select(bounds.exactValues().toArray(new Column[0])).collectAsList();
    List<Object> driver = bounds.aggregated(collected, 0);
    Row aggregated = change.agg(bounds.aggregates().get(0), bounds.aggregates().subList(1, bounds.aggregates().size()).toArray(new Column[0])).first();
    List<Object> sparks = new ArrayList<>();
    for (int i = 0; i < aggregated.length(); i++) {
      sparks.add(aggregated.get(i));
    }
    return List.of(driver, sparks);
  }

  @Test
  void collectedRowsGiveTheBoundsSparksAggregatesGive() {
    // Strings Java's UTF-16 order and Spark's UTF-8 byte order sort differently (U+FFFF against
    // U+10000), NULLs in every column, a date before the Gregorian reform, negative numbers.
    List<List<Object>> both = bothWays(rows(
        "('b', 3, -5, 1.250, '2024-02-29', '2024-01-01 10:00:00', '2024-01-01 10:00:00'),"
            + " ('\uFFFF', -7, 9000000000, -3.500, '1582-10-04', '1969-12-31 23:59:59.999999', '2300-01-01 00:00:00'),"
            + " ('\uD800\uDC00', NULL, NULL, NULL, NULL, NULL, NULL),"
            + " ('a', 0, 0, 0.000, '1970-01-01', '2024-01-01 09:59:59', '1900-01-01 00:00:00'),"
            + " (NULL, 5, 7, 99.999, '9999-12-31', '2038-01-19 03:14:08', '2024-01-01 10:00:00')"));
    assertThat(both.get(0)).hasSize(3 * COLUMNS.size()).isEqualTo(both.get(1));
    assertThat(both.get(0).get(1)).as("greatest string, by UTF-8 bytes").isEqualTo("\uD800\uDC00");
  }

  @Test
  void rowsOfOnlyNullsAndNoRowsAtAllAreTheirOwnCases() {
    List<List<Object>> nulls = bothWays(rows("(NULL, NULL, NULL, NULL, NULL, NULL, NULL)"));
    assertThat(nulls.get(0)).isEqualTo(nulls.get(1)).containsOnly(null, true);
    List<List<Object>> none = bothWays(rows("('a', 1, 1, 1.000, '2024-01-01', '2024-01-01 00:00:00', '2024-01-01 00:00:00')").limit(0));
    assertThat(none.get(0)).isEqualTo(none.get(1)).containsOnlyNulls();
  }
}
