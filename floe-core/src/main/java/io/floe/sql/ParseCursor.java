package io.floe.sql;

import io.floe.mv.RefreshPolicy;
import io.floe.schedule.Schedule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A position in the tokens of one statement, plus the grammar pieces several Floe statements share (names,
 * string literals, property lists, schedules). Every {@code expect...} method either consumes what it expects or
 * throws a {@link FloeParseException} saying what it expected and what it found, and where.
 */
final class ParseCursor {

    private static final int LONGEST_QUOTED_TOKEN = 40;

    private final String sql;
    private final List<Token> tokens;
    private int index;
    private String statement = "statement";

    ParseCursor(String sql, List<Token> tokens) {
        this.sql = sql;
        this.tokens = tokens;
    }

    String sql() {
        return sql;
    }

    /** Names the statement in error messages, once its leading keywords have identified it. */
    void statement(String name) {
        this.statement = name;
    }

    // ---- navigation ----

    Token peek() {
        return peek(0);
    }

    Token peek(int ahead) {
        return tokens.get(Math.min(index + ahead, tokens.size() - 1));
    }

    Token next() {
        Token token = peek();
        if (token.kind() != Token.Kind.END) {
            index++;
        }
        return token;
    }

    int mark() {
        return index;
    }

    void reset(int mark) {
        index = mark;
    }

    Token tokenAt(int position) {
        return tokens.get(position);
    }

    boolean atKeyword(String keyword) {
        return peek().isWord(keyword);
    }

    boolean atSymbol(char symbol) {
        return peek().isSymbol(symbol);
    }

    boolean acceptKeyword(String keyword) {
        if (atKeyword(keyword)) {
            next();
            return true;
        }
        return false;
    }

    /** Consumes the whole keyword sequence, or nothing if it is not all there. */
    boolean acceptKeywords(String... keywords) {
        for (int i = 0; i < keywords.length; i++) {
            if (!peek(i).isWord(keywords[i])) {
                return false;
            }
        }
        index += keywords.length;
        return true;
    }

    boolean acceptSymbol(char symbol) {
        if (atSymbol(symbol)) {
            next();
            return true;
        }
        return false;
    }

    Token expectKeyword(String keyword, String after) {
        if (!atKeyword(keyword)) {
            throw expected(keyword + " after " + after);
        }
        return next();
    }

    Token expectSymbol(char symbol, String context) {
        if (!atSymbol(symbol)) {
            throw expected("'" + symbol + "' " + context);
        }
        return next();
    }

    /** Consumes an optional {@code ;} and then requires the end of input. */
    void expectEndOfStatement(String alternatives) {
        if (acceptSymbol(';')) {
            if (peek().kind() != Token.Kind.END) {
                throw expected("nothing after ';' (split scripts with SqlScript.split and parse one statement at"
                        + " a time)");
            }
            return;
        }
        if (peek().kind() != Token.Kind.END) {
            throw expected(alternatives == null ? "end of statement" : alternatives + " or end of statement");
        }
    }

    // ---- errors ----

    /** An error at the current token: {@code expected WHAT but found TOKEN}. */
    FloeParseException expected(String what) {
        return expected(peek(), what);
    }

    FloeParseException expected(Token at, String what) {
        if (at.kind() == Token.Kind.ERROR) {
            return errorAt(at, at.value());
        }
        return errorAt(at, "expected " + what + " but found " + describe(at));
    }

    FloeParseException errorAt(Token at, String detail) {
        return errorAt(at, detail, null);
    }

    FloeParseException errorAt(Token at, String detail, Throwable cause) {
        int[] lineAndColumn = lineAndColumn(at.start());
        return new FloeParseException(statement, lineAndColumn[0], lineAndColumn[1], detail, cause);
    }

