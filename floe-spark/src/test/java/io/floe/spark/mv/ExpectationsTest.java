package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.refresh.ExpectationResult;
import io.floe.refresh.ExpectationResultParser;
import io.floe.mv.OnViolation;
import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

class ExpectationsTest extends MvTestSupport {
  private static final String ORDERS =
      "CREATE TABLE orders (id INT, amount DECIMAL(10,2), day STRING) USING iceberg TBLPROPERTIES ("
          + "'format-version'='2', 'write.delete.mode'='merge-on-read')";

  @Override
  protected String prefix() {
    return "expect";
  }

  private Row refresh(String mv) {
    return sql("REFRESH MATERIALIZED VIEW " + mv).get(0);
  }

  private List<ExpectationResult> recorded(String mv) {
    return ExpectationResultParser.fromJson(storageSnapshot(mv).summary().get(ExpectationResultParser.SUMMARY_KEY));
  }

  @Test
  void withoutAnOnViolationClauseRowsAreKeptAndCounted() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 10.00, '2024-01-01'), (2, NULL, '2024-01-02'), (3, 5.00, 'bad date')");
    Row created =
        sql("CREATE MATERIALIZED VIEW silver (id, amount, day, CONSTRAINT has_amount EXPECT (amount IS NOT NULL), "
            + "CONSTRAINT valid_day EXPECT (try_to_timestamp(day, 'yyyy-MM-dd') IS NOT NULL)) "
            + "AS SELECT id, amount, day FROM orders").get(0);
    assertThat(created.<String>getAs("expectations")).isEqualTo("has_amount: 2 passed, 1 failed (KEEP); valid_day: 2 passed, 1 failed (KEEP)");
    assertThat(count("SELECT * FROM silver")).isEqualTo(3);
    assertThat(recorded("silver"))
        .containsExactly(
            new ExpectationResult("has_amount", OnViolation.KEEP, 2, 1),
            new ExpectationResult("valid_day", OnViolation.KEEP, 2, 1));
    assertThat(describe("silver").get("Last Refresh Expectations"))
        .isEqualTo("has_amount: 2 passed, 1 failed (KEEP); valid_day: 2 passed, 1 failed (KEEP)");
    assertThat(describe("silver").get("Expectations"))
        .isEqualTo("CONSTRAINT has_amount EXPECT (amount IS NOT NULL), "
            + "CONSTRAINT valid_day EXPECT (try_to_timestamp(day, 'yyyy-MM-dd') IS NOT NULL)");
  }

  @Test
  void dropRowLeavesFailingRowsOutAndCanQuarantineThem() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 10.00, '2024-01-01'), (2, NULL, '2024-01-02'), (3, -5.00, '2024-01-03')");
    Row created =
        sql("CREATE MATERIALIZED VIEW silver (CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW) "
            + "TBLPROPERTIES ('floe.expectations.quarantine' = 'true') AS SELECT id, amount FROM orders").get(0);
    assertThat(created.<String>getAs("expectations")).isEqualTo("positive: 1 passed, 2 failed (DROP ROW)");
    assertSameRows("SELECT * FROM silver", "SELECT id, amount FROM orders WHERE amount > 0", 1);
    List<Row> quarantined = sql("SELECT id, _failed_constraints FROM silver__quarantine ORDER BY id");
    assertThat(quarantined).extracting(r -> r.getInt(0)).containsExactly(2, 3);
    assertThat(quarantined).extracting(r -> r.getString(1)).containsOnly("positive");

    sql("INSERT INTO orders VALUES (4, 1.00, '2024-01-04')");
    Row full = sql("REFRESH MATERIALIZED VIEW silver FULL").get(0);
    assertThat(full.<String>getAs("expectations")).isEqualTo("positive: 2 passed, 2 failed (DROP ROW)");
    assertThat(count("SELECT * FROM silver__quarantine")).isEqualTo(2);
  }

  @Test
  void failUpdateAbortsTheRefreshAndLeavesTheViewAtItsPreviousSnapshot() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 10.00, '2024-01-01'), (2, 3.00, '2024-01-02')");
    sql("CREATE MATERIALIZED VIEW silver (CONSTRAINT has_amount EXPECT (amount IS NOT NULL) ON VIOLATION FAIL UPDATE) "
        + "AS SELECT id, amount FROM orders");
    long before = storageSnapshot("silver").snapshotId();
    sql("INSERT INTO orders VALUES (3, NULL, '2024-01-03')");
    String error = errorOf("REFRESH MATERIALIZED VIEW silver");
    assertThat(error)
        .contains("Cannot refresh lake." + ns + ".silver: constraint has_amount EXPECT (amount IS NOT NULL) failed on 1 row")
        .contains("ON VIOLATION FAIL UPDATE")
        .contains("{\"id\":3}")
        .contains("the view is unchanged");
    assertThat(storageSnapshot("silver").snapshotId()).isEqualTo(before);
    assertSameRows("SELECT * FROM silver", "SELECT id, amount FROM orders WHERE id < 3", 2);

    String full = errorOf("REFRESH MATERIALIZED VIEW silver FULL");
    assertThat(full).contains("constraint has_amount");
    assertThat(storageSnapshot("silver").snapshotId()).isEqualTo(before);
  }

  @Test
  void incrementalRefreshEvaluatesTheChangeOnlyAndDropsConsistently() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 10.00, '2024-01-01'), (2, NULL, '2024-01-02')");
    String definition = "SELECT id, amount * 2 AS doubled FROM orders";
    sql("CREATE MATERIALIZED VIEW kept (CONSTRAINT has_amount EXPECT (doubled IS NOT NULL)) AS " + definition);
    sql("CREATE MATERIALIZED VIEW dropped (CONSTRAINT has_amount EXPECT (doubled IS NOT NULL) ON VIOLATION DROP ROW) "
        + "AS " + definition);
    sql("CREATE MATERIALIZED VIEW strict (CONSTRAINT has_amount EXPECT (doubled IS NOT NULL) ON VIOLATION FAIL UPDATE) "
        + "AS SELECT id, amount * 2 AS doubled FROM orders WHERE id <> 2");

    sql("INSERT INTO orders VALUES (3, 3.00, '2024-01-03'), (4, NULL, '2024-01-04'), (5, 5.00, '2024-01-05')");
    Row kept = refresh("kept");
    assertThat(kept.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(kept.<String>getAs("expectations")).isEqualTo("has_amount: 2 passed, 1 failed (KEEP)");
    assertSameRows("SELECT * FROM kept", definition, 5);
    Row dropped = refresh("dropped");
    assertThat(dropped.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(dropped.<String>getAs("expectations")).isEqualTo("has_amount: 2 passed, 1 failed (DROP ROW)");
    assertSameRows("SELECT * FROM dropped", definition + " WHERE amount IS NOT NULL", 3);
    assertThat(recorded("dropped")).containsExactly(new ExpectationResult("has_amount", OnViolation.DROP_ROW, 2, 1));

    long strictBefore = storageSnapshot("strict").snapshotId();
    String error = errorOf("REFRESH MATERIALIZED VIEW strict");
    assertThat(error).contains("constraint has_amount").contains("failed on 1 row");
    assertThat(storageSnapshot("strict").snapshotId()).isEqualTo(strictBefore);

    // Deleting a dropped row and a kept one: the dropped one was never stored, nothing goes negative.
    sql("DELETE FROM orders WHERE id IN (4, 5)");
    Row afterDelete = refresh("dropped");
    assertThat(afterDelete.getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM dropped", definition + " WHERE amount IS NOT NULL", 2);

  }

  @Test
  void aViewRecomputedByKeyJudgesTheRecomputedRowsOnly() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 10.00, '2024-01-01'), (1, 10.00, '2024-01-01'), (2, NULL, '2024-01-02')");
    // The seed's deduplication: the first row per order id, a window partitioned by the id.
    String definition = "SELECT id, amount, day FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY day) AS n "
        + "FROM orders) WHERE n = 1";
    sql("CREATE MATERIALIZED VIEW dedup (CONSTRAINT has_amount EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW) AS "
        + definition);
    assertSameRows("SELECT * FROM dedup", definition + " AND amount IS NOT NULL", 1);

    sql("INSERT INTO orders VALUES (3, NULL, '2024-01-03'), (4, 4.00, '2024-01-04'), (4, 4.00, '2024-01-04')");
    Row refreshed = refresh("dedup");
    assertThat(refreshed.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(refreshed.<String>getAs("expectations")).isEqualTo("has_amount: 1 passed, 1 failed (DROP ROW)");
    assertSameRows("SELECT * FROM dedup", definition + " AND amount IS NOT NULL", 2);

    sql("UPDATE orders SET amount = 3.00 WHERE id = 3");
    Row fixed = refresh("dedup");
    assertThat(fixed.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(fixed.<String>getAs("expectations")).isEqualTo("has_amount: 1 passed, 0 failed (DROP ROW)");
    assertSameRows("SELECT * FROM dedup", definition + " AND amount IS NOT NULL", 3);
  }

  @Test
  void anAggregateWithExpectationsRefreshesInFull() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 10.00, '2024-01-01'), (2, 2.00, '2024-01-01')");
    sql("CREATE MATERIALIZED VIEW daily (CONSTRAINT big EXPECT (total > 5) ON VIOLATION DROP ROW) "
        + "AS SELECT day, SUM(amount) AS total FROM orders GROUP BY day");
    sql("INSERT INTO orders VALUES (3, 1.00, '2024-01-02')");
    Row result = refresh("daily");
    assertThat(result.getString(1)).isEqualTo("FULL");
    assertThat(result.getString(2)).contains("expectations");
    assertThat(result.<String>getAs("expectations")).isEqualTo("big: 1 passed, 1 failed (DROP ROW)");
    assertSameRows("SELECT * FROM daily", "SELECT day, SUM(amount) AS total FROM orders GROUP BY day HAVING total > 5", 1);
  }

  /** A definition that fails on the data is the definition's failure, not its expectations'. */
  @Test
  void aFailingDefinitionIsNotBlamedOnItsExpectations() {
    sql(ORDERS);
    sql("INSERT INTO orders VALUES (1, 2.00, 'monday')");
    String error = errorOf("CREATE MATERIALIZED VIEW parsed (CONSTRAINT c EXPECT (v > 0)) AS SELECT id, CAST(day AS DOUBLE) AS v FROM orders");
    assertThat(error).contains("CAST_INVALID_INPUT").doesNotContain("expectations");
    assertThat(viewExists("parsed")).isFalse();
  }

  @Test
  void aConstraintOnAnUnknownColumnIsRefusedAtCreate() {
    sql(ORDERS);
    String error = errorOf("CREATE MATERIALIZED VIEW silver (CONSTRAINT c EXPECT (nope > 0)) AS SELECT id FROM orders");
    assertThat(error).contains("Cannot create materialized view lake." + ns + ".silver: constraint c EXPECT (nope > 0)");
    assertThat(viewExists("silver")).isFalse();
  }
}
