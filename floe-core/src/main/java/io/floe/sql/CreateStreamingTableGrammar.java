package io.floe.sql;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The grammar of {@code CREATE [OR REFRESH] STREAMING TABLE}, after its leading keywords. The query must be
 * {@code SELECT * FROM STREAM read_files(...)} (or {@code STREAM(read_files(...))}): a streaming table keeps every
 * raw record, so transformations belong in the materialized views that read it.
 */
final class CreateStreamingTableGrammar {

    static final String STATEMENT = "CREATE STREAMING TABLE";

    private CreateStreamingTableGrammar() {
    }

    static CreateStreamingTable parse(ParseCursor cursor, boolean orRefresh) {
        boolean ifNotExists = false;
        if (cursor.acceptKeyword("IF")) {
            cursor.expectKeyword("NOT", "IF");
            cursor.expectKeyword("EXISTS", "IF NOT");
            ifNotExists = true;
        }
        QualifiedName name = cursor.expectQualifiedName("a table name after " + STATEMENT);
        Optional<String> comment = Optional.empty();
        Map<String, String> properties = Map.of();
        while (!cursor.atKeyword("AS")) {
            if (comment.isEmpty() && cursor.acceptKeyword("COMMENT")) {
                comment = Optional.of(cursor.expectString("a string literal after COMMENT"));
            } else if (properties.isEmpty() && cursor.acceptKeyword("TBLPROPERTIES")) {
                properties = cursor.expectPropertyList("TBLPROPERTIES");
            } else {
                throw cursor.expected("COMMENT, TBLPROPERTIES or AS");
            }
        }
        cursor.next();
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
        return new CreateStreamingTable(name, orRefresh, ifNotExists, comment, properties, source);
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
        if (format == null) {
            format = inferFormat(path);
        }
        return new FileSource(path, format, options);
    }

    /** The format a path's extension names, for {@code read_files('orders.csv')}; JSON lines otherwise. */
    private static String inferFormat(String path) {
        String lower = path.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".csv")) {
            return "csv";
        }
        if (lower.endsWith(".parquet")) {
            return "parquet";
        }
        return "json";
    }
}