    /** 1-based line and column of an offset; {@code \r\n}, {@code \n} and a lone {@code \r} each end a line. */
    private int[] lineAndColumn(int offset) {
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < offset; i++) {
            char c = sql.charAt(i);
            if (c == '\n' || (c == '\r' && (i + 1 >= sql.length() || sql.charAt(i + 1) != '\n'))) {
                line++;
                lineStart = i + 1;
            }
        }
        return new int[] {line, offset - lineStart + 1};
    }

    static String describe(Token token) {
        if (token.kind() == Token.Kind.END) {
            return "end of statement";
        }
        String text = token.text();
        if (text.length() > LONGEST_QUOTED_TOKEN) {
            text = text.substring(0, LONGEST_QUOTED_TOKEN) + "...";
        }
        return "'" + text + "'";
    }

    /** 1-based {@code line:column} of a token, for messages that point back at an earlier token. */
    String position(Token token) {
        int[] lineAndColumn = lineAndColumn(token.start());
        return lineAndColumn[0] + ":" + lineAndColumn[1];
    }

    // ---- shared grammar ----

    /** The source from the start of {@code first} to the end of {@code last}, as written. */
    String text(Token first, Token last) {
        return sql.substring(first.start(), last.end());
    }

    /**
     * Consumes the rest of the statement up to an optional {@code ;} and returns it as written, cut at tokens so
     * that no trailing comment is kept; {@code what} names it in the error when nothing is left.
     */
    String expectRestOfStatement(String what) {
        Token first = peek();
        Token last = null;
        while (!peek().endsStatement()) {
            if (peek().kind() == Token.Kind.ERROR) {
                throw expected("the rest of " + what);
            }
            last = next();
        }
        if (last == null) {
            throw expected(what);
        }
        expectEndOfStatement(null);
        return text(first, last);
    }

    /** {@code identifier ('.' identifier)*}; {@code what} describes the name for the error message. */
    QualifiedName expectQualifiedName(String what) {
        List<String> parts = new ArrayList<>();
        parts.add(expectIdentifier(what));
        while (acceptSymbol('.')) {
            parts.add(expectIdentifier("a name part after '.'"));
        }
        return new QualifiedName(parts);
    }

    String expectIdentifier(String what) {
        Token token = peek();
        if (!token.isIdentifier()) {
            throw expected(what);
        }
        if (token.value().isEmpty()) {
            throw errorAt(token, "expected " + what + " but found an empty quoted identifier ``");
        }
        next();
        return token.value();
    }

    /** A string literal; adjacent literals are concatenated, as in Spark ({@code 'a' 'b'} is {@code 'ab'}). */
    String expectString(String what) {
        if (peek().kind() != Token.Kind.STRING) {
            throw expected(what);
        }
        StringBuilder value = new StringBuilder(next().value());
        while (peek().kind() == Token.Kind.STRING) {
            value.append(next().value());
        }
        return value.toString();
    }

    long expectInteger(String what) {
        Token token = peek();
        if (!token.isInteger()) {
            throw expected(what);
        }
        try {
            long value = Long.parseLong(token.text());
            next();
            return value;
        } catch (NumberFormatException e) {
            throw errorAt(token, "expected " + what + " but found " + describe(token) + ", which is too large", e);
        }
    }

    /** {@code '(' key '=' value (',' key '=' value)* ')'} for TBLPROPERTIES; duplicate keys are an error. */
    Map<String, String> expectPropertyList(String clause) {
        expectSymbol('(', "after " + clause);
        Map<String, String> properties = new LinkedHashMap<>();
        do {
            Token keyToken = peek();
            String key = expectPropertyKey("a property key in " + clause);
            expectSymbol('=', "after property key '" + key + "'");
            String value = expectPropertyValue("a value for property '" + key + "'");
            if (properties.put(key, value) != null) {
                throw errorAt(keyToken, "duplicate property key '" + key + "' in " + clause);
            }
        } while (acceptSymbol(','));
        expectSymbol(')', "or ',' after a property in " + clause);
        return properties;
    }

    /** {@code '(' key (',' key)* ')'} for UNSET TBLPROPERTIES. */
    List<String> expectPropertyKeyList(String clause) {
        expectSymbol('(', "after " + clause);
        List<String> keys = new ArrayList<>();
        do {
            keys.add(expectPropertyKey("a property key in " + clause));
        } while (acceptSymbol(','));
        expectSymbol(')', "or ',' after a property key in " + clause);
        return keys;
    }

    /** A quoted key, or an unquoted dotted one such as {@code write.format.default}. */
    String expectPropertyKey(String what) {
        if (peek().kind() == Token.Kind.STRING) {
            return expectString(what);
        }
        if (!peek().isIdentifier()) {
            throw expected(what);
        }
        return String.join(".", expectQualifiedName(what).parts());
    }

    /** A string, or (as Spark allows) a number or boolean, which are kept as written. */
    private String expectPropertyValue(String what) {
        Token token = peek();
        if (token.kind() == Token.Kind.STRING) {
            return expectString(what);
        }
        if (token.kind() == Token.Kind.NUMBER) {
            return next().text();
        }
        if (token.isSymbol('-') && peek(1).kind() == Token.Kind.NUMBER && peek(1).start() == token.end()) {
            next();
            return "-" + next().text();
        }
        if (token.isWord("TRUE") || token.isWord("FALSE")) {
            return next().text().toLowerCase(Locale.ROOT);
        }
        throw expected(what + " (a string literal)");
    }

    /**
     * {@code EVERY n unit} or {@code ON CHANGE}, checked for shape here and then handed to {@link Schedule#parse}
     * so that the SQL clause and stored schedules accept exactly the same units and amounts.
     */
    Schedule expectSchedule(String after) {
        Token first = peek();
        if (acceptKeyword("ON")) {
            expectKeyword("CHANGE", "ON");
            return Schedule.onChange();
        }
        if (!acceptKeyword("EVERY")) {
            throw expected("EVERY <n> MINUTE(S)|HOUR(S)|DAY(S) or ON CHANGE after " + after);
        }
        Token amount = peek();
        if (amount.kind() != Token.Kind.NUMBER) {
            throw expected("a number after EVERY");
        }
        next();
        Token unit = peek();
        if (unit.kind() != Token.Kind.WORD) {
            throw expected("a time unit MINUTE(S), HOUR(S) or DAY(S) after EVERY " + amount.text());
        }
        next();
        try {
            return Schedule.parse(first.text() + " " + amount.text() + " " + unit.text());
        } catch (IllegalArgumentException e) {
            // Point at whichever of the two tokens is wrong; the unit is fine if it works with a valid amount.
            Token culprit = parses("EVERY 1 " + unit.text()) ? amount : unit;
            throw errorAt(culprit, lowerFirst(e.getMessage()), e);
        }
    }

    /** {@code AUTO | INCREMENTAL | FULL}. */
    RefreshPolicy expectRefreshPolicy(String after) {
        Token token = peek();
        if (token.kind() == Token.Kind.WORD) {
            for (RefreshPolicy policy : RefreshPolicy.values()) {
                if (token.isWord(policy.name())) {
                    next();
                    return policy;
                }
            }
        }
        throw expected("AUTO, INCREMENTAL or FULL after " + after);
    }

    private static boolean parses(String schedule) {
        try {
            Schedule.parse(schedule);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String lowerFirst(String message) {
        return message.isEmpty() ? message : Character.toLowerCase(message.charAt(0)) + message.substring(1);
    }
}
