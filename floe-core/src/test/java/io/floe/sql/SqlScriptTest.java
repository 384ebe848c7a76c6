package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SqlScriptTest {

    @Test
    void splitsAtTopLevelSemicolonsAndTrims() {
        assertThat(SqlScript.split("  SELECT 1 ;\nSELECT 2;SELECT 3  "))
                .containsExactly("SELECT 1", "SELECT 2", "SELECT 3");
    }

    @Test
    void semicolonsInsideStringsIdentifiersAndCommentsDoNotSplit() {
        String script = """
                SELECT 'a;b', "c;d", `e;f` FROM t; -- not; a split
                SELECT 'it\\'s; fine' /* block; comment */ FROM u;
                SELECT "say \\"hi;\\"" AS `x``;y`
                """;

        assertThat(SqlScript.split(script)).containsExactly(
                "SELECT 'a;b', \"c;d\", `e;f` FROM t",
                "SELECT 'it\\'s; fine' /* block; comment */ FROM u",
                "SELECT \"say \\\"hi;\\\"\" AS `x``;y`");
    }

    @Test
    void nestedBlockCommentsAreSkippedWhole() {
        assertThat(SqlScript.split("SELECT /* outer /* inner; */ still; comment */ 1; SELECT 2"))
                .containsExactly("SELECT /* outer /* inner; */ still; comment */ 1", "SELECT 2");
    }

    @Test
    void rawStringsHaveNoEscapes() {
        assertThat(SqlScript.split("SELECT r'C:\\dir\\'; SELECT 2"))
                .containsExactly("SELECT r'C:\\dir\\'", "SELECT 2");
    }

    @Test
    void emptyAndCommentOnlyStatementsAreDropped() {
        assertThat(SqlScript.split(";;  ; -- nothing\n; /* nothing */ ;\nSELECT 1;\n-- trailing comment\n"))
                .containsExactly("SELECT 1");
        assertThat(SqlScript.split("")).isEmpty();
    }

    @Test
    void commentsAroundAStatementAreNotPartOfIt() {
        assertThat(SqlScript.split("-- make the view\nCREATE MATERIALIZED VIEW v AS SELECT 1 -- done\n"))
                .containsExactly("CREATE MATERIALIZED VIEW v AS SELECT 1");
    }

    @Test
    void unterminatedStringSwallowsTheRestIntoTheLastStatement() {
        assertThat(SqlScript.split("SELECT 1; SELECT 'oops; SELECT 3"))
                .containsExactly("SELECT 1", "SELECT 'oops; SELECT 3");
    }

    @Test
    void splitStatementsParseIndividually() {
        String script = """
                CREATE MATERIALIZED VIEW v SCHEDULE REFRESH EVERY 1 HOUR AS SELECT ';' AS s;
                REFRESH MATERIALIZED VIEW v FULL;
                SELECT * FROM v;
                """;

        assertThat(SqlScript.split(script).stream().map(FloeStatementParser::parse))
                .satisfiesExactly(
                        create -> assertThat(create).get().isInstanceOf(CreateMaterializedView.class),
                        refresh -> assertThat(refresh).get().isInstanceOf(RefreshMaterializedView.class),
                        select -> assertThat(select).isEmpty());
    }
}
