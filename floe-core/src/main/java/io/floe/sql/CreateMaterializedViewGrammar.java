package io.floe.sql;

import io.floe.mv.OnViolation;
import io.floe.mv.RefreshPolicy;
import io.floe.schedule.Schedule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The body of {@code CREATE [OR REPLACE] [MANAGED] MATERIALIZED VIEW}, from just after {@code VIEW}:
 * {@code [IF NOT EXISTS] name [(element, ...)] clause* AS query [WITH [NO] DATA]}.
 *
 * <p>The query itself is not parsed, only cut out of the original text: it is in the engine's dialect and the
 * engine will parse it.
 */
final class CreateMaterializedViewGrammar {

    static final String STATEMENT = "CREATE MATERIALIZED VIEW";

    private static final String CLAUSES = "COMMENT, PARTITIONED BY, TBLPROPERTIES, SCHEDULE REFRESH, REFRESH POLICY";

    private final ParseCursor cursor;
    private final Token firstToken;
    private final boolean orReplace;
    private final boolean managed;

    private final List<ColumnSpec> columns = new ArrayList<>();
    private final List<Expectation> expectations = new ArrayList<>();
    private final Map<String, Token> seenClauses = new HashMap<>();
    private Optional<String> comment = Optional.empty();
    private List<String> partitionedBy = List.of();
    private Map<String, String> tableProperties = Map.of();
    private Optional<Schedule> schedule = Optional.empty();
    private Optional<RefreshPolicy> refreshPolicy = Optional.empty();

    private CreateMaterializedViewGrammar(ParseCursor cursor, Token firstToken, boolean orReplace, boolean managed) {
        this.cursor = cursor;
        this.firstToken = firstToken;
        this.orReplace = orReplace;
        this.managed = managed;
    }

    /**
     * Parses the rest of the statement.
     *
     * @param cursor positioned just after {@code MATERIALIZED VIEW}
     * @param firstToken the statement's {@code CREATE} token, where its original text starts
     */
    static CreateMaterializedView parse(ParseCursor cursor, Token firstToken, boolean orReplace, boolean managed) {
        return new CreateMaterializedViewGrammar(cursor, firstToken, orReplace, managed).parse();
    }

    private CreateMaterializedView parse() {
        boolean ifNotExists = false;
        // IF is only a keyword here when NOT follows, so a view may still be called `if`.
        if (cursor.atKeyword("IF") && cursor.peek(1).isWord("NOT")) {
            Token ifToken = cursor.next();
            cursor.next();
            cursor.expectKeyword("EXISTS", "IF NOT");
            if (orReplace) {
                throw cursor.errorAt(ifToken, "OR REPLACE and IF NOT EXISTS cannot be used together");
            }
            ifNotExists = true;
        }
        String expectedName = "a materialized view name after " + STATEMENT;
        // A forgotten name would otherwise make AS the name and report the query's first word instead.
        if (cursor.atKeyword("AS") && !cursor.peek(1).isWord("AS") && !cursor.peek(1).isSymbol('.')) {
            throw cursor.expected(expectedName);
        }
        QualifiedName name = cursor.expectQualifiedName(expectedName);
        if (cursor.atSymbol('(')) {
            elements();
        }
        while (!cursor.atKeyword("AS")) {
            clause();
        }
        cursor.next();
        return query(name, ifNotExists);
    }

    // ---- element list: columns and expectations ----

    private void elements() {
        cursor.next();
        Map<String, Token> names = new HashMap<>();
        do {
            Token start = cursor.peek();
            String elementName;
            if (start.isWord("CONSTRAINT") && cursor.peek(1).isIdentifier() && !cursor.peek(1).isWord("COMMENT")) {
                Expectation expectation = expectation();
                expectations.add(expectation);
                elementName = "constraint " + expectation.name();
            } else {
                ColumnSpec column = column();
                columns.add(column);
                elementName = "column " + column.name();
            }
            Token previous = names.put(elementName.toLowerCase(Locale.ROOT), start);
            if (previous != null) {
                throw cursor.errorAt(start, "duplicate " + elementName + " (first declared at "
                        + cursor.position(previous) + ")");
            }
        } while (cursor.acceptSymbol(','));
        cursor.expectSymbol(')', "or ',' after a column or constraint");
    }

    private ColumnSpec column() {
        String name = cursor.expectIdentifier("a column name or CONSTRAINT");
        Optional<String> columnComment = Optional.empty();
        if (cursor.acceptKeyword("COMMENT")) {
            columnComment = Optional.of(cursor.expectString("a string literal after COMMENT"));
        }
        if (!cursor.atSymbol(',') && !cursor.atSymbol(')')) {
            throw cursor.expected(columnComment.isPresent()
                    ? "',' or ')' after the comment of column '" + name + "'"
                    : "COMMENT, ',' or ')' after column '" + name + "'");
        }
        return new ColumnSpec(name, columnComment);
    }

    private Expectation expectation() {
        cursor.next();
        String name = cursor.expectIdentifier("a constraint name after CONSTRAINT");
        cursor.expectKeyword("EXPECT", "CONSTRAINT " + name);
        Token open = cursor.expectSymbol('(', "after EXPECT");
        int contentStart = cursor.mark();
        int depth = 1;
        while (true) {
            Token token = cursor.peek();
            if (token.kind() == Token.Kind.END || token.kind() == Token.Kind.ERROR || token.isSymbol(';')) {
                throw cursor.expected("')' to close the EXPECT condition opened at " + cursor.position(open));
            }
            cursor.next();
            if (token.isSymbol('(')) {
                depth++;
            } else if (token.isSymbol(')') && --depth == 0) {
                break;
            }
        }
        int contentEnd = cursor.mark() - 1;
        if (contentEnd == contentStart) {
            throw cursor.expected(cursor.tokenAt(contentEnd), "a boolean condition inside EXPECT ( )");
        }
        String expression = text(cursor.tokenAt(contentStart), cursor.tokenAt(contentEnd - 1));

        OnViolation onViolation = OnViolation.KEEP;
        if (cursor.acceptKeyword("ON")) {
            cursor.expectKeyword("VIOLATION", "ON");
            if (cursor.acceptKeywords("DROP", "ROW")) {
                onViolation = OnViolation.DROP_ROW;
            } else if (cursor.acceptKeywords("FAIL", "UPDATE")) {
                onViolation = OnViolation.FAIL_UPDATE;
            } else {
                throw cursor.expected("DROP ROW or FAIL UPDATE after ON VIOLATION");
            }
        }
        return new Expectation(name, expression, onViolation);
    }

