package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Values of the columns an incremental refresh bounds or narrows its reads by, which Floe collects
 * on the driver and writes back into a filter: they must come back exactly, or the refresh misses
 * the rows it should change. Times in the hour a clock falls back, the days of October 1582 the
 * hybrid Julian calendar lacks, and BINARY keys, which have no order. And values a stored
 * aggregate cannot hold: a DECIMAL sum that overflowed.
 */
class KeyValuesTest extends MvTestSupport {
  @Override
  protected String prefix() {
    return "keyvalues";
  }

  @Test
  void aDeleteInTheHourTheClockFallsBackReachesTheView() {
    spark.conf().set("spark.sql.session.timeZone", "America/Los_Angeles");
    try {
      sql("CREATE TABLE rides (ts TIMESTAMP, id INT, v INT) USING iceberg");
      // 08:30 and 09:30 UTC on 2024-11-03 are both 01:30 in Los Angeles: the first PDT, the second PST.
      sql("INSERT INTO rides VALUES (TIMESTAMP'2024-11-03 08:30:00 UTC', 1, 1),"
          + " (TIMESTAMP'2024-11-03 09:30:00 UTC', 2, 2), (TIMESTAMP'2024-01-01 00:00:00', 3, 3)");
      sql("CREATE MATERIALIZED VIEW ride_rows AS SELECT ts, id, v FROM rides");
      sql("CREATE MATERIALIZED VIEW ride_sums AS SELECT ts, SUM(v) AS v FROM rides GROUP BY ts");
      // A second storage file, so that a bound on ts can leave one out.
      sql("INSERT INTO rides VALUES (TIMESTAMP'2025-01-01 00:00:00', 4, 4)");
      refreshIncrementally("ride_rows", "ride_sums");

      sql("DELETE FROM rides WHERE id = 2");
      refreshIncrementally("ride_rows", "ride_sums");
      assertSameRows("SELECT * FROM ride_rows", "SELECT ts, id, v FROM rides", 3);
      assertSameRows("SELECT * FROM ride_sums", "SELECT ts, SUM(v) AS v FROM rides GROUP BY ts", 3);
    } finally {
      spark.conf().unset("spark.sql.session.timeZone");
    }
  }

  @Test
  void datesAndTimesOfTheDaysTheJulianCalendarLacksAreKeysLikeAnyOther() {
    sql("CREATE TABLE old_rows (id INT, dt DATE, ts TIMESTAMP, v INT) USING iceberg");
    sql("INSERT INTO old_rows VALUES (1, DATE'1582-10-10', TIMESTAMP'1582-10-10 12:00:00', 1),"
        + " (2, DATE'1582-10-10', TIMESTAMP'1582-10-10 12:00:00', 2), (3, DATE'1582-10-11', TIMESTAMP'1582-10-11 12:00:00', 3)");
    String windowed = "SELECT id, dt, v, count(*) OVER (PARTITION BY dt) AS c FROM old_rows";
    String byDay = "SELECT dt, MAX(v) AS m FROM old_rows GROUP BY dt";
    String byTime = "SELECT ts, MAX(v) AS m FROM old_rows GROUP BY ts";
    String plain = "SELECT dt, id, v FROM old_rows";
    sql("CREATE MATERIALIZED VIEW old_windowed AS " + windowed);
    sql("CREATE MATERIALIZED VIEW old_by_day AS " + byDay);
    sql("CREATE MATERIALIZED VIEW old_by_time AS " + byTime);
    sql("CREATE MATERIALIZED VIEW old_plain AS " + plain);

    sql("UPDATE old_rows SET v = 0 WHERE id = 2");
    refreshIncrementally("old_windowed", "old_by_day", "old_by_time", "old_plain");
    sql("DELETE FROM old_rows WHERE id = 3");
    refreshIncrementally("old_windowed", "old_by_day", "old_by_time", "old_plain");

    assertSameRows("SELECT * FROM old_windowed", windowed, 2);
    assertSameRows("SELECT * FROM old_by_day", byDay, 1);
    assertSameRows("SELECT * FROM old_by_time", byTime, 1);
    assertSameRows("SELECT * FROM old_plain", plain, 2);
  }

