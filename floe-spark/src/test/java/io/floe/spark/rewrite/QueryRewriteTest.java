package io.floe.spark.rewrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Queries over base tables answered from materialized views, and the cases that must not be. */
class QueryRewriteTest extends RewriteTestSupport {
  private static final String CITY_DAY =
      "SELECT city, day, count(*) AS trips, count(tip) AS tipped, sum(fare) AS fares, min(fare) AS low,"
          + " max(fare) AS high, sum(tip) AS tips FROM trips WHERE fare > 0 GROUP BY city, day";

  @Override
  protected String prefix() {
    return "rewrite";
  }

  @BeforeEach
  void trips() {
    sql("CREATE TABLE trips (id INT, city STRING, day INT, driver INT, fare BIGINT, tip DOUBLE) USING iceberg");
    sql("INSERT INTO trips VALUES (1, 'tokyo', 1, 10, 12, 1.5), (2, 'tokyo', 1, 11, 0, NULL), (3, 'tokyo', 2, 10, 7, NULL),"
        + " (4, 'osaka', 1, 12, 30, 4.0), (5, 'osaka', 2, 12, 8, 0.5), (6, 'kobe', 2, 13, 5, NULL),"
        + " (7, 'tokyo', 2, 11, 9, 2.0), (8, 'osaka', 2, 14, 3, NULL)");
    sql("CREATE TABLE drivers (driver INT, region STRING) USING iceberg");
    sql("INSERT INTO drivers VALUES (10, 'east'), (11, 'east'), (12, 'west'), (13, 'west'), (14, 'north')");
  }

  @Test
  void exactDefinitionIsAnsweredFromTheViewAsStored() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    Answer answer = assertAnsweredBy(CITY_DAY, "city_day");

