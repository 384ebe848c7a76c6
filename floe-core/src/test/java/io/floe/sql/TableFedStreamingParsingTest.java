package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Streaming tables fed by tables, CREATE FLOW and REFRESH STREAMING TABLE ... FULL, as Spark Declarative Pipelines write them. */
class TableFedStreamingParsingTest {

    private static FloeStatement parse(String sql) {
        Optional<FloeStatement> statement = FloeStatementParser.parse(sql);
        assertThat(statement).as("parse(%s)", sql).isPresent();
        return statement.get();
    }

    private static String failure(String sql) {
        return CreateMaterializedViewParsingTest.failure(sql).getMessage();
    }

    @Test
    void aStreamingTableOverATableKeepsItsQueryAsWritten() {
        String query = "SELECT id, upper(kind) AS kind FROM STREAM(bronze_events) WHERE id IS NOT NULL";
        CreateTableFedStreamingTable create = (CreateTableFedStreamingTable) parse(
                "CREATE STREAMING TABLE silver_events AS " + query + "; -- trailing comment");
        assertThat(create.name().parts()).containsExactly("silver_events");
        assertThat(create.query()).contains(query);
        assertThat(create.columns()).isEmpty();
        assertThat(create.orRefresh()).isFalse();
        assertThat(create.originalText()).isEqualTo("CREATE STREAMING TABLE silver_events AS " + query);
    }

    @Test
    void columnsCommentPropertiesAndStreamWithoutParentheses() {
        CreateTableFedStreamingTable create = (CreateTableFedStreamingTable) parse(
                "create or refresh streaming table if not exists db.t (id BIGINT COMMENT 'key', amount DECIMAL(10, 2),"
                        + " tags MAP<STRING, ARRAY<INT>>) COMMENT 'silver' TBLPROPERTIES ('skipChangeCommits' = 'true')"
                        + " AS SELECT * FROM STREAM src");
        assertThat(create.orRefresh()).isTrue();
        assertThat(create.ifNotExists()).isTrue();
        assertThat(create.columns()).containsExactly(
                new TypedColumn("id", "BIGINT", Optional.of("key")),
                new TypedColumn("amount", "DECIMAL(10, 2)", Optional.empty()),
                new TypedColumn("tags", "MAP<STRING, ARRAY<INT>>", Optional.empty()));
        assertThat(create.comment()).contains("silver");
        assertThat(create.tableProperties()).isEqualTo(Map.of("skipChangeCommits", "true"));
        assertThat(create.query()).contains("SELECT * FROM STREAM src");
    }

    @Test
    void aStreamingTableWithoutAQueryIsATargetForFlows() {
        CreateTableFedStreamingTable bare = (CreateTableFedStreamingTable) parse("CREATE STREAMING TABLE all_orders;");
        assertThat(bare.query()).isEmpty();
        assertThat(bare.columns()).isEmpty();
        CreateTableFedStreamingTable typed = (CreateTableFedStreamingTable) parse(
                "CREATE STREAMING TABLE all_orders (id INT, channel STRING) COMMENT 'all'");
        assertThat(typed.columns()).extracting(TypedColumn::name).containsExactly("id", "channel");
        assertThat(typed.query()).isEmpty();
    }

    @Test
    void readFilesStaysAFileStreamingTable() {
        assertThat(parse("CREATE STREAMING TABLE b AS SELECT * FROM STREAM read_files('/in')"))
                .isInstanceOf(CreateStreamingTable.class);
        assertThat(failure("CREATE STREAMING TABLE b (id INT) AS SELECT * FROM STREAM read_files('/in')"))
                .contains("takes its columns from the files");
        assertThat(failure("CREATE STREAMING TABLE b AS SELECT id FROM STREAM read_files('/in')"))
                .contains("expected '*' after SELECT");
    }

