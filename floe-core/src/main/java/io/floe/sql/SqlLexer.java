package io.floe.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits SQL text into {@link Token}s following Spark SQL's lexical rules for the parts that matter to Floe:
 * quoted strings with backslash escapes, raw strings, backtick identifiers, {@code --} comments and nestable
 * {@code /* *}{@code /} comments. Everything else becomes single-character symbols, so any SQL can be
 * tokenized without failing; problems (an unterminated string, say) become one {@link Token.Kind#ERROR} token
 * reaching to the end of the input, because only a statement Floe owns should be rejected for them.
 */
final class SqlLexer {

    private final String sql;
    private final List<Token> tokens = new ArrayList<>();
    private int pos;

    private SqlLexer(String sql) {
        this.sql = sql;
    }

    /** All tokens of {@code sql}, ending with exactly one {@link Token.Kind#END} token. */
    static List<Token> tokenize(String sql) {
        SqlLexer lexer = new SqlLexer(sql);
        lexer.run();
        return lexer.tokens;
    }

    private void run() {
        while (true) {
            skipSpaceAndComments();
            if (pos >= sql.length()) {
                break;
            }
            if (!lexToken()) {
                break;
            }
        }
        // The end token sits right after the last real token so "found end of statement" points somewhere useful.
        int endAt = tokens.isEmpty() ? 0 : tokens.get(tokens.size() - 1).end();
        tokens.add(new Token(Token.Kind.END, "", "", endAt, endAt));
    }

    private void skipSpaceAndComments() {
        while (pos < sql.length()) {
            char c = sql.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (c == '-' && peekChar(1) == '-') {
                while (pos < sql.length() && sql.charAt(pos) != '\n' && sql.charAt(pos) != '\r') {
                    pos++;
                }
            } else if (c == '/' && peekChar(1) == '*') {
                if (!skipBlockComment()) {
                    return;
                }
            } else {
                return;
            }
        }
    }

    /** Spark allows block comments to nest; returns false (after recording an error) if one never closes. */
    private boolean skipBlockComment() {
        int start = pos;
        int depth = 0;
        while (pos < sql.length()) {
            if (sql.startsWith("/*", pos)) {
                depth++;
                pos += 2;
            } else if (sql.startsWith("*/", pos)) {
                depth--;
                pos += 2;
                if (depth == 0) {
                    return true;
                }
            } else {
                pos++;
            }
        }
        error(start, "unterminated /* comment");
        return false;
    }

    /** Lexes one token at {@code pos}; returns false once an error token has consumed the rest of the input. */
    private boolean lexToken() {
        int start = pos;
        char c = sql.charAt(pos);
        if ((c == 'r' || c == 'R') && (peekChar(1) == '\'' || peekChar(1) == '"')) {
            return rawString(start);
        }
        if (c == '\'' || c == '"') {
            return quotedString(start, c);
        }
        if (c == '`') {
            return backtickIdentifier(start);
        }
        if (isIdentifierStart(c)) {
            pos++;
            while (pos < sql.length() && isIdentifierPart(sql.charAt(pos))) {
                pos++;
            }
            add(Token.Kind.WORD, start, sql.substring(start, pos));
            return true;
        }
        if (c >= '0' && c <= '9') {
            number(start);
            return true;
        }
        pos += Character.charCount(sql.codePointAt(pos));
        add(Token.Kind.SYMBOL, start, sql.substring(start, pos));
        return true;
    }

    private void number(int start) {
        skipDigits();
        if (peekChar(0) == '.' && isDigit(peekChar(1))) {
            pos++;
            skipDigits();
        }
        // Suffixes and exponents (10L, 1.5BD, 1e10) stay in the token so "EVERY 5MINUTES" reports '5MINUTES'.
        while (pos < sql.length() && isIdentifierPart(sql.charAt(pos))) {
            pos++;
        }
        add(Token.Kind.NUMBER, start, sql.substring(start, pos));
    }

    private boolean quotedString(int start, char quote) {
        StringBuilder value = new StringBuilder();
        pos++;
        while (pos < sql.length()) {
            char c = sql.charAt(pos);
            if (c == quote) {
                pos++;
                add(Token.Kind.STRING, start, value.toString());
                return true;
            }
            if (c == '\\' && pos + 1 < sql.length()) {
                pos = unescape(pos + 1, value);
            } else {
                value.append(c);
                pos++;
            }
        }
        error(start, "unterminated string literal");
        return false;
    }

    private boolean rawString(int start) {
        char quote = sql.charAt(start + 1);
        int close = sql.indexOf(quote, start + 2);
        if (close < 0) {
            error(start, "unterminated string literal");
            return false;
        }
        pos = close + 1;
        add(Token.Kind.STRING, start, sql.substring(start + 2, close));
        return true;
    }

    private boolean backtickIdentifier(int start) {
        StringBuilder value = new StringBuilder();
        pos++;
        while (pos < sql.length()) {
            char c = sql.charAt(pos);
            if (c == '`') {
                if (peekChar(1) == '`') {
                    value.append('`');
                    pos += 2;
                    continue;
                }
                pos++;
                add(Token.Kind.QUOTED_IDENTIFIER, start, value.toString());
                return true;
            }
            value.append(c);
            pos++;
        }
        error(start, "unterminated `quoted identifier`");
        return false;
    }

    /**
     * Appends the meaning of the escape sequence whose character after the backslash is at {@code at}, as Spark's
     * {@code unescapeSQLString} does, and returns the offset after the sequence.
     */
    private int unescape(int at, StringBuilder out) {
        char c = sql.charAt(at);
        switch (c) {
            case '0', '1', '2', '3' -> {
                if (at + 2 < sql.length() && isOctal(sql.charAt(at + 1)) && isOctal(sql.charAt(at + 2))) {
                    out.append((char) Integer.parseInt(sql.substring(at, at + 3), 8));
                    return at + 3;
                }
                out.append(c == '0' ? '\0' : c);
            }
            case 'b' -> out.append('\b');
            case 'n' -> out.append('\n');
            case 'r' -> out.append('\r');
            case 't' -> out.append('\t');
            case 'Z' -> out.append('\u001A');
            // Spark keeps these escaped because they are LIKE wildcards.
            case '%', '_' -> out.append('\\').append(c);
            case 'u' -> {
                if (at + 4 < sql.length() && sql.substring(at + 1, at + 5).chars().allMatch(SqlLexer::isHexDigit)) {
                    out.append((char) Integer.parseInt(sql.substring(at + 1, at + 5), 16));
                    return at + 5;
                }
                out.append(c);
            }
            default -> out.append(c);
        }
        return at + 1;
    }

    private void add(Token.Kind kind, int start, String value) {
        tokens.add(new Token(kind, sql.substring(start, pos), value, start, pos));
    }

    private void error(int start, String problem) {
        pos = sql.length();
        tokens.add(new Token(Token.Kind.ERROR, sql.substring(start), problem, start, pos));
    }

    private void skipDigits() {
        while (pos < sql.length() && isDigit(sql.charAt(pos))) {
            pos++;
        }
    }

    private char peekChar(int ahead) {
        int at = pos + ahead;
        return at < sql.length() ? sql.charAt(at) : '\0';
    }

    static boolean isIdentifierStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }

    static boolean isIdentifierPart(char c) {
        return isIdentifierStart(c) || isDigit(c);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isOctal(char c) {
        return c >= '0' && c <= '7';
    }

    private static boolean isHexDigit(int c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