    // ---- clauses between the name and AS ----

    private void clause() {
        Token start = cursor.peek();
        if (start.isWord("COMMENT")) {
            once("COMMENT");
            comment = Optional.of(cursor.expectString("a string literal after COMMENT"));
        } else if (start.isWord("PARTITIONED")) {
            once("PARTITIONED BY");
            cursor.expectKeyword("BY", "PARTITIONED");
            partitionedBy = partitionItems();
        } else if (start.isWord("TBLPROPERTIES")) {
            once("TBLPROPERTIES");
            tableProperties = cursor.expectPropertyList("TBLPROPERTIES");
        } else if (start.isWord("SCHEDULE")) {
            once("SCHEDULE");
            // REFRESH is optional in Databricks' syntax, which users copy.
            schedule = Optional.of(cursor.expectSchedule(cursor.acceptKeyword("REFRESH")
                    ? "SCHEDULE REFRESH" : "SCHEDULE"));
        } else if (start.isWord("REFRESH")) {
            once("REFRESH POLICY");
            cursor.expectKeyword("POLICY", "REFRESH");
            refreshPolicy = Optional.of(cursor.expectRefreshPolicy("REFRESH POLICY"));
        } else if (start.isSymbol('(')) {
            throw cursor.errorAt(start,
                    "the column list must come right after the view name, before " + CLAUSES + " and AS");
        } else {
            throw cursor.expected(CLAUSES + " or AS");
        }
    }

    private void once(String clause) {
        Token start = cursor.next();
        Token previous = seenClauses.putIfAbsent(clause, start);
        if (previous != null) {
            throw cursor.errorAt(start, "duplicate " + clause + " clause (first given at "
                    + cursor.position(previous) + ")");
        }
    }

    /** Items split on top-level commas, each kept as written so transforms like {@code bucket(16, id)} survive. */
    private List<String> partitionItems() {
        Token open = cursor.expectSymbol('(', "after PARTITIONED BY");
        List<String> items = new ArrayList<>();
        int depth = 0;
        Token itemStart = null;
        Token itemEnd = null;
        while (true) {
            Token token = cursor.peek();
            if (token.kind() == Token.Kind.END || token.kind() == Token.Kind.ERROR || token.isSymbol(';')) {
                throw cursor.expected("')' to close the PARTITIONED BY list opened at " + cursor.position(open));
            }
            boolean closesList = depth == 0 && token.isSymbol(')');
            if (closesList || (depth == 0 && token.isSymbol(','))) {
                if (itemStart == null) {
                    throw cursor.expected("a partition column or transform");
                }
                items.add(text(itemStart, itemEnd));
                itemStart = null;
                cursor.next();
                if (closesList) {
                    return items;
                }
                continue;
            }
            if (token.isSymbol('(')) {
                depth++;
            } else if (token.isSymbol(')')) {
                depth--;
            }
            if (itemStart == null) {
                itemStart = token;
            }
            itemEnd = cursor.next();
        }
    }

    // ---- AS query [WITH [NO] DATA] ----

    private CreateMaterializedView query(QualifiedName name, boolean ifNotExists) {
        int queryStart = cursor.mark();
        while (!cursor.peek().endsStatement()) {
            if (cursor.peek().kind() == Token.Kind.ERROR) {
                throw cursor.expected("the rest of the query");
            }
            cursor.next();
        }
        int queryEnd = cursor.mark();
        Token lastToken = cursor.tokenAt(queryEnd - 1);
        cursor.expectEndOfStatement(null);

        // WITH also starts a CTE, so it only means WITH [NO] DATA as the statement's very last tokens.
        boolean withData = true;
        if (queryEnd - queryStart >= 2 && cursor.tokenAt(queryEnd - 1).isWord("DATA")) {
            if (cursor.tokenAt(queryEnd - 2).isWord("WITH")) {
                queryEnd -= 2;
            } else if (queryEnd - queryStart >= 3 && cursor.tokenAt(queryEnd - 2).isWord("NO")
                    && cursor.tokenAt(queryEnd - 3).isWord("WITH")) {
                queryEnd -= 3;
                withData = false;
            }
        }
        if (queryEnd == queryStart) {
            throw cursor.expected(cursor.tokenAt(queryStart), "a query after AS");
        }
        String query = text(cursor.tokenAt(queryStart), cursor.tokenAt(queryEnd - 1));
        String originalText = text(firstToken, lastToken);
        return new CreateMaterializedView(name, orReplace, ifNotExists, managed, columns, expectations, comment,
                partitionedBy, tableProperties, schedule, refreshPolicy, withData, query, originalText);
    }

    /**
     * The source from the start of {@code first} to the end of {@code last}. Cutting at tokens rather than trimming
     * whitespace matters: a trailing {@code --} comment kept in a query or condition would swallow whatever a caller
     * appends when it embeds the text in a larger statement.
     */
    private String text(Token first, Token last) {
        return cursor.sql().substring(first.start(), last.end());
    }
}
