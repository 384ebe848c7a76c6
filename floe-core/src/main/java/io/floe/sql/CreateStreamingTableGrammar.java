package io.floe.sql;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The grammar of {@code CREATE [OR REFRESH] STREAMING TABLE}, after its leading keywords. Two kinds of streaming
 * table share it:
 * <ul>
 *   <li>over files: {@code AS SELECT * FROM STREAM read_files(...)} (or {@code STREAM(read_files(...))}); such a
 *       table keeps every raw record, so transformations belong in the materialized views that read it;
 *   <li>over tables: {@code [(column type, ...)] ... [AS query]}, the query reading one table with
 *       {@code STREAM(source)} or {@code STREAM source}; without {@code AS} the table is a target for flows. The
 *       query is cut out of the original text, not parsed: it is in the engine's dialect.
 * </ul>
 */
final class CreateStreamingTableGrammar {

    static final String STATEMENT = "CREATE STREAMING TABLE";

    private CreateStreamingTableGrammar() {
    }

    static FloeStatement parse(ParseCursor cursor, Token firstToken, boolean orRefresh) {
        boolean ifNotExists = false;
        if (cursor.atKeyword("IF") && cursor.peek(1).isWord("NOT")) {
            cursor.next();
            cursor.next();
            cursor.expectKeyword("EXISTS", "IF NOT");
            ifNotExists = true;
        }
        QualifiedName name = cursor.expectQualifiedName("a table name after " + STATEMENT);
        Token columnsStart = cursor.peek();
        List<TypedColumn> columns = cursor.atSymbol('(') ? columns(cursor) : List.of();
        Optional<String> comment = Optional.empty();
        Map<String, String> properties = Map.of();
        while (!cursor.atKeyword("AS") && !cursor.peek().endsStatement()) {
            if (comment.isEmpty() && cursor.acceptKeyword("COMMENT")) {
                comment = Optional.of(cursor.expectString("a string literal after COMMENT"));
            } else if (properties.isEmpty() && cursor.acceptKeyword("TBLPROPERTIES")) {
                properties = cursor.expectPropertyList("TBLPROPERTIES");
            } else {
                throw cursor.expected("COMMENT, TBLPROPERTIES, AS or end of statement");
            }
        }
        if (!cursor.acceptKeyword("AS")) {
            Token last = cursor.tokenAt(cursor.mark() - 1);
            cursor.expectEndOfStatement(null);
            return new CreateTableFedStreamingTable(name, orRefresh, ifNotExists, columns, comment, properties,
                    Optional.empty(), cursor.text(firstToken, last));
        }
        if (readsFiles(cursor)) {
            if (!columns.isEmpty()) {
                throw cursor.errorAt(columnsStart, "a streaming table over files takes its columns from the files; "
                        + "remove the column list");
            }
            return new CreateStreamingTable(name, orRefresh, ifNotExists, comment, properties, fileSource(cursor));
        }
        String query = cursor.expectRestOfStatement("a query after AS");
        Token last = cursor.tokenAt(cursor.mark() - 1);
        if (last.isSymbol(';')) {
            last = cursor.tokenAt(cursor.mark() - 2);
        }
        return new CreateTableFedStreamingTable(name, orRefresh, ifNotExists, columns, comment, properties,
                Optional.of(query), cursor.text(firstToken, last));
    }

    /** Whether the query after AS calls read_files anywhere: then it must be the one form that loads files. */
    private static boolean readsFiles(ParseCursor cursor) {
        for (int ahead = 0; !cursor.peek(ahead).endsStatement(); ahead++) {
            if (cursor.peek(ahead).isWord("READ_FILES") && cursor.peek(ahead + 1).isSymbol('(')) {
                return true;
            }
        }
        return false;
    }

    /** {@code SELECT * FROM STREAM [(] read_files(...) [)]}. */
    private static FileSource fileSource(ParseCursor cursor) {
        cursor.expectKeyword("SELECT", "AS");
        if (!cursor.acceptSymbol('*')) {
            throw cursor.expected("'*' after SELECT (a streaming table keeps every raw column; transform in a "
                    + "materialized view that reads it)");
        }
        cursor.expectKeyword("FROM", "SELECT *");
        cursor.expectKeyword("STREAM", "FROM");
        boolean parenthesized = cursor.acceptSymbol('(');
        FileSource source = readFiles(cursor);
        if (parenthesized) {
            cursor.expectSymbol(')', "to close STREAM(");
        }
        cursor.expectEndOfStatement(null);
        return source;
    }

