package io.floe.sql;

/**
 * A statement that Floe recognized as its own (by its leading keywords) is malformed.
 *
 * <p>The message reads {@code Syntax error at LINE:COLUMN in STATEMENT: DETAIL}, where the detail usually names
 * what was expected and what was found, for example
 * {@code Syntax error at 1:42 in CREATE MATERIALIZED VIEW: expected a number after EVERY but found 'DAY'}.
 * Lines and columns are 1-based; a column counts UTF-16 characters from the start of the line.
 */
public final class FloeParseException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String statement;
    private final int line;
    private final int column;
    private final String detail;

    /**
     * @param statement the kind of statement being parsed, such as {@code CREATE MATERIALIZED VIEW}
     * @param line 1-based line of the offending token
     * @param column 1-based column of the offending token
     * @param detail what is wrong, such as {@code expected a number after EVERY but found 'DAY'}
     */
    public FloeParseException(String statement, int line, int column, String detail) {
        this(statement, line, column, detail, null);
    }

    FloeParseException(String statement, int line, int column, String detail, Throwable cause) {
        super("Syntax error at " + line + ":" + column + " in " + statement + ": " + detail, cause);
        this.statement = statement;
        this.line = line;
        this.column = column;
        this.detail = detail;
    }

    /** The kind of statement being parsed, such as {@code CREATE MATERIALIZED VIEW}. */
    public String statement() {
        return statement;
    }

    /** 1-based line of the offending token. */
    public int line() {
        return line;
    }

    /** 1-based column of the offending token. */
    public int column() {
        return column;
    }

    /** The message without its position prefix. */
    public String detail() {
        return detail;
    }
}
