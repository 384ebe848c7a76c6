package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.RefreshPolicy;
import io.floe.schedule.Schedule;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Statements other than CREATE, and the boundary between Floe's statements and the engine's. */
class FloeStatementRecognitionTest {

    private static FloeStatement parse(String sql) {
        Optional<FloeStatement> statement = FloeStatementParser.parse(sql);
        assertThat(statement).as("parse(%s)", sql).isPresent();
        return statement.get();
    }

    private static FloeParseException failure(String sql) {
        return CreateMaterializedViewParsingTest.failure(sql);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT * FROM t",
        "select 1;",
        "INSERT INTO t VALUES (1)",
        "CREATE TABLE t (id INT) USING iceberg",
        "CREATE VIEW v AS SELECT 1",
        "CREATE OR REPLACE VIEW v AS SELECT 1",
        "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1",
        "CREATE MANAGED TABLE t (id INT)",
        "DESCRIBE t col",
        "DESCRIBE TABLE t PARTITION (p = 1)",
        "DESCRIBE QUERY SELECT 1",
        "DESCRIBE SELECT * FROM t",
        "DESC FUNCTION upper",
        "DESCRIBE DATABASE db",
        "DESCRIBE SCHEMA EXTENDED db",
        "DESCRIBE NAMESPACE db",
        "DESCRIBE CATALOG lake",
        "DESCRIBE EXTENDED t AS JSON",
        "DESCRIBE t 'unterminated",
        "EXPLAIN SELECT 1",
        "EXPLAIN EXTENDED SELECT 1",
        "EXPLAIN REFRESH TABLE t",
        "DROP VIEW v",
        "DROP NAMESPACE db",
        "DROP DATABASE IF EXISTS db CASCADE",
        "SHOW TABLES",
        "SHOW VIEWS IN db",
        "SHOW CREATE TABLE t",
        "REFRESH TABLE t",
        "ALTER TABLE t SET TBLPROPERTIES ('a' = 'b')",
        "ALTER VIEW v AS SELECT 1",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "(SELECT 1)",
        "",
        "   ",
        ";",
        "-- only a comment",
        "/* only a comment */",
        "SELECT 'unterminated",
        "/* unterminated comment"
    })
    void statementsThatAreNotFloesAreLeftToTheEngine(String sql) {
        assertThat(FloeStatementParser.parse(sql)).isEmpty();
    }

    @Test
    void refreshFull() {
        assertThat(parse("REFRESH MATERIALIZED VIEW glue_catalog.iceberg_mv.orders_summary_mv FULL"))
                .isEqualTo(new RefreshMaterializedView(
                        QualifiedName.of("glue_catalog", "iceberg_mv", "orders_summary_mv"), true, false));
    }

    @Test
    void refreshOptionsInEitherOrder() {
        RefreshMaterializedView expected = new RefreshMaterializedView(QualifiedName.of("v"), true, true);
        assertThat(parse("REFRESH MATERIALIZED VIEW v FULL CASCADE")).isEqualTo(expected);
        assertThat(parse("refresh materialized view v cascade full;")).isEqualTo(expected);
        assertThat(parse("REFRESH MATERIALIZED VIEW v"))
                .isEqualTo(new RefreshMaterializedView(QualifiedName.of("v"), false, false));
        assertThat(parse("REFRESH MATERIALIZED VIEW v CASCADE"))
                .isEqualTo(new RefreshMaterializedView(QualifiedName.of("v"), false, true));
    }

    @Test
    void refreshRejectsUnknownAndRepeatedOptions() {
        assertThat(failure("REFRESH MATERIALIZED VIEW v INCREMENTAL")).hasMessage(
                "Syntax error at 1:29 in REFRESH MATERIALIZED VIEW: "
                        + "expected FULL, CASCADE or end of statement but found 'INCREMENTAL'");
        assertThat(failure("REFRESH MATERIALIZED VIEW v FULL FULL"))
                .hasMessageContaining("1:34").hasMessageContaining("FULL is given twice");
        assertThat(failure("REFRESH MATERIALIZED VIEW"))
                .hasMessageContaining("expected a materialized view name after REFRESH MATERIALIZED VIEW but found "
                        + "end of statement");
    }

    @Test
    void dropMaterializedView() {
        assertThat(parse("DROP MATERIALIZED VIEW IF EXISTS db.v CASCADE"))
                .isEqualTo(new DropMaterializedView(QualifiedName.of("db", "v"), true, true));
        assertThat(parse("drop materialized view v"))
                .isEqualTo(new DropMaterializedView(QualifiedName.of("v"), false, false));
        assertThat(failure("DROP MATERIALIZED VIEW v PURGE"))
                .hasMessageContaining("expected CASCADE or end of statement but found 'PURGE'");
    }

    @Test
    void dropTableWithOptionsInAnyOrder() {
        assertThat(parse("DROP TABLE IF EXISTS lake.db.t PURGE CASCADE"))
                .isEqualTo(new DropTable(QualifiedName.of("lake", "db", "t"), true, true, true));
        assertThat(parse("DROP TABLE t CASCADE PURGE"))
                .isEqualTo(new DropTable(QualifiedName.of("t"), false, true, true));
        assertThat(parse("DROP TABLE t"))
                .isEqualTo(new DropTable(QualifiedName.of("t"), false, false, false));
        assertThat(failure("DROP TABLE t RESTRICT"))
                .hasMessage("Syntax error at 1:14 in DROP TABLE: "
                        + "expected PURGE, CASCADE or end of statement but found 'RESTRICT'");
    }

    @Test
    void alterAddsOrReplacesSchedule() {
        assertThat(parse("ALTER MATERIALIZED VIEW v ADD SCHEDULE REFRESH EVERY 2 HOURS"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"),
                        new AlterAction.SetSchedule(Schedule.every(2, ChronoUnit.HOURS))));
        assertThat(parse("ALTER MATERIALIZED VIEW v ALTER SCHEDULE REFRESH ON CHANGE"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"),
                        new AlterAction.SetSchedule(Schedule.onChange())));
        assertThat(parse("alter materialized view v add schedule every 1 day"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"),
                        new AlterAction.SetSchedule(Schedule.every(1, ChronoUnit.DAYS))));
    }

    @Test
    void alterScheduleErrorsNameTheProblem() {
        assertThat(failure("ALTER MATERIALIZED VIEW v ADD SCHEDULE REFRESH EVERY 1 FORTNIGHT"))
                .hasMessage("Syntax error at 1:56 in ALTER MATERIALIZED VIEW: invalid schedule 'EVERY 1 FORTNIGHT':"
                        + " expected a time unit MINUTE(S), HOUR(S) or DAY(S) but found 'FORTNIGHT'");
        assertThat(failure("ALTER MATERIALIZED VIEW v ADD REFRESH EVERY 1 DAY"))
                .hasMessageContaining("expected SCHEDULE after ADD but found 'REFRESH'");
    }

    @Test
    void alterDropsSchedule() {
        assertThat(parse("ALTER MATERIALIZED VIEW v DROP SCHEDULE"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"), new AlterAction.DropSchedule()));
    }

    @Test
    void alterSetsRefreshPolicyWithOrWithoutSet() {
        AlterMaterializedView expected = new AlterMaterializedView(QualifiedName.of("v"),
                new AlterAction.SetRefreshPolicy(RefreshPolicy.AUTO));
        assertThat(parse("ALTER MATERIALIZED VIEW v SET REFRESH POLICY AUTO")).isEqualTo(expected);
        assertThat(parse("ALTER MATERIALIZED VIEW v REFRESH POLICY auto")).isEqualTo(expected);
    }

    @Test
    void alterSetsAndUnsetsProperties() {
        assertThat(parse("ALTER MATERIALIZED VIEW v SET TBLPROPERTIES ('a' = '1', b.c = '2')"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"),
                        new AlterAction.SetProperties(Map.of("a", "1", "b.c", "2"))));
        assertThat(parse("ALTER MATERIALIZED VIEW v UNSET TBLPROPERTIES IF EXISTS ('a', b.c)"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"),
                        new AlterAction.UnsetProperties(List.of("a", "b.c"), true)));
        assertThat(parse("ALTER MATERIALIZED VIEW v UNSET TBLPROPERTIES ('a')"))
                .isEqualTo(new AlterMaterializedView(QualifiedName.of("v"),
                        new AlterAction.UnsetProperties(List.of("a"), false)));
    }

    @Test
    void alterWithoutKnownActionListsTheActions() {
        assertThat(failure("ALTER MATERIALIZED VIEW v RENAME TO w"))
                .hasMessageContaining("expected ADD SCHEDULE, ALTER SCHEDULE, DROP SCHEDULE, SET REFRESH POLICY, "
                        + "SET TBLPROPERTIES or UNSET TBLPROPERTIES after the view name but found 'RENAME'");
    }

    @Test
    void showMaterializedViews() {
        assertThat(parse("SHOW MATERIALIZED VIEWS"))
                .isEqualTo(new ShowMaterializedViews(Optional.empty(), Optional.empty()));
        assertThat(parse("SHOW MATERIALIZED VIEWS IN lake.db LIKE 'mv_*'"))
                .isEqualTo(new ShowMaterializedViews(Optional.of(QualifiedName.of("lake", "db")), Optional.of("mv_*")));
        assertThat(parse("show materialized views from db 'x|y'"))
                .isEqualTo(new ShowMaterializedViews(Optional.of(QualifiedName.of("db")), Optional.of("x|y")));
        assertThat(parse("SHOW MATERIALIZED VIEWS LIKE 'a*'"))
                .isEqualTo(new ShowMaterializedViews(Optional.empty(), Optional.of("a*")));
        assertThat(failure("SHOW MATERIALIZED VIEWS LIKE mv"))
                .hasMessageContaining("expected a quoted pattern after LIKE but found 'mv'");
    }

    @Test
    void describeRelation() {
        assertThat(parse("DESCRIBE lake.db.t")).isEqualTo(new DescribeRelation(QualifiedName.of("lake", "db", "t"), false));
        assertThat(parse("DESC TABLE t;")).isEqualTo(new DescribeRelation(QualifiedName.of("t"), false));
        assertThat(parse("DESCRIBE EXTENDED t")).isEqualTo(new DescribeRelation(QualifiedName.of("t"), true));
        assertThat(parse("describe table formatted `a.b`"))
                .isEqualTo(new DescribeRelation(QualifiedName.of("a.b"), true));
        assertThat(parse("DESCRIBE extended")).isEqualTo(new DescribeRelation(QualifiedName.of("extended"), false));
    }

    @Test
    void showTableProperties() {
        assertThat(parse("SHOW TBLPROPERTIES db.v"))
                .isEqualTo(new ShowTableProperties(QualifiedName.of("db", "v"), Optional.empty()));
        assertThat(parse("SHOW TBLPROPERTIES v ('floe.schedule')"))
                .isEqualTo(new ShowTableProperties(QualifiedName.of("v"), Optional.of("floe.schedule")));
        assertThat(parse("SHOW TBLPROPERTIES v (floe.schedule)"))
                .isEqualTo(new ShowTableProperties(QualifiedName.of("v"), Optional.of("floe.schedule")));
        assertThat(failure("SHOW TBLPROPERTIES v ('a'"))
                .hasMessageContaining("expected ')' after the property key but found end of statement");
    }

    @Test
    void explainRefresh() {
        assertThat(parse("EXPLAIN REFRESH MATERIALIZED VIEW db.v"))
                .isEqualTo(new ExplainRefresh(QualifiedName.of("db", "v")));
        assertThat(failure("EXPLAIN REFRESH MATERIALIZED VIEW db.v FULL"))
                .hasMessage("Syntax error at 1:40 in EXPLAIN REFRESH: expected end of statement but found 'FULL'");
    }

    @Test
    void showRefreshes() {
        assertThat(parse("SHOW REFRESHES"))
                .isEqualTo(new ShowRefreshes(Optional.empty(), OptionalInt.empty()));
        assertThat(parse("SHOW REFRESHES FOR db.v LIMIT 10"))
                .isEqualTo(new ShowRefreshes(Optional.of(QualifiedName.of("db", "v")), OptionalInt.of(10)));
        assertThat(parse("show refreshes limit 5"))
                .isEqualTo(new ShowRefreshes(Optional.empty(), OptionalInt.of(5)));
        assertThat(failure("SHOW REFRESHES LIMIT ten"))
                .hasMessageContaining("expected a whole number after LIMIT but found 'ten'");
        assertThat(failure("SHOW REFRESHES LIMIT 99999999999"))
                .hasMessageContaining("LIMIT must be at most 2147483647");
    }

    @Test
    void lexerErrorInsideAFloeStatementIsReported() {
        assertThat(failure("DROP TABLE `unterminated"))
                .hasMessage("Syntax error at 1:12 in DROP TABLE: unterminated `quoted identifier`");
    }

    @Test
    void emptyBacktickIdentifierIsRejected() {
        assertThat(failure("DROP TABLE db.``"))
                .hasMessageContaining("expected a name part after '.' but found an empty quoted identifier");
    }
}