    /**
     * {@code '(' name type [COMMENT 'text'] (',' ...)* ')'}; a type runs to the next top-level comma, closing
     * parenthesis or COMMENT, so {@code DECIMAL(10, 2)} and {@code STRUCT<a: INT, b: STRING>} stay whole.
     */
    private static List<TypedColumn> columns(ParseCursor cursor) {
        Token open = cursor.next();
        List<TypedColumn> columns = new ArrayList<>();
        Map<String, Token> seen = new HashMap<>();
        do {
            Token nameToken = cursor.peek();
            if (nameToken.isWord("CONSTRAINT")) {
                throw cursor.errorAt(nameToken, "expectations (CONSTRAINT ... EXPECT) on a streaming table are not "
                        + "supported; declare them on a materialized view that reads it");
            }
            String name = cursor.expectIdentifier("a column name");
            Token previous = seen.put(name.toLowerCase(Locale.ROOT), nameToken);
            if (previous != null) {
                throw cursor.errorAt(nameToken, "duplicate column " + name + " (first declared at "
                        + cursor.position(previous) + ")");
            }
            Token typeStart = cursor.peek();
            Token typeEnd = null;
            int depth = 0;
            while (true) {
                Token token = cursor.peek();
                if (token.kind() == Token.Kind.END || token.kind() == Token.Kind.ERROR || token.isSymbol(';')) {
                    throw cursor.expected("')' to close the column list opened at " + cursor.position(open));
                }
                if (depth == 0 && (token.isSymbol(',') || token.isSymbol(')') || token.isWord("COMMENT"))) {
                    break;
                }
                if (token.isSymbol('(') || token.isSymbol('<')) {
                    depth++;
                } else if (token.isSymbol(')') || token.isSymbol('>')) {
                    depth--;
                }
                typeEnd = cursor.next();
            }
            if (typeEnd == null) {
                throw cursor.expected("a type after column " + name);
            }
            Optional<String> comment = Optional.empty();
            if (cursor.acceptKeyword("COMMENT")) {
                comment = Optional.of(cursor.expectString("a string literal after COMMENT"));
            }
            columns.add(new TypedColumn(name, cursor.text(typeStart, typeEnd), comment));
        } while (cursor.acceptSymbol(','));
        cursor.expectSymbol(')', "or ',' after a column");
        return columns;
    }

    private static FileSource readFiles(ParseCursor cursor) {
        if (!cursor.atKeyword("READ_FILES")) {
            throw cursor.expected("read_files('path', format => 'json') after STREAM");
        }
        cursor.next();
        cursor.expectSymbol('(', "after read_files");
        String path = cursor.expectString("the folder path, a string literal, as the first argument of read_files");
        Map<String, String> options = new LinkedHashMap<>();
        String format = null;
        while (cursor.acceptSymbol(',')) {
            String key = cursor.expectIdentifier("an option name in read_files");
            cursor.expectSymbol('=', "and '>' after option " + key);
            cursor.expectSymbol('>', "after '=' of option " + key);
            Token valueToken = cursor.peek();
            String value;
            if (valueToken.kind() == Token.Kind.STRING) {
                value = cursor.expectString("a value for option " + key);
            } else if (valueToken.kind() == Token.Kind.NUMBER || valueToken.isWord("TRUE") || valueToken.isWord("FALSE")) {
                value = cursor.next().text();
            } else {
                throw cursor.expected("a string, number or boolean value for option " + key);
            }
            if (key.equalsIgnoreCase("format")) {
                format = value.toLowerCase(Locale.ROOT);
                if (!FileSource.FORMATS.contains(format)) {
                    throw cursor.errorAt(valueToken, "unsupported format '" + value + "'; read_files reads json, csv "
                            + "or parquet");
                }
            } else {
                options.put(key, value);
            }
        }
        cursor.expectSymbol(')', "or ',' after a read_files argument");
        return new FileSource(path, format == null ? FileSource.formatOfName(path) : Optional.of(format), options);
    }
}
