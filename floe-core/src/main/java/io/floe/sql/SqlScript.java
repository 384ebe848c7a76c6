package io.floe.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a SQL script into its statements.
 */
public final class SqlScript {

    private SqlScript() {
    }

    /**
     * Splits {@code script} at each {@code ;} that is outside string literals (single- or double-quoted, with
     * Spark's backslash escapes), backtick identifiers and comments ({@code --} and nestable {@code /* *}{@code /}).
     *
     * <p>Each statement runs from its first to its last token, so it is trimmed and comments before or after it
     * are dropped (comments inside it are kept); statements with no tokens are dropped. A string, identifier or
     * comment that is never closed swallows the rest of the script into the last statement, whose parser reports
     * it.
     *
     * @return the statements in order, without their {@code ;}
     */
    public static List<String> split(String script) {
        return statements(script).stream().map(Statement::sql).toList();
    }

    /** A statement of a script and the 1-based line of the script it starts on. */
    public record Statement(String sql, int line) {}

    /** As {@link #split}, each statement with the line it starts on. */
    public static List<Statement> statements(String script) {
        List<Statement> statements = new ArrayList<>();
        Token first = null;
        Token last = null;
        for (Token token : SqlLexer.tokenize(script)) {
            if (token.kind() == Token.Kind.END || token.isSymbol(';')) {
                if (first != null) {
                    int line = 1 + (int) script.substring(0, first.start()).chars().filter(c -> c == '\n').count();
                    statements.add(new Statement(script.substring(first.start(), last.end()), line));
                }
                first = null;
                continue;
            }
            if (first == null) {
                first = token;
            }
            last = token;
        }
        return statements;
    }
}