    @Test
    void malformedStreamingTablesSayWhatWasExpected() {
        assertThat(failure("CREATE STREAMING TABLE t (id) AS SELECT * FROM STREAM(s)")).contains("a type after column id");
        assertThat(failure("CREATE STREAMING TABLE t (id INT, id STRING)")).contains("duplicate column id");
        assertThat(failure("CREATE STREAMING TABLE t AS")).contains("a query after AS");
        assertThat(failure("CREATE STREAMING TABLE t PARTITIONED BY (x) AS SELECT 1"))
                .contains("expected COMMENT, TBLPROPERTIES, AS or end of statement");
    }

    @Test
    void createFlowAppendsByNameOrByPosition() {
        CreateFlow flow = (CreateFlow) parse(
                "CREATE FLOW web_orders AS INSERT INTO all_orders BY NAME SELECT * FROM STREAM(web_raw);");
        assertThat(flow.name()).isEqualTo("web_orders");
        assertThat(flow.target().parts()).containsExactly("all_orders");
        assertThat(flow.byName()).isTrue();
        assertThat(flow.query()).isEqualTo("SELECT * FROM STREAM(web_raw)");
        assertThat(flow.originalText()).doesNotEndWith(";");

        CreateFlow positional = (CreateFlow) parse(
                "create flow shop COMMENT 'shop orders' as insert into table db.all_orders select id, 'shop' from stream shop_raw");
        assertThat(positional.byName()).isFalse();
        assertThat(positional.comment()).contains("shop orders");
        assertThat(positional.target().parts()).containsExactly("db", "all_orders");
    }

    @Test
    void malformedFlowsSayWhatWasExpected() {
        assertThat(failure("CREATE FLOW f AS SELECT * FROM STREAM(s)")).contains("CREATE FLOW")
                .contains("expected INSERT INTO target after AS");
        assertThat(failure("CREATE FLOW f AS INSERT INTO t")).contains("a query after INSERT INTO t");
        assertThat(failure("CREATE FLOW db.f AS INSERT INTO t SELECT 1")).contains("a flow's name has one part");
        assertThat(failure("CREATE FLOW f AS INSERT INTO t (a, b) SELECT 1, 2")).contains("a column list is not supported");
        assertThat(failure("CREATE FLOW AS INSERT INTO t SELECT 1")).contains("expected COMMENT or AS");
        assertThat(failure("CREATE STREAMING TABLE t (CONSTRAINT c EXPECT (id > 0)) AS SELECT * FROM STREAM(s)"))
                .contains("expectations (CONSTRAINT ... EXPECT) on a streaming table are not supported");
        assertThat(failure("CREATE STREAMING TABLE t (id INT, CONSTRAINT c EXPECT (id > 0) ON VIOLATION DROP ROW)"))
                .contains("expectations (CONSTRAINT ... EXPECT) on a streaming table are not supported");
        assertThat(failure("CREATE FLOW backfill AS INSERT INTO ONCE db.t BY NAME SELECT * FROM hist"))
                .contains("once flows (INSERT INTO ONCE) are not supported");
        // A table named once is a table like any other.
        assertThat(((CreateFlow) parse("CREATE FLOW f AS INSERT INTO once BY NAME SELECT * FROM STREAM(s)")).target().parts())
                .containsExactly("once");
        assertThat(((CreateFlow) parse("CREATE FLOW f AS INSERT INTO once SELECT * FROM STREAM(s)")).target().parts())
                .containsExactly("once");
    }

    @Test
    void refreshStreamingTableFull() {
        assertThat(parse("REFRESH STREAMING TABLE t FULL"))
                .isEqualTo(new RefreshStreamingTable(new QualifiedName(List.of("t")), true));
        assertThat(parse("REFRESH STREAMING TABLE t")).isEqualTo(new RefreshStreamingTable(new QualifiedName(List.of("t")), false));
        assertThat(failure("REFRESH STREAMING TABLE t CASCADE")).contains("expected FULL or end of statement");
    }
}
