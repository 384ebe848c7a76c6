package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.floe.mv.OnViolation;
import io.floe.mv.RefreshPolicy;
import io.floe.schedule.Schedule;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class CreateMaterializedViewParsingTest {

    static CreateMaterializedView create(String sql) {
        Optional<FloeStatement> parsed = FloeStatementParser.parse(sql);
        assertThat(parsed).isPresent();
        assertThat(parsed.get()).isInstanceOf(CreateMaterializedView.class);
        return (CreateMaterializedView) parsed.get();
    }

    static FloeParseException failure(String sql) {
        Throwable thrown = catchThrowable(() -> FloeStatementParser.parse(sql));
        assertThat(thrown).isInstanceOf(FloeParseException.class);
        return (FloeParseException) thrown;
    }

    @Nested
    class SeedStatements {

        @Test
        void silverLayerViewWithCommentScheduleAndMultiLineQuery() {
            String query = """
                    SELECT
                    trip_id, driver_id, rider_id, city, vehicle_type,
                    CAST(trip_start_time AS TIMESTAMP) as trip_start_timestamp,
                    CASE WHEN distance_miles > 0 THEN total_amount / distance_miles ELSE 0 END as revenue_per_mile
                    FROM lake.urbanride.trips_bronze
                    WHERE trip_id IS NOT NULL AND total_amount >= 0""";
            String sql = """
                    CREATE MATERIALIZED VIEW IF NOT EXISTS lake.urbanride.mv_trips_silver
                    COMMENT 'Silver layer: Cleaned trip data with proper types and derived columns'
                    SCHEDULE REFRESH EVERY 1 DAY
                    AS
                    """ + query + "\n";

            CreateMaterializedView mv = create(sql);

            assertThat(mv.name()).isEqualTo(QualifiedName.of("lake", "urbanride", "mv_trips_silver"));
            assertThat(mv.ifNotExists()).isTrue();
            assertThat(mv.orReplace()).isFalse();
            assertThat(mv.managed()).isFalse();
            assertThat(mv.comment())
                    .contains("Silver layer: Cleaned trip data with proper types and derived columns");
            assertThat(mv.schedule()).contains(Schedule.every(1, ChronoUnit.DAYS));
            assertThat(mv.refreshPolicy()).isEmpty();
            assertThat(mv.columns()).isEmpty();
            assertThat(mv.expectations()).isEmpty();
            assertThat(mv.partitionedBy()).isEmpty();
            assertThat(mv.tableProperties()).isEmpty();
            assertThat(mv.withData()).isTrue();
            assertThat(mv.query()).isEqualTo(query);
            assertThat(mv.originalText()).isEqualTo(sql.strip());
        }

        @Test
        void singleLineViewWithoutClauses() {
            String query = "SELECT region, product_category, COUNT(*) AS order_count "
                    + "FROM glue_catalog.iceberg_mv.orders GROUP BY region, product_category";
            CreateMaterializedView mv = create(
                    "CREATE MATERIALIZED VIEW glue_catalog.iceberg_mv.orders_summary_mv\nAS " + query);

            assertThat(mv.name()).isEqualTo(QualifiedName.of("glue_catalog", "iceberg_mv", "orders_summary_mv"));
            assertThat(mv.schedule()).isEmpty();
            assertThat(mv.comment()).isEmpty();
            assertThat(mv.query()).isEqualTo(query);
        }

        @Test
        void unqualifiedNameWithHourlySchedule() {
            String query = "SELECT customer_name, COUNT(*) as order_count, SUM(amount) as total_amount "
                    + "FROM glue_catalog.sales.orders GROUP BY customer_name";
            CreateMaterializedView mv = create(
                    "CREATE MATERIALIZED VIEW customer_orders SCHEDULE REFRESH EVERY 1 HOUR AS " + query);

            assertThat(mv.name()).isEqualTo(QualifiedName.of("customer_orders"));
            assertThat(mv.name().namespace()).isEmpty();
            assertThat(mv.schedule()).contains(Schedule.every(1, ChronoUnit.HOURS));
            assertThat(mv.query()).isEqualTo(query);
        }

        @Test
        void managedView() {
            String query = "SELECT customer_name, COUNT(*) as order_count FROM glue_catalog.sales.orders "
                    + "GROUP BY customer_name";
            CreateMaterializedView mv = create(
                    "CREATE MANAGED MATERIALIZED VIEW s3t_catalog.analytics.customer_summary AS " + query);

            assertThat(mv.managed()).isTrue();
            assertThat(mv.name()).isEqualTo(QualifiedName.of("s3t_catalog", "analytics", "customer_summary"));
            assertThat(mv.query()).isEqualTo(query);
        }
    }

    @Test
    void everyClauseTogetherIsParsed() {
        CreateMaterializedView mv = create("""
                create or replace managed materialized view db.daily_revenue (
                  day COMMENT 'calendar day',
                  region,
                  revenue comment "sum of \\"amount\\"",
                  CONSTRAINT positive_revenue EXPECT (revenue >= 0) ON VIOLATION DROP ROW,
                  CONSTRAINT known_region EXPECT ( region IN ('eu', 'us') ) ON VIOLATION FAIL UPDATE,
                  CONSTRAINT has_day EXPECT (day IS NOT NULL)
                )
                COMMENT 'Daily revenue'
                PARTITIONED BY (days(day), bucket(16, region), region)
                TBLPROPERTIES ('format-version' = '2', 'write.target-file-size-bytes' = '536870912')
                SCHEDULE REFRESH EVERY 30 MINUTES
                REFRESH POLICY incremental
                AS SELECT day, region, SUM(amount) AS revenue FROM db.sales GROUP BY day, region;
                """);

        assertThat(mv.orReplace()).isTrue();
        assertThat(mv.managed()).isTrue();
        assertThat(mv.columns()).containsExactly(
                new ColumnSpec("day", Optional.of("calendar day")),
                new ColumnSpec("region", Optional.empty()),
                new ColumnSpec("revenue", Optional.of("sum of \"amount\"")));
        assertThat(mv.expectations()).containsExactly(
                new Expectation("positive_revenue", "revenue >= 0", OnViolation.DROP_ROW),
                new Expectation("known_region", "region IN ('eu', 'us')", OnViolation.FAIL_UPDATE),
                new Expectation("has_day", "day IS NOT NULL", OnViolation.KEEP));
        assertThat(mv.comment()).contains("Daily revenue");
        assertThat(mv.partitionedBy()).containsExactly("days(day)", "bucket(16, region)", "region");
        assertThat(mv.tableProperties()).containsExactly(
                Map.entry("format-version", "2"), Map.entry("write.target-file-size-bytes", "536870912"));
        assertThat(mv.schedule()).contains(Schedule.every(30, ChronoUnit.MINUTES));
        assertThat(mv.refreshPolicy()).contains(RefreshPolicy.INCREMENTAL);
        assertThat(mv.query())
                .isEqualTo("SELECT day, region, SUM(amount) AS revenue FROM db.sales GROUP BY day, region");
        assertThat(mv.originalText()).startsWith("create or replace managed").endsWith("GROUP BY day, region");
    }

    @Test
    void clausesMayComeInAnyOrder() {
        CreateMaterializedView inOrder = create("CREATE MATERIALIZED VIEW v COMMENT 'c' PARTITIONED BY (a) "
                + "TBLPROPERTIES ('k'='v') SCHEDULE REFRESH ON CHANGE REFRESH POLICY FULL AS SELECT a FROM t");
        CreateMaterializedView reversed = create("CREATE MATERIALIZED VIEW v REFRESH POLICY FULL "
                + "SCHEDULE REFRESH ON CHANGE TBLPROPERTIES ('k'='v') PARTITIONED BY (a) COMMENT 'c' AS SELECT a FROM t");

        assertThat(reversed.comment()).isEqualTo(inOrder.comment()).contains("c");
        assertThat(reversed.partitionedBy()).isEqualTo(inOrder.partitionedBy()).containsExactly("a");
        assertThat(reversed.tableProperties()).isEqualTo(inOrder.tableProperties()).containsEntry("k", "v");
        assertThat(reversed.schedule()).isEqualTo(inOrder.schedule()).contains(Schedule.onChange());
        assertThat(reversed.refreshPolicy()).isEqualTo(inOrder.refreshPolicy()).contains(RefreshPolicy.FULL);
    }

    @Test
    void keywordsAreCaseInsensitive() {
        CreateMaterializedView mv = create(
                "cReAtE MaTeRiAlIzEd ViEw v sChEdUlE rEfReSh EvErY 2 hOuRs As select 1");

        assertThat(mv.schedule()).contains(Schedule.every(2, ChronoUnit.HOURS));
        assertThat(mv.query()).isEqualTo("select 1");
    }

    @Test
    void scheduleRefreshKeywordIsOptionalAsInDatabricks() {
        assertThat(create("CREATE MATERIALIZED VIEW v SCHEDULE EVERY 3 DAYS AS SELECT 1").schedule())
                .contains(Schedule.every(3, ChronoUnit.DAYS));
    }

    @Test
    void commentsAndLineBreaksInsideTheHeaderAreIgnored() {
        CreateMaterializedView mv = create("""
                -- the daily view
                /* header comment */ CREATE /* inline */ MATERIALIZED
                   VIEW -- trailing comment
                   lake . /* between dots */ db.v
                   SCHEDULE REFRESH EVERY /* amount: */ 5 MINUTES -- five
                AS -- the query follows
                   SELECT 1 /* inside query */ AS one
                -- after the query
                """);

        assertThat(mv.name()).isEqualTo(QualifiedName.of("lake", "db", "v"));
        assertThat(mv.schedule()).contains(Schedule.every(5, ChronoUnit.MINUTES));
        assertThat(mv.query()).isEqualTo("SELECT 1 /* inside query */ AS one");
        assertThat(mv.originalText()).startsWith("CREATE /* inline */").endsWith("AS one");
    }

    @Test
    void backtickedNamePartsMayContainDotsAndBackticks() {
        CreateMaterializedView mv = create(
                "CREATE MATERIALIZED VIEW `my-catalog`.`sales.eu`.`odd``name` AS SELECT 1");

        assertThat(mv.name().parts()).containsExactly("my-catalog", "sales.eu", "odd`name");
        assertThat(mv.name().name()).isEqualTo("odd`name");
        assertThat(mv.name().toString()).isEqualTo("`my-catalog`.`sales.eu`.`odd``name`");
    }

    @Test
    void cteQueryKeepsItsWith() {
        String query = "WITH recent AS (SELECT * FROM t WHERE ts > now() - INTERVAL 1 DAY) SELECT count(*) FROM recent";
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v AS " + query);

        assertThat(mv.query()).isEqualTo(query);
        assertThat(mv.withData()).isTrue();
    }

    @Test
    void withNoDataSuffixIsNotPartOfTheQuery() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WITH NO DATA;");

        assertThat(mv.query()).isEqualTo("SELECT * FROM t");
        assertThat(mv.withData()).isFalse();
        assertThat(mv.originalText()).isEqualTo("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WITH NO DATA");
    }

    @Test
    void withDataSuffixIsNotPartOfTheQuery() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v AS WITH x AS (SELECT 1) SELECT * FROM x with data");

        assertThat(mv.query()).isEqualTo("WITH x AS (SELECT 1) SELECT * FROM x");
        assertThat(mv.withData()).isTrue();
    }

    @Test
    void queryTextKeepsInnerSpacingAndDropsTrailingSemicolonAndWhitespace() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v AS\n\n  SELECT  a,\n\tb  FROM t ;  \n");

        assertThat(mv.query()).isEqualTo("SELECT  a,\n\tb  FROM t");
    }

    @Test
    void semicolonAndKeywordsInsideQueryStringsDoNotEndTheQuery() {
        CreateMaterializedView mv = create(
                "CREATE MATERIALIZED VIEW v AS SELECT 'a;b', \"with no data\", `x;y` FROM t WHERE s = 'WITH DATA'");

        assertThat(mv.query()).isEqualTo("SELECT 'a;b', \"with no data\", `x;y` FROM t WHERE s = 'WITH DATA'");
        assertThat(mv.withData()).isTrue();
    }

    @Test
    void tablePropertiesAcceptDottedUnquotedKeysNumbersAndBooleans() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v TBLPROPERTIES "
                + "(write.format.default = 'parquet', 'a\\'b' = 'it\\'s', commit.manifest.min_count_to_merge = 4, x = TRUE) AS SELECT 1");

        assertThat(mv.tableProperties()).containsExactly(
                Map.entry("write.format.default", "parquet"),
                Map.entry("a'b", "it's"),
                Map.entry("commit.manifest.min_count_to_merge", "4"),
                Map.entry("x", "true"));
    }

    @Test
    void partitionItemsKeepTheirExactText() {
        CreateMaterializedView mv = create(
                "CREATE MATERIALIZED VIEW v PARTITIONED BY ( truncate(10,  name) , hours(ts),region ) AS SELECT 1");

        assertThat(mv.partitionedBy()).containsExactly("truncate(10,  name)", "hours(ts)", "region");
    }

    @Test
    void expectationTextKeepsNestedParenthesesAndStrings() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v (CONSTRAINT c EXPECT "
                + "((a > 0) AND (b IN (')', '(')) )) AS SELECT 1");

        assertThat(mv.expectations()).containsExactly(
                new Expectation("c", "(a > 0) AND (b IN (')', '('))", OnViolation.KEEP));
    }

    @Test
    void trailingLineCommentsAreCutSoTheTextsCanBeEmbedded() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v (CONSTRAINT c EXPECT (a > 0 -- positive\n))"
                + " AS SELECT a FROM t -- the source\n");

        assertThat(mv.expectations().get(0).expression()).isEqualTo("a > 0");
        assertThat(mv.query()).isEqualTo("SELECT a FROM t");
    }

    @Test
    void errorPositionsCountWindowsLineEndingsOnce() {
        assertThat(failure("CREATE MATERIALIZED VIEW v\r\nSCHEDULE REFRESH\r\n  EVERY x DAYS AS SELECT 1"))
                .hasMessage("Syntax error at 3:9 in CREATE MATERIALIZED VIEW: expected a number after EVERY but found 'x'");
    }

    @Test
    void nameMayBeQualifiedWithSpacesAroundDots() {
        assertThat(create("CREATE MATERIALIZED VIEW a . b .c AS SELECT 1").name())
                .isEqualTo(QualifiedName.of("a", "b", "c"));
    }

    @Nested
    class Errors {

        @Test
        void duplicateClauseIsNamed() {
            FloeParseException e = failure(
                    "CREATE MATERIALIZED VIEW v COMMENT 'a'\nSCHEDULE REFRESH EVERY 1 DAY COMMENT 'b' AS SELECT 1");

            assertThat(e).hasMessage("Syntax error at 2:30 in CREATE MATERIALIZED VIEW: "
                    + "duplicate COMMENT clause (first given at 1:28)");
            assertThat(e.line()).isEqualTo(2);
            assertThat(e.column()).isEqualTo(30);
        }

        @Test
        void duplicateScheduleIsNamed() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 1 DAY "
                    + "SCHEDULE REFRESH ON CHANGE AS SELECT 1"))
                    .hasMessageContaining("duplicate SCHEDULE clause");
        }

        @Test
        void orReplaceWithIfNotExistsIsRejected() {
            assertThat(failure("CREATE OR REPLACE MATERIALIZED VIEW IF NOT EXISTS v AS SELECT 1"))
                    .hasMessage("Syntax error at 1:37 in CREATE MATERIALIZED VIEW: "
                            + "OR REPLACE and IF NOT EXISTS cannot be used together");
        }

        @Test
        void missingScheduleAmountNamesExpectedAndFound() {
            FloeParseException e = failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY DAY AS SELECT 1");

            assertThat(e).hasMessage(
                    "Syntax error at 1:51 in CREATE MATERIALIZED VIEW: expected a number after EVERY but found 'DAY'");
            assertThat(e).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void unsupportedScheduleUnitPointsAtTheUnit() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 2 WEEKS AS SELECT 1"))
                    .hasMessage("Syntax error at 1:53 in CREATE MATERIALIZED VIEW: invalid schedule 'EVERY 2 WEEKS': "
                            + "expected a time unit MINUTE(S), HOUR(S) or DAY(S) but found 'WEEKS'");
        }

        @Test
        void secondsAreBelowTheShortestSchedule() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 30 SECONDS AS SELECT 1"))
                    .hasMessageContaining("1:54")
                    .hasMessageContaining("found 'SECONDS'");
        }

        @Test
        void zeroAmountPointsAtTheAmount() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 0 MINUTES AS SELECT 1"))
                    .hasMessage("Syntax error at 1:51 in CREATE MATERIALIZED VIEW: invalid schedule 'EVERY 0 MINUTES':"
                            + " a schedule interval must be at least one minute but was 0 MINUTES");
        }

        @Test
        void fractionalAmountIsRejected() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 1.5 HOURS AS SELECT 1"))
                    .hasMessageContaining("1:51")
                    .hasMessageContaining("expected a whole number after EVERY but found '1.5'");
        }

        @Test
        void missingScheduleUnit() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 5"))
                    .hasMessageContaining("expected a time unit MINUTE(S), HOUR(S) or DAY(S) after EVERY 5 but found "
                            + "end of statement");
        }

        @Test
        void scheduleMustBeEveryOrOnChange() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SCHEDULE REFRESH CRON '0 * * * *' AS SELECT 1"))
                    .hasMessageContaining("expected EVERY <n> MINUTE(S)|HOUR(S)|DAY(S) or ON CHANGE after "
                            + "SCHEDULE REFRESH but found 'CRON'");
        }

        @Test
        void unknownRefreshPolicy() {
            assertThat(failure("CREATE MATERIALIZED VIEW v REFRESH POLICY SOMETIMES AS SELECT 1"))
                    .hasMessageContaining("expected AUTO, INCREMENTAL or FULL after REFRESH POLICY but found 'SOMETIMES'");
        }

        @Test
        void missingAsNamesTheAcceptedClauses() {
            assertThat(failure("CREATE MATERIALIZED VIEW v SELECT 1"))
                    .hasMessage("Syntax error at 1:28 in CREATE MATERIALIZED VIEW: expected COMMENT, PARTITIONED BY, "
                            + "TBLPROPERTIES, SCHEDULE REFRESH, REFRESH POLICY or AS but found 'SELECT'");
        }

        @Test
        void emptyQuery() {
            assertThat(failure("CREATE MATERIALIZED VIEW v AS ;"))
                    .hasMessageContaining("expected a query after AS but found ';'");
            assertThat(failure("CREATE MATERIALIZED VIEW v AS WITH NO DATA"))
                    .hasMessageContaining("expected a query after AS but found 'WITH'");
        }

        @Test
        void missingName() {
            assertThat(failure("CREATE MATERIALIZED VIEW AS SELECT 1")).hasMessage("Syntax error at 1:26 in "
                    + "CREATE MATERIALIZED VIEW: expected a materialized view name after CREATE MATERIALIZED VIEW "
                    + "but found 'AS'");
            assertThat(failure("CREATE MATERIALIZED VIEW (a) AS SELECT 1"))
                    .hasMessageContaining("expected a materialized view name after CREATE MATERIALIZED VIEW but found '('");
        }

        @Test
        void trailingDotInName() {
            assertThat(failure("CREATE MATERIALIZED VIEW db.(a) AS SELECT 1"))
                    .hasMessageContaining("expected a name part after '.' but found '('");
        }

        @Test
        void columnTypesAreNotAllowed() {
            assertThat(failure("CREATE MATERIALIZED VIEW v (id INT) AS SELECT 1"))
                    .hasMessageContaining("expected COMMENT, ',' or ')' after column 'id' but found 'INT'");
        }

        @Test
        void duplicateColumn() {
            assertThat(failure("CREATE MATERIALIZED VIEW v (a, b, A) AS SELECT 1, 2, 3"))
                    .hasMessageContaining("duplicate column A (first declared at 1:29)");
        }

        @Test
        void constraintWithoutExpect() {
            assertThat(failure("CREATE MATERIALIZED VIEW v (CONSTRAINT pk PRIMARY KEY (id)) AS SELECT 1"))
                    .hasMessageContaining("expected EXPECT after CONSTRAINT pk but found 'PRIMARY'");
        }

        @Test
        void unclosedExpectCondition() {
            assertThat(failure("CREATE MATERIALIZED VIEW v (CONSTRAINT c EXPECT (a > (0)"))
                    .hasMessageContaining("expected ')' to close the EXPECT condition opened at 1:49 but found end");
        }

        @Test
        void emptyExpectCondition() {
            assertThat(failure("CREATE MATERIALIZED VIEW v (CONSTRAINT c EXPECT ()) AS SELECT 1"))
                    .hasMessageContaining("expected a boolean condition inside EXPECT ( ) but found ')'");
        }

        @Test
        void badOnViolationAction() {
            assertThat(failure("CREATE MATERIALIZED VIEW v (CONSTRAINT c EXPECT (a) ON VIOLATION IGNORE) AS SELECT 1"))
                    .hasMessageContaining("expected DROP ROW or FAIL UPDATE after ON VIOLATION but found 'IGNORE'");
        }

        @Test
        void emptyPartitionItem() {
            assertThat(failure("CREATE MATERIALIZED VIEW v PARTITIONED BY (a,,b) AS SELECT 1"))
                    .hasMessageContaining("expected a partition column or transform but found ','");
            assertThat(failure("CREATE MATERIALIZED VIEW v PARTITIONED BY () AS SELECT 1"))
                    .hasMessageContaining("expected a partition column or transform but found ')'");
        }

        @Test
        void duplicatePropertyKey() {
            assertThat(failure("CREATE MATERIALIZED VIEW v TBLPROPERTIES ('a'='1', 'a'='2') AS SELECT 1"))
                    .hasMessageContaining("duplicate property key 'a' in TBLPROPERTIES");
        }

        @Test
        void propertyWithoutValue() {
            assertThat(failure("CREATE MATERIALIZED VIEW v TBLPROPERTIES ('a') AS SELECT 1"))
                    .hasMessageContaining("expected '=' after property key 'a' but found ')'");
        }

        @Test
        void columnListAfterClauses() {
            assertThat(failure("CREATE MATERIALIZED VIEW v COMMENT 'x' (a) AS SELECT 1"))
                    .hasMessageContaining("the column list must come right after the view name");
        }

        @Test
        void unterminatedStringInQuery() {
            assertThat(failure("CREATE MATERIALIZED VIEW v AS\nSELECT 'abc FROM t"))
                    .hasMessage("Syntax error at 2:8 in CREATE MATERIALIZED VIEW: unterminated string literal");
        }

        @Test
        void secondStatementAfterSemicolon() {
            assertThat(failure("CREATE MATERIALIZED VIEW v AS SELECT 1; SELECT 2"))
                    .hasMessageContaining("expected nothing after ';'")
                    .hasMessageContaining("found 'SELECT'");
        }
    }

    @Test
    void parseExceptionIsAnIllegalArgumentException() {
        assertThatThrownBy(() -> FloeStatementParser.parse("CREATE MATERIALIZED VIEW v"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("but found end of statement");
    }

    @Test
    void componentListsAreImmutable() {
        CreateMaterializedView mv = create("CREATE MATERIALIZED VIEW v (a) PARTITIONED BY (a) "
                + "TBLPROPERTIES ('k'='v') AS SELECT 1");

        assertThatThrownBy(() -> mv.columns().add(new ColumnSpec("b", Optional.empty())))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> mv.tableProperties().put("x", "y"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(mv.partitionedBy()).isEqualTo(List.of("a"));
    }
}