  @Test
  void groupsKeyedByBinaryValuesLoseTheirExtremes() {
    sql("CREATE TABLE blobs (bin BINARY, v INT) USING iceberg");
    sql("INSERT INTO blobs VALUES (X'01', 5), (X'01', 9), (X'02', 1), (X'02', 8)");
    String query = "SELECT bin, MAX(v) AS m FROM blobs GROUP BY bin";
    sql("CREATE MATERIALIZED VIEW blob_max AS " + query);
    sql("DELETE FROM blobs WHERE v IN (9, 8)");
    sql("REFRESH MATERIALIZED VIEW blob_max");
    assertSameRows("SELECT * FROM blob_max", query, 2);
  }

  /**
   * Without ANSI mode a DECIMAL SUM that does not fit its type is NULL. An incremental refresh must
   * not add to that NULL as to 0: the group's sum is unknown until it is recomputed.
   */
  @Test
  void aDecimalSumThatOverflowedIsRecomputedNotTakenAsZero() {
    spark.conf().set("spark.sql.ansi.enabled", "false");
    try {
      String big = "CAST('60000000000000000000000000000000000000' AS DECIMAL(38,0))";
      sql("CREATE TABLE amounts (k INT, d DECIMAL(38,0)) USING iceberg");
      sql("INSERT INTO amounts VALUES (1, " + big + "), (1, " + big + "), (2, 1)");
      String byKey = "SELECT k, SUM(d) AS sd FROM amounts GROUP BY k";
      String total = "SELECT SUM(d) AS sd FROM amounts";
      sql("CREATE MATERIALIZED VIEW sums_by_key AS " + byKey);
      sql("CREATE MATERIALIZED VIEW sum_total AS " + total);
      assertThat(count("SELECT * FROM sums_by_key WHERE sd IS NULL")).as("the overflowed group").isEqualTo(1);

      sql("INSERT INTO amounts VALUES (1, -" + big + ")");
      sql("REFRESH MATERIALIZED VIEW sums_by_key");
      sql("REFRESH MATERIALIZED VIEW sum_total");
      // Spark's own SUM gives NULL or the sum here, by the order it adds in (6e37 + 6e37 overflows
      // first, 6e37 - 6e37 does not); never what adding -6e37 to the NULL as to 0 gives.
      assertThat(count("SELECT * FROM sums_by_key WHERE k = 1 AND (sd IS NULL OR sd = " + big + ")")).isEqualTo(1);
      assertThat(count("SELECT * FROM sums_by_key WHERE k = 2 AND sd = 1")).isEqualTo(1);
      assertThat(count("SELECT * FROM sum_total WHERE sd IS NULL OR sd = " + big + " + 1")).isEqualTo(1);

      sql("DELETE FROM amounts WHERE k = 1 AND d > 0");
      sql("REFRESH MATERIALIZED VIEW sums_by_key");
      sql("REFRESH MATERIALIZED VIEW sum_total");
      assertSameRows("SELECT * FROM sums_by_key", byKey, 2);
      assertSameRows("SELECT * FROM sum_total", total, 1);

      // An AVG keeps a running sum of the same type, which overflows alike.
      sql("CREATE TABLE averaged (k INT, d DECIMAL(38,0)) USING iceberg");
      sql("INSERT INTO averaged VALUES (3, " + big + "), (3, " + big + "), (3, 2), (3, 4)");
      String average = "SELECT k, AVG(d) AS ad FROM averaged GROUP BY k";
      sql("CREATE MATERIALIZED VIEW averages AS " + average);
      assertThat(count("SELECT * FROM averages WHERE ad IS NULL")).as("the overflowed average").isEqualTo(1);
      sql("DELETE FROM averaged WHERE d > 100");
      sql("REFRESH MATERIALIZED VIEW averages");
      assertSameRows("SELECT * FROM averages", average, 1);
      assertThat(count("SELECT * FROM averages WHERE ad = 3")).isEqualTo(1);
    } finally {
      spark.conf().unset("spark.sql.ansi.enabled");
    }
  }