    assertThat(answer.report()).contains("same groups, columns read as stored");
  }

  @Test
  void filterOnAGroupingColumnIsCompensated() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    assertAnsweredBy(
        "SELECT city, day, sum(fare) AS fares FROM trips WHERE fare > 0 AND city = 'tokyo' AND day >= 2 GROUP BY city, day",
        "city_day");
  }

  @Test
  void everyRollableAggregateIsRolledUpToCoarserGroups() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    Answer answer =
        assertAnsweredBy(
            "SELECT city, count(*) AS trips, count(tip) AS tipped, sum(fare) AS fares, min(fare) AS low,"
                + " max(fare) AS high, avg(tip) AS avg_tip, avg(fare) AS avg_fare, sum(tip) AS tips,"
                + " count(DISTINCT day) AS days FROM trips WHERE fare > 0 GROUP BY city",
            "city_day");
    assertThat(answer.report()).contains("rolled up from the view's groups");

    assertAnsweredBy("SELECT count(*) AS trips, sum(fare) AS fares FROM trips WHERE fare > 0", "city_day");
    assertAnsweredBy("SELECT day, max(fare) + 1 AS m, count(*) * 2 AS c FROM trips WHERE fare > 0 GROUP BY day", "city_day");
  }

  @Test
  void averageOfADecimalRollsUpRoundingAsSparkDoes() {
    sales();
    sql("CREATE MATERIALIZED VIEW sales_day AS SELECT city, day, sum(amount) AS total, count(amount) AS n"
        + " FROM sales GROUP BY city, day");

    Answer answer = assertAnsweredBy("SELECT city, avg(amount) AS mean FROM sales GROUP BY city", "sales_day");

    assertThat(answer.report()).contains("rolled up from the view's groups");
    assertAnsweredBy("SELECT avg(amount) AS mean, sum(amount) AS total FROM sales", "sales_day");
    assertAnsweredBy("SELECT day, avg(amount) AS mean FROM sales WHERE city <> 'kobe' GROUP BY day", "sales_day");
  }

  @Test
  void averageRollsUpFromTheViewsOwnAverage() {
    sales();
    sql("CREATE MATERIALIZED VIEW day_means AS SELECT city, day, avg(amount) AS mean, avg(day) AS mean_day"
        + " FROM sales GROUP BY city, day");
    sql("INSERT INTO sales VALUES ('kobe', 2, 3.33), ('tokyo', 4, NULL)");
    sql("DELETE FROM sales WHERE city = 'osaka' AND day = 3 AND amount > 40");
    sql("REFRESH MATERIALIZED VIEW day_means");

    Answer answer = assertAnsweredBy("SELECT city, avg(amount) AS mean FROM sales GROUP BY city", "day_means");
    assertThat(answer.report()).contains("rolled up from the view's groups");
    assertAnsweredBy("SELECT avg(amount) AS mean, avg(day) AS mean_day FROM sales", "day_means");
    assertAnsweredBy("SELECT day, avg(amount) AS mean FROM sales WHERE city <> 'kobe' GROUP BY day", "day_means");
  }

  /** Sales whose group sizes of 3, 6 and 7 give repeating quotients, so the last digit of AVG's scale is rounded. */
  private void sales() {
    sql("CREATE TABLE sales (city STRING, day INT, amount DECIMAL(10, 2)) USING iceberg");
    StringBuilder values = new StringBuilder();
    int[][] groups = {{1, 3}, {2, 6}, {3, 7}, {4, 1}};
    for (String city : new String[] {"tokyo", "osaka"}) {
      for (int[] group : groups) {
        for (int i = 0; i < group[1]; i++) {
          values.append(values.length() == 0 ? "" : ", ")
              .append(String.format(java.util.Locale.ROOT, "('%s', %d, %d.%02d)", city, group[0], 10 + i * 7, (i * 37 + group[0] * 11) % 100));
        }
      }
    }
    sql("INSERT INTO sales VALUES " + values + ", ('kobe', 1, NULL)");
  }

  @Test
  void countDistinctOfAGroupingColumnRollsUp() {
    sql("CREATE MATERIALIZED VIEW city_driver AS SELECT city, driver, count(*) AS trips FROM trips GROUP BY city, driver");

    assertAnsweredBy("SELECT city, count(DISTINCT driver) AS drivers, count(*) AS trips FROM trips GROUP BY city", "city_driver");
  }

  @Test
  void countDistinctRollsUpFromTheViewsOwnCountDistinct() {
    sql("CREATE MATERIALIZED VIEW city_day_drivers AS SELECT city, day, count(DISTINCT driver) AS drivers, count(*) AS trips"
        + " FROM trips GROUP BY city, day");
    sql("INSERT INTO trips VALUES (9, 'tokyo', 3, 10, 4, NULL), (10, NULL, 1, 15, 6, NULL), (11, 'kobe', 1, NULL, 2, NULL)");
    sql("REFRESH MATERIALIZED VIEW city_day_drivers");

    // Driver 10 drives in tokyo on days 1, 2 and 3: counted once per city, however many days.
    Answer answer =
        assertAnsweredBy("SELECT city, count(DISTINCT driver) AS drivers, count(*) AS trips FROM trips GROUP BY city", "city_day_drivers");
    assertThat(answer.report()).contains("rolled up from the view's groups");
    assertAnsweredBy("SELECT count(DISTINCT driver) AS drivers FROM trips", "city_day_drivers");
    assertAnsweredBy("SELECT day, count(DISTINCT driver) AS drivers FROM trips WHERE city <> 'kobe' GROUP BY day", "city_day_drivers");
    assertAnsweredBy("SELECT count(DISTINCT driver) AS drivers FROM trips WHERE city = 'nowhere'", "city_day_drivers");
  }

  @Test
  void impliedRangeFilterIsAnsweredFromARowView() {
    sql("CREATE MATERIALIZED VIEW paid AS SELECT id, city, fare, tip FROM trips WHERE fare > 0");

    assertAnsweredBy("SELECT city, fare FROM trips WHERE fare > 5", "paid");
    assertAnsweredBy("SELECT city, sum(fare) AS s, avg(tip) AS t FROM trips WHERE fare >= 8 GROUP BY city", "paid");
  }

  @Test
  void joinsMatchWhateverTheirOrderOfConditions() {
    sql("CREATE MATERIALIZED VIEW region_day AS SELECT d.region, t.day, count(*) AS trips, sum(t.fare) AS fares"
        + " FROM trips t JOIN drivers d ON t.driver = d.driver WHERE t.fare > 0 GROUP BY d.region, t.day");

    assertAnsweredBy(
        "SELECT region, sum(fare) AS fares, count(*) AS trips FROM drivers JOIN trips ON drivers.driver = trips.driver"
            + " WHERE fare > 0 AND region <> 'north' GROUP BY region",
        "region_day");
    assertNotAnswered("SELECT region, sum(fare) FROM trips t JOIN drivers d ON t.driver = d.driver GROUP BY region");
  }

  @Test
  void predicateNotImpliedIsRejectedWithTheReason() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    Answer answer = assertNotAnswered("SELECT city, sum(fare) FROM trips WHERE fare >= 0 GROUP BY city");

    // Columns are shown by their names, not by the table identities matching uses.
    assertThat(answer.report())
        .contains("not answered from " + q("city_day"))
        .contains("do not imply the view's filter (fare > CAST(0 AS BIGINT))")
        .doesNotContain("`");
  }

  @Test
  void filterOnANonGroupingColumnIsRejected() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    Answer answer = assertNotAnswered("SELECT city, sum(fare) FROM trips WHERE fare > 0 AND driver = 10 GROUP BY city");

    assertThat(answer.report()).contains("needs a column the view does not keep");
  }

  @Test
  void groupingFinerThanTheViewIsRejected() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    Answer answer = assertNotAnswered("SELECT city, driver, count(*) FROM trips WHERE fare > 0 GROUP BY city, driver");

    assertThat(answer.report()).contains("the query groups by driver, which is not a grouping column of the view (finer groups)");
  }

  @Test
  void nonRollableAggregatesAreRejected() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    assertThat(assertNotAnswered("SELECT city, count(DISTINCT driver) FROM trips WHERE fare > 0 GROUP BY city").report())
        .contains("needs its argument to be a grouping column");
    assertThat(assertNotAnswered("SELECT city, stddev(fare) FROM trips WHERE fare > 0 GROUP BY city").report())
        .contains("cannot be rolled up");
    assertThat(assertNotAnswered("SELECT city, sum(tip * 2) FROM trips WHERE fare > 0 GROUP BY city").report())
        .contains("is not a column of the view");
  }

  @Test
  void aViewOfOneAggregateRowIsNotFilteredForAQueryThatFiltersItsInput() {
    sql("CREATE MATERIALIZED VIEW totals AS SELECT count(*) AS trips, sum(fare) AS fares FROM trips");

    assertAnsweredBy("SELECT count(*) AS trips, sum(fare) AS fares FROM trips", "totals");
    // WHERE false keeps one row of a global aggregate (0 trips); filtering the view's row drops it.
    Answer none = assertNotAnswered("SELECT count(*) AS trips, sum(fare) AS fares FROM trips WHERE 1 = 0");
    assertThat(none.rows()).containsExactly("0|null");
    assertThat(none.report()).contains("applies before aggregating");
    // A correlated subquery's filter on the outer row is such a filter too.
    Answer correlated =
        assertNotAnswered("SELECT id, (SELECT count(*) FROM trips WHERE o.id > 7) AS c FROM trips o WHERE id >= 7");
    assertThat(correlated.rows()).containsExactly("7|0", "8|8");
  }

  @Test
  void aViewWhoseExpectationsDropRowsAnswersNoQueryOverItsSources() {
    sql("CREATE MATERIALIZED VIEW tipped (CONSTRAINT has_tip EXPECT (tip IS NOT NULL) ON VIOLATION DROP ROW)"
        + " AS SELECT id, city, tip FROM trips");

    Answer answer = assertNotAnswered("SELECT id, city, tip FROM trips WHERE id > 0 AND tip IS NULL");

    assertThat(answer.rows()).hasSize(4);
    assertThat(answer.report()).contains("its expectations has_tip drop rows (ON VIOLATION DROP ROW)");
    // An expectation that only counts keeps every row: that view may answer.
    sql("CREATE MATERIALIZED VIEW counted (CONSTRAINT has_tip EXPECT (tip IS NOT NULL)) AS SELECT id, city, tip FROM trips");
    assertAnsweredBy("SELECT id, city, tip FROM trips WHERE id > 0 AND tip IS NULL", "counted");

    // Replaced with the same query and a dropping expectation: recomputed without the rejected
    // rows, and no longer used, though the view may keep its version id.
    sql("CREATE OR REPLACE MATERIALIZED VIEW counted (CONSTRAINT has_tip EXPECT (tip IS NOT NULL) ON VIOLATION DROP ROW)"
        + " AS SELECT id, city, tip FROM trips");
    assertThat(sql("SELECT * FROM " + q("counted"))).hasSize(4);
    assertNotAnswered("SELECT id, city, tip FROM trips WHERE id > 0 AND tip IS NULL");
  }

  @Test
  void aViewWithACollatedColumnAnswersNoQuery() {
    String query = "SELECT id, city COLLATE UTF8_LCASE AS c FROM trips";
    sql("CREATE MATERIALIZED VIEW city_names AS " + query);

    Answer answer = assertNotAnswered(query + " WHERE city COLLATE UTF8_LCASE = 'TOKYO'");

    assertThat(answer.rows()).hasSize(4);
    assertThat(answer.report()).contains("its column c carries a collation, which its storage table does not keep");
  }

  @Test
  void aViewAnswersOnlySessionsWithTheSettingsItWasCreatedUnder() {
    String timeZone = "spark.sql.session.timeZone";
    spark.conf().set(timeZone, "UTC");
    try {
      sql("CREATE TABLE stamps (id INT, ts TIMESTAMP) USING iceberg");
      sql("INSERT INTO stamps VALUES (1, TIMESTAMP '2024-01-02 02:00:00'), (2, TIMESTAMP '2024-01-02 10:00:00')");
      sql("CREATE MATERIALIZED VIEW by_hour AS SELECT hour(ts) AS h, count(*) AS n FROM stamps GROUP BY hour(ts)");
      String query = "SELECT hour(ts) AS h, count(*) AS n FROM stamps GROUP BY hour(ts)";
      assertAnsweredBy(query, "by_hour");

      spark.conf().set(timeZone, "America/Los_Angeles");
      Answer answer = assertNotAnswered(query);

      assertThat(answer.rows()).containsExactly("18|1", "2|1");
      assertThat(answer.report()).contains("it was created under other SQL settings: spark.sql.session.timeZone=UTC"
          + " (here: America/Los_Angeles)");
    } finally {
      spark.conf().unset(timeZone);
    }
  }

  @Test
  void aCaseSensitiveSessionTellsColumnsThatDifferInCaseApart() {
    spark.conf().set("spark.sql.caseSensitive", "true");
    try {
      sql("CREATE TABLE cased (x INT, X INT, k STRING) USING iceberg");
      sql("INSERT INTO cased VALUES (1, -1, 'p'), (-2, 2, 'q')");
      sql("CREATE MATERIALIZED VIEW lower_x AS SELECT x AS lo, X AS up, k FROM cased WHERE x > 0");
      sql("CREATE MATERIALIZED VIEW sum_x AS SELECT k, sum(x) AS s FROM cased GROUP BY k");

      assertThat(assertNotAnswered("SELECT x AS lo, X AS up, k FROM cased WHERE X > 0").rows()).containsExactly("-2|2|q");
      assertThat(assertNotAnswered("SELECT k, sum(X) AS s FROM cased GROUP BY k").rows()).containsExactly("p|-1", "q|2");
      assertAnsweredBy("SELECT k, sum(x) AS s FROM cased GROUP BY k", "sum_x");
    } finally {
      spark.conf().unset("spark.sql.caseSensitive");
    }
  }

  @Test
  void aTableReadWithOptionsIsNotAnsweredFromAView() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    long first = currentSnapshot("trips");
    sql("INSERT INTO trips VALUES (9, 'kobe', 1, 13, 40, 1.0)");
    sql("REFRESH MATERIALIZED VIEW city_day");

    assertAnsweredBy("SELECT city, day, sum(fare) AS fares FROM trips WHERE fare > 0 GROUP BY city, day", "city_day");
    assertNotAnswered(
        "SELECT city, day, sum(fare) AS fares FROM trips WITH ('split-size' = '1048576') WHERE fare > 0 GROUP BY city, day");
    // An option the table refuses is refused as it is without rewrite, not answered with current rows.
    String travel = "SELECT city, day, sum(fare) AS fares FROM trips WITH ('snapshot-id' = '" + first + "')"
        + " WHERE fare > 0 GROUP BY city, day";
    assertThatThrownBy(() -> withRewrite(travel)).hasMessageContaining("snapshot-id");
  }

  @Test
  void viewWithHavingIsNotUsedForOtherQueries() {
    sql("CREATE MATERIALIZED VIEW busy AS SELECT city, count(*) AS trips FROM trips GROUP BY city HAVING count(*) > 2");

    Answer answer = assertNotAnswered("SELECT city, count(*) AS trips FROM trips GROUP BY city");

    assertThat(answer.report()).contains("not answered from " + q("busy")).contains("HAVING");
  }

  @Test
  void queryHavingIsAppliedOnTopOfTheAnswer() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);

    assertAnsweredBy("SELECT city, sum(fare) AS s FROM trips WHERE fare > 0 GROUP BY city HAVING sum(fare) > 20", "city_day");
  }

  @Test
  void staleViewIsNeverUsedUnlessWithinTheTolerance() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    sql("INSERT INTO trips VALUES (9, 'nara', 1, 10, 40, NULL)");

    Answer stale = assertNotAnswered(CITY_DAY);
    assertThat(stale.report()).contains("stale for the snapshots the query reads");

    spark.conf().set(RewriteSettings.STALENESS_TOLERANCE, "1h");
    Answer tolerated = withRewrite(CITY_DAY);
    assertThat(tolerated.used()).as(tolerated.report()).containsExactly(q("city_day"));
    assertThat(tolerated.report()).contains("within the staleness tolerance");
    assertThat(tolerated.rows()).doesNotContain(withoutRewrite(CITY_DAY).stream().filter(r -> r.startsWith("nara")).findFirst().orElseThrow());

    spark.conf().unset(RewriteSettings.STALENESS_TOLERANCE);
    sql("REFRESH MATERIALIZED VIEW city_day");
    assertAnsweredBy(CITY_DAY, "city_day");

    // A tolerance that is no duration is refused where it is set, not by every later query.
    assertThatThrownBy(() -> sql("SET floe.rewrite.staleness-tolerance = 10 min"))
        .hasMessageContaining("Invalid floe.rewrite.staleness-tolerance '10 min': give a duration such as 30s, 10min or 2h");
    assertThat(spark.conf().contains(RewriteSettings.STALENESS_TOLERANCE)).isFalse();
    sql("SET floe.rewrite.staleness-tolerance = 10min");
    assertThat(spark.conf().get(RewriteSettings.STALENESS_TOLERANCE)).isEqualTo("10min");
    spark.conf().unset(RewriteSettings.STALENESS_TOLERANCE);
  }

  @Test
  void compactionOfASourceChangesNoRowSoTheViewStillAnswers() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    sql("INSERT INTO trips VALUES (9, 'nara', 1, 10, 40, NULL)");
    sql("REFRESH MATERIALIZED VIEW city_day");
    long refreshed = currentSnapshot("trips");
    sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".trips', options => map('rewrite-all','true'))");
    assertThat(currentSnapshot("trips")).isNotEqualTo(refreshed);

    assertAnsweredBy(CITY_DAY, "city_day");
    assertAnsweredBy(CITY_DAY.replace("FROM trips", "FROM trips VERSION AS OF " + refreshed), "city_day");

    // A compaction after a change still leaves the view stale.
    sql("INSERT INTO trips VALUES (10, 'nara', 2, 10, 41, NULL)");
    sql("CALL lake.system.rewrite_data_files(table => '" + ns + ".trips', options => map('rewrite-all','true'))");
    assertThat(assertNotAnswered(CITY_DAY).report()).contains("stale for the snapshots the query reads");
  }

  @Test
  void timeTravelIsAnsweredFromTheRefreshOfThatSnapshot() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    long before = currentSnapshot("trips");
    sql("INSERT INTO trips VALUES (9, 'nara', 1, 10, 40, NULL)");
    sql("REFRESH MATERIALIZED VIEW city_day");
    long after = currentSnapshot("trips");
    sql("INSERT INTO trips VALUES (10, 'nara', 2, 10, 41, NULL)");

    String old = CITY_DAY.replace("FROM trips", "FROM trips VERSION AS OF " + before);
    Answer answer = assertAnsweredBy(old, "city_day");
    assertThat(answer.report()).contains("fresh at an earlier refresh");
    assertAnsweredBy(CITY_DAY.replace("FROM trips", "FROM trips VERSION AS OF " + after), "city_day");
    assertNotAnswered(CITY_DAY);
  }

  @Test
  void queryOverAViewIsAnsweredFromAViewOverIt() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT id, upper(city) AS city, day, fare FROM trips WHERE fare > 0");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT city, day, count(*) AS trips, sum(fare) AS fares FROM silver GROUP BY city, day");

    assertAnsweredBy("SELECT city, sum(fare) AS fares FROM silver GROUP BY city", "gold");
    assertAnsweredBy("SELECT upper(city) AS c, day, count(*) FROM trips WHERE fare > 3 GROUP BY upper(city), day", "silver");
  }

  @Test
  void cheapestOfSeveralViewsAnswers() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    sql("CREATE MATERIALIZED VIEW city_only AS SELECT city, count(*) AS trips, sum(fare) AS fares FROM trips WHERE fare > 0 GROUP BY city");

    Answer answer = assertAnsweredBy("SELECT city, sum(fare) FROM trips WHERE fare > 0 GROUP BY city", "city_only");

    assertThat(answer.report()).contains("not answered from " + q("city_day") + ": reads more than " + q("city_only"));
  }

  @Test
  void refreshAndCreateNeverReadAViewInsteadOfTheirSources() {
    sql("CREATE MATERIALIZED VIEW first AS " + CITY_DAY);
    spark.conf().set(RewriteSettings.ENABLED, "true");
    spark.conf().set(RewriteSettings.STALENESS_TOLERANCE, "1h");
    try {
      sql("INSERT INTO trips VALUES (9, 'nara', 1, 10, 40, NULL)");
      sql("CREATE MATERIALIZED VIEW second AS " + CITY_DAY);
      sql("CREATE OR REPLACE MATERIALIZED VIEW first AS " + CITY_DAY);
      sql("INSERT INTO trips VALUES (10, 'nara', 2, 10, 41, NULL)");
      sql("REFRESH MATERIALIZED VIEW second");
    } finally {
      spark.conf().set(RewriteSettings.ENABLED, "false");
    }

    assertThat(withoutRewrite("SELECT * FROM second")).isEqualTo(withoutRewrite(CITY_DAY));
    assertThat(withoutRewrite("SELECT * FROM first")).isEqualTo(withoutRewrite(CITY_DAY.replace("fare > 0", "fare > 0 AND id < 10")));
  }

  @Test
  void explainShowsTheStorageTableScan() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    spark.conf().set(RewriteSettings.ENABLED, "true");
    try {
      String plain = spark.sql("EXPLAIN " + CITY_DAY).first().getString(0);
      String extended = spark.sql("EXPLAIN EXTENDED " + CITY_DAY).first().getString(0);

      assertThat(plain).contains("city_day__storage").doesNotContain(ns + ".trips");
      assertThat(extended).contains("== Optimized Logical Plan ==").contains("city_day__storage");
    } finally {
      spark.conf().set(RewriteSettings.ENABLED, "false");
    }
    assertThat(spark.sql("EXPLAIN " + CITY_DAY).first().getString(0)).doesNotContain("city_day__storage");
  }

  @Test
  void rewriteIsOffByDefault() {
    sql("CREATE MATERIALIZED VIEW city_day AS " + CITY_DAY);
    spark.conf().unset(RewriteSettings.ENABLED);

    assertThat(spark.sql("EXPLAIN " + CITY_DAY).first().getString(0)).doesNotContain("city_day__storage");
  }
}
