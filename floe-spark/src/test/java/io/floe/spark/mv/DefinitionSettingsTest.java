package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A definition keeps the SQL settings it was created under, whatever session refreshes it. */
class DefinitionSettingsTest extends MvTestSupport {
  private static final String TIME_ZONE = "spark.sql.session.timeZone";
  private static final String ANSI = "spark.sql.ansi.enabled";

  @Override
  protected String prefix() {
    return "settings";
  }

  @AfterEach
  void sessionDefaults() {
    spark.conf().unset(TIME_ZONE);
    spark.conf().unset(ANSI);
  }

  @Test
  void aRefreshInAnotherTimeZoneComputesTheNewRowsInTheViewsOwn() {
    spark.conf().set(TIME_ZONE, "UTC");
    sql("CREATE TABLE events (id INT, ts TIMESTAMP) USING iceberg");
    sql("INSERT INTO events VALUES (1, TIMESTAMP '2024-01-02 02:00:00')");
    sql("CREATE MATERIALIZED VIEW hours AS SELECT id, hour(ts) AS h, date(ts) AS d FROM events");
    assertThat(view("hours").properties()).containsEntry(DefinitionSettings.PREFIX + TIME_ZONE, "UTC");
    assertThat(sql("DESCRIBE EXTENDED hours")).filteredOn(r -> r.getString(0).equals("SQL Settings")).singleElement()
        .satisfies(r -> assertThat(r.getString(1)).contains("spark.sql.session.timeZone=UTC").contains("spark.sql.ansi.enabled=true"));

    spark.conf().set(TIME_ZONE, "America/Los_Angeles");
    // 10:00 in Los Angeles is 18:00 UTC.
    sql("INSERT INTO events VALUES (2, TIMESTAMP '2024-01-02 10:00:00')");
    Row refreshed = sql("REFRESH MATERIALIZED VIEW hours").get(0);

    assertThat(refreshed.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(spark.conf().get(TIME_ZONE)).as("the session keeps its own time zone").isEqualTo("America/Los_Angeles");
    assertThat(sql("SELECT id, h, CAST(d AS STRING) FROM hours ORDER BY id"))
        .extracting(Row::toString)
        .containsExactly("[1,2,2024-01-02]", "[2,18,2024-01-02]");
    assertThat(explained("hours")).anySatisfy(line -> assertThat(line)
        .contains("refreshes under the settings it was created with: spark.sql.session.timeZone=UTC (here: America/Los_Angeles)"));

    sql("REFRESH MATERIALIZED VIEW hours FULL");
    assertThat(sql("SELECT h FROM hours ORDER BY id")).extracting(r -> r.getInt(0)).containsExactly(2, 18);
  }

  @Test
  void aRefreshUnderAnotherAnsiModeCastsAsTheDefinitionWasCreatedTo() {
    spark.conf().set(ANSI, "false");
    sql("CREATE TABLE codes (v STRING) USING iceberg");
    sql("INSERT INTO codes VALUES ('7'), ('x')");
    sql("CREATE MATERIALIZED VIEW parsed AS SELECT v, CAST(v AS INT) AS n FROM codes");

    spark.conf().set(ANSI, "true");
    sql("INSERT INTO codes VALUES ('y')");
    sql("REFRESH MATERIALIZED VIEW parsed");

    assertThat(sql("SELECT v, n FROM parsed ORDER BY v")).extracting(Row::toString)
        .containsExactly("[7,7]", "[x,null]", "[y,null]");
  }

  @Test
  void aSettingTheRefreshingSessionSetAndTheCreatingOneDidNotIsUnsetForTheRefresh() {
    sql("CREATE TABLE words (w STRING) USING iceberg");
    sql("INSERT INTO words VALUES ('a')");
    sql("CREATE MATERIALIZED VIEW lengths AS SELECT w, length(w) AS n FROM words");

    spark.conf().set("spark.sql.caseSensitive", "true");
    try {
      assertThat(explained("lengths")).anySatisfy(line -> assertThat(line)
          .contains("refreshes under the settings it was created with: spark.sql.caseSensitive=unset (here: true)"));
      sql("INSERT INTO words VALUES ('bb')");
      assertThat(sql("REFRESH MATERIALIZED VIEW lengths").get(0).getString(1)).isEqualTo("INCREMENTAL");
      assertThat(sql("SELECT n FROM lengths ORDER BY n")).extracting(r -> r.getInt(0)).containsExactly(1, 2);
    } finally {
      spark.conf().unset("spark.sql.caseSensitive");
    }
  }

  @Test
  void theRecordedSettingsCannotBeChangedByHand() {
    sql("CREATE TABLE t (a INT) USING iceberg");
    sql("CREATE MATERIALIZED VIEW v AS SELECT a FROM t");

    assertThat(errorOf("ALTER MATERIALIZED VIEW v SET TBLPROPERTIES ('" + DefinitionSettings.PREFIX + TIME_ZONE + "' = 'UTC')"))
        .contains("Cannot change property '" + DefinitionSettings.PREFIX + TIME_ZONE + "'")
        .contains("Floe maintains it");
  }

  private List<String> explained(String mv) {
    return sql("EXPLAIN REFRESH MATERIALIZED VIEW " + mv).stream().map(r -> r.getString(0) + ": " + r.getString(1)).toList();
  }
}
