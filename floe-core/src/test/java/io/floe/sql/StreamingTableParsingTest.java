package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.ExpectationsParser;
import io.floe.mv.OnViolation;
import io.floe.refresh.ExpectationResult;
import io.floe.refresh.ExpectationResultParser;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** CREATE [OR REFRESH] STREAMING TABLE, REFRESH STREAMING TABLE, and the expectation JSON formats. */
class StreamingTableParsingTest {

    private static FloeStatement parse(String sql) {
        Optional<FloeStatement> statement = FloeStatementParser.parse(sql);
        assertThat(statement).as("parse(%s)", sql).isPresent();
        return statement.get();
    }

    @Test
    void createStreamingTableReadsThePathFormatAndOptions() {
        CreateStreamingTable create = (CreateStreamingTable) parse(
                "create streaming table bronze.orders comment 'raw' TBLPROPERTIES ('a' = 'b') as "
                        + "select * from stream read_files('/in/orders', format => 'CSV', sep => ';', header => true);");
        assertThat(create.name().parts()).containsExactly("bronze", "orders");
        assertThat(create.orRefresh()).isFalse();
        assertThat(create.comment()).contains("raw");
        assertThat(create.tableProperties()).isEqualTo(Map.of("a", "b"));
        assertThat(create.source()).isEqualTo(new FileSource("/in/orders", "csv", Map.of("sep", ";", "header", "true")));
    }

    @Test
    void orRefreshStreamParenthesesAndFormatFromTheExtension() {
        CreateStreamingTable create = (CreateStreamingTable) parse(
                "CREATE OR REFRESH STREAMING TABLE IF NOT EXISTS t AS SELECT * FROM STREAM(read_files('s3a://b/x.parquet'))");
        assertThat(create.orRefresh()).isTrue();
        assertThat(create.ifNotExists()).isTrue();
        assertThat(create.source().format()).contains("parquet");
        assertThat(((CreateStreamingTable) parse("CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('/in/a.JSONL.gz')"))
                .source().format()).contains("json");
        // A folder: its files' extensions decide at the first load.
        assertThat(((CreateStreamingTable) parse("CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('/in')"))
                .source().format()).isEmpty();
    }

    @Test
    void refreshStreamingTable() {
        assertThat(parse("REFRESH STREAMING TABLE lake.bronze.orders"))
                .isEqualTo(new RefreshStreamingTable(new QualifiedName(List.of("lake", "bronze", "orders"))));
    }

    @Test
    void aProjectionOrAnUnknownFormatIsRefusedWithTheReason() {
        assertThat(CreateMaterializedViewParsingTest.failure(
                "CREATE STREAMING TABLE t AS SELECT id FROM STREAM read_files('/in')").getMessage())
                .contains("CREATE STREAMING TABLE").contains("expected '*' after SELECT");
        assertThat(CreateMaterializedViewParsingTest.failure(
                "CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_files('/in', format => 'xml')").getMessage())
                .contains("unsupported format 'xml'");
    }

    @Test
    void otherCreateStatementsAreNotStreamingTables() {
        assertThat(FloeStatementParser.parse("CREATE OR REPLACE TABLE t AS SELECT 1")).isEmpty();
        assertThat(FloeStatementParser.parse("CREATE TABLE streaming (id INT)")).isEmpty();
    }

    @Test
    void expectationsAndTheirCountsRoundTripThroughJson() {
        List<Expectation> expectations = List.of(
                new Expectation("valid_amount", "amount IS NOT NULL", OnViolation.DROP_ROW),
                new Expectation("valid \"date\"", "d <> ''", OnViolation.KEEP));
        assertThat(ExpectationsParser.fromJson(ExpectationsParser.toJson(expectations))).isEqualTo(expectations);
        List<ExpectationResult> results = List.of(new ExpectationResult("valid_amount", OnViolation.FAIL_UPDATE, 470, 7));
        assertThat(ExpectationResultParser.fromJson(ExpectationResultParser.toJson(results))).isEqualTo(results);
        assertThat(results.get(0).describe()).isEqualTo("valid_amount: 470 passed, 7 failed (FAIL UPDATE)");
    }
}
