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
        List<String> statements = new ArrayList<>();
        Token first = null;
        Token last = null;
        for (Token token : SqlLexer.tokenize(script)) {
            if (token.kind() == Token.Kind.END || token.isSymbol(';')) {
                if (first != null) {
                    statements.add(script.substring(first.start(), last.end()));
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