  /**
   * A collated column cannot be matched with its storage column (Iceberg keeps no collation): the
   * view refreshes in full, saying why, and stays right.
   */
  @Test
  void aCollatedColumnIsRefreshedInFull() {
    sql("CREATE TABLE names (s STRING) USING iceberg");
    sql("INSERT INTO names VALUES ('Ann'), ('ann'), ('Bob')");
    String query = "SELECT s COLLATE UTF8_LCASE AS cs, COUNT(*) AS n FROM names GROUP BY 1";
    sql("CREATE MATERIALIZED VIEW name_counts AS " + query);
    sql("INSERT INTO names VALUES ('BOB')");
    org.apache.spark.sql.Row refreshed = sql("REFRESH MATERIALIZED VIEW name_counts").get(0);
    assertThat(refreshed.<String>getAs("refresh_type")).isEqualTo("FULL");
    assertThat(refreshed.<String>getAs("reason")).contains("column cs has the collation UTF8_LCASE");
    // Which spelling stands for a group is Spark's choice: compare the groups in lower case.
    String byGroup = "SELECT lower(cs) COLLATE UTF8_BINARY AS cs, n FROM ";
    assertSameRows(byGroup + "name_counts", byGroup + "(" + query + ")", 2);

    // Values counted with a collation cannot be kept by their bytes ('ANN' and 'Ann' are one value):
    // the groups a change touches are counted again from the sources, with the collation.
    String distinct = "SELECT length(s) AS len, COUNT(DISTINCT collate(s, 'UTF8_LCASE')) AS spellings FROM names GROUP BY 1";
    sql("CREATE MATERIALIZED VIEW spelling_counts AS " + distinct);
    sql("INSERT INTO names VALUES ('ANN'), ('Eve')");
    refreshed = sql("REFRESH MATERIALIZED VIEW spelling_counts").get(0);
    assertThat(refreshed.<String>getAs("refresh_type")).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM spelling_counts", distinct, 1);
    assertThat(sql("SELECT spellings FROM spelling_counts").get(0).getLong(0)).isEqualTo(3);
  }

  /**
   * The storage table keeps a collated column as a plain string; a read of the view casts it back,
   * so a query or a view over it compares with the collation, as the definition does, in a full
   * and in an incremental refresh alike.
   */
  @Test
  void aCollatedColumnKeepsItsCollationWhenRead() {
    sql("CREATE TABLE spellings (id INT, s STRING) USING iceberg");
    sql("INSERT INTO spellings VALUES (1, 'Ann'), (2, 'ann'), (3, 'Bob')");
    sql("CREATE MATERIALIZED VIEW lcase AS SELECT id, s COLLATE UTF8_LCASE AS s FROM spellings");
    assertThat(sql("SELECT typeof(s) FROM lcase LIMIT 1").get(0).getString(0)).isEqualTo("string collate UTF8_LCASE");
    assertThat(describe("lcase")).containsEntry("s", "string collate UTF8_LCASE").containsEntry("id", "int");
    assertSameRows("SELECT id FROM lcase WHERE s = 'ANN'", "SELECT id FROM spellings WHERE id IN (1, 2)", 2);

    String anns = "SELECT id, length(s) AS len FROM lcase WHERE s = 'ann'";
    sql("CREATE MATERIALIZED VIEW anns AS " + anns);
    assertSameRows("SELECT id FROM anns", "SELECT id FROM spellings WHERE id IN (1, 2)", 2);
    sql("INSERT INTO spellings VALUES (4, 'aNN'), (5, 'Eve')");
    sql("DELETE FROM spellings WHERE id = 1");
    sql("REFRESH MATERIALIZED VIEW lcase");
    refreshIncrementally("anns");
    assertSameRows("SELECT id FROM anns", "SELECT id FROM spellings WHERE id IN (2, 4)", 2);
    assertSameRows("SELECT * FROM anns", anns, 2);

    // Replaced by a definition without the collation, the view reads plain strings again.
    sql("CREATE MATERIALIZED VIEW lcase_then_plain AS SELECT s COLLATE UTF8_LCASE AS s FROM spellings");
    sql("CREATE OR REPLACE MATERIALIZED VIEW lcase_then_plain AS SELECT s FROM spellings");
    assertThat(sql("SELECT typeof(s) FROM lcase_then_plain LIMIT 1").get(0).getString(0)).isEqualTo("string");
    assertThat(sql("SELECT * FROM lcase_then_plain WHERE s = 'ANN'")).isEmpty();
  }

  private void refreshIncrementally(String... views) {
    for (String view : views) {
      assertThat(sql("REFRESH MATERIALIZED VIEW " + view).get(0).<String>getAs("refresh_type")).as(view).isEqualTo("INCREMENTAL");
    }
  }
}
