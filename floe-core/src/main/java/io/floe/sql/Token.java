package io.floe.sql;

import java.util.Locale;

/**
 * One lexical token of a statement, with its offsets into the original text so that query, expression and
 * partition texts can be cut out exactly as the user wrote them.
 *
 * @param kind what sort of token this is
 * @param text the token exactly as written in the source
 * @param value the meaning of the token: the unescaped content of a string literal or backtick identifier, the
 *     problem description of an {@link Kind#ERROR} token, otherwise the same as {@code text}
 * @param start offset of the first character in the source
 * @param end offset just past the last character in the source
 */
record Token(Kind kind, String text, String value, int start, int end) {

    enum Kind {
        /** An unquoted identifier or keyword: {@code [A-Za-z_][A-Za-z0-9_]*}. */
        WORD,
        /** A backtick-quoted identifier. */
        QUOTED_IDENTIFIER,
        /** A single- or double-quoted string literal (or a raw {@code r'...'} literal). */
        STRING,
        /** A numeric literal; only the all-digit ones are integers to Floe. */
        NUMBER,
        /** Any other single character, such as {@code ( ) , . ; =}. */
        SYMBOL,
        /** Input the lexer could not finish, such as an unterminated string; it runs to the end of the input. */
        ERROR,
        /** The end of the input. */
        END
    }

    boolean isWord(String keyword) {
        return kind == Kind.WORD && text.equalsIgnoreCase(keyword);
    }

    boolean isSymbol(char symbol) {
        return kind == Kind.SYMBOL && text.length() == 1 && text.charAt(0) == symbol;
    }

    boolean isIdentifier() {
        return kind == Kind.WORD || kind == Kind.QUOTED_IDENTIFIER;
    }

    boolean isInteger() {
        return kind == Kind.NUMBER && text.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** The statement ends here: at the end of input or at a {@code ;}. */
    boolean endsStatement() {
        return kind == Kind.END || isSymbol(';');
    }

    String upperText() {
        return text.toUpperCase(Locale.ROOT);
    }
}
