package io.floe.sql;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Recognizes the SQL statements Floe executes itself and parses them; every other statement is left to the
 * engine's own parser.
 *
 * <p>A statement is Floe's when its leading keywords say so:
 * {@code CREATE [OR REPLACE] [MANAGED] MATERIALIZED VIEW}, {@code REFRESH MATERIALIZED VIEW},
 * {@code CREATE [OR REFRESH] STREAMING TABLE}, {@code CREATE FLOW}, {@code REFRESH STREAMING TABLE},
 * {@code DROP MATERIALIZED VIEW}, {@code ALTER MATERIALIZED VIEW}, {@code SHOW MATERIALIZED VIEWS},
 * {@code SHOW TBLPROPERTIES}, {@code SHOW REFRESHES}, {@code DROP TABLE},
 * {@code EXPLAIN REFRESH MATERIALIZED VIEW}, and {@code DESC[RIBE] [TABLE] [EXTENDED|FORMATTED] name} when
 * nothing follows the name. Keywords are case-insensitive; whitespace and comments may appear between tokens;
 * one trailing {@code ;} is allowed.
 *
 * <p>This class is stateless and thread-safe.
 */
public final class FloeStatementParser {

    /** DESCRIBE forms whose second word is not a relation name; Spark handles them. */
    private static final Set<String> DESCRIBE_OTHER_OBJECTS =
            Set.of("QUERY", "FUNCTION", "DATABASE", "SCHEMA", "NAMESPACE", "CATALOG");

    private FloeStatementParser() {
    }

    /**
     * Parses one statement.
     *
     * @param sql a single statement, optionally ending with {@code ;}; use {@link SqlScript#split} for scripts
     * @return the statement if it is one of Floe's, or empty if the engine should handle it
     * @throws FloeParseException if the statement is Floe's by its leading keywords but the rest is malformed
     */
    public static Optional<FloeStatement> parse(String sql) {
        Objects.requireNonNull(sql, "sql");
        ParseCursor cursor = new ParseCursor(sql, SqlLexer.tokenize(sql));
        Token first = cursor.peek();
        if (first.kind() != Token.Kind.WORD) {
            return Optional.empty();
        }
        return Optional.ofNullable(switch (first.upperText()) {
            case "CREATE" -> create(cursor);
            case "REFRESH" -> refresh(cursor);
            case "DROP" -> drop(cursor);
            case "ALTER" -> alter(cursor);
            case "SHOW" -> show(cursor);
            case "DESC", "DESCRIBE" -> describe(cursor);
            case "EXPLAIN" -> explain(cursor);
            default -> null;
        });
    }

    private static FloeStatement create(ParseCursor cursor) {
        Token first = cursor.next();
        if (cursor.atKeyword("STREAMING") || cursor.peek(2).isWord("STREAMING")) {
            boolean orRefresh = cursor.acceptKeywords("OR", "REFRESH");
            if (!cursor.acceptKeywords("STREAMING", "TABLE")) {
                return null;
            }
            cursor.statement(CreateStreamingTableGrammar.STATEMENT);
            return CreateStreamingTableGrammar.parse(cursor, first, orRefresh);
        }
        if (cursor.acceptKeyword("FLOW")) {
            cursor.statement(CreateFlowGrammar.STATEMENT);
            return CreateFlowGrammar.parse(cursor, first);
        }
        boolean orReplace = cursor.acceptKeywords("OR", "REPLACE");
        boolean managed = cursor.acceptKeyword("MANAGED");
        if (!cursor.acceptKeywords("MATERIALIZED", "VIEW")) {
            return null;
        }
        cursor.statement(CreateMaterializedViewGrammar.STATEMENT);
        return CreateMaterializedViewGrammar.parse(cursor, first, orReplace, managed);
    }

    private static FloeStatement refresh(ParseCursor cursor) {
        if (cursor.acceptKeywords("REFRESH", "STREAMING", "TABLE")) {
            cursor.statement("REFRESH STREAMING TABLE");
            QualifiedName name = cursor.expectQualifiedName("a streaming table name after REFRESH STREAMING TABLE");
            boolean full = cursor.acceptKeyword("FULL");
            cursor.expectEndOfStatement(full ? null : "FULL");
            return new RefreshStreamingTable(name, full);
        }
        if (!cursor.acceptKeywords("REFRESH", "MATERIALIZED", "VIEW")) {
            return null;
        }
        cursor.statement("REFRESH MATERIALIZED VIEW");
        QualifiedName name = cursor.expectQualifiedName("a materialized view name after REFRESH MATERIALIZED VIEW");
        boolean full = false;
        boolean cascade = false;
        while (!cursor.peek().endsStatement()) {
            Token option = cursor.peek();
            if (option.isWord("FULL") && !full) {
                full = true;
            } else if (option.isWord("CASCADE") && !cascade) {
                cascade = true;
            } else if (option.isWord("FULL") || option.isWord("CASCADE")) {
                throw cursor.errorAt(option, option.upperText() + " is given twice");
            } else {
                break;
            }
            cursor.next();
        }
        cursor.expectEndOfStatement(full && cascade ? null
                : full ? "CASCADE" : cascade ? "FULL" : "FULL, CASCADE");
        return new RefreshMaterializedView(name, full, cascade);
    }

    private static FloeStatement drop(ParseCursor cursor) {
        if (cursor.acceptKeywords("DROP", "MATERIALIZED", "VIEW")) {
            cursor.statement("DROP MATERIALIZED VIEW");
            boolean ifExists = acceptIfExists(cursor);
            QualifiedName name = cursor.expectQualifiedName("a materialized view name after DROP MATERIALIZED VIEW");
            boolean cascade = cursor.acceptKeyword("CASCADE");
            cursor.expectEndOfStatement(cascade ? null : "CASCADE");
            return new DropMaterializedView(name, ifExists, cascade);
        }
        if (cursor.acceptKeywords("DROP", "TABLE")) {
            cursor.statement("DROP TABLE");
            boolean ifExists = acceptIfExists(cursor);
            QualifiedName name = cursor.expectQualifiedName("a table name after DROP TABLE");
            boolean purge = false;
            boolean cascade = false;
            while (!cursor.peek().endsStatement()) {
                Token option = cursor.peek();
                if (option.isWord("PURGE") && !purge) {
                    purge = true;
                } else if (option.isWord("CASCADE") && !cascade) {
                    cascade = true;
                } else if (option.isWord("PURGE") || option.isWord("CASCADE")) {
                    throw cursor.errorAt(option, option.upperText() + " is given twice");
                } else {
                    break;
                }
                cursor.next();
            }
            cursor.expectEndOfStatement(purge && cascade ? null
                    : purge ? "CASCADE" : cascade ? "PURGE" : "PURGE, CASCADE");
            return new DropTable(name, ifExists, purge, cascade);
        }
        return null;
    }

    private static FloeStatement alter(ParseCursor cursor) {
        if (!cursor.acceptKeywords("ALTER", "MATERIALIZED", "VIEW")) {
            return null;
        }
        cursor.statement("ALTER MATERIALIZED VIEW");
        QualifiedName name = cursor.expectQualifiedName("a materialized view name after ALTER MATERIALIZED VIEW");
        AlterAction action;
        Token verb = cursor.peek();
        if (verb.isWord("ADD") || verb.isWord("ALTER")) {
            cursor.next();
            String after = verb.upperText() + " SCHEDULE";
            cursor.expectKeyword("SCHEDULE", verb.upperText());
            if (cursor.acceptKeyword("REFRESH")) {
                after += " REFRESH";
            }
            action = new AlterAction.SetSchedule(cursor.expectSchedule(after));
        } else if (cursor.acceptKeyword("DROP")) {
            cursor.expectKeyword("SCHEDULE", "DROP");
            action = new AlterAction.DropSchedule();
        } else if (cursor.acceptKeyword("SET")) {
            if (cursor.acceptKeyword("REFRESH")) {
                cursor.expectKeyword("POLICY", "SET REFRESH");
                action = new AlterAction.SetRefreshPolicy(cursor.expectRefreshPolicy("SET REFRESH POLICY"));
            } else if (cursor.acceptKeyword("TBLPROPERTIES")) {
                action = new AlterAction.SetProperties(cursor.expectPropertyList("SET TBLPROPERTIES"));
            } else {
                throw cursor.expected("REFRESH POLICY or TBLPROPERTIES after SET");
            }
        } else if (cursor.acceptKeyword("REFRESH")) {
            cursor.expectKeyword("POLICY", "REFRESH");
            action = new AlterAction.SetRefreshPolicy(cursor.expectRefreshPolicy("REFRESH POLICY"));
        } else if (cursor.acceptKeyword("UNSET")) {
            cursor.expectKeyword("TBLPROPERTIES", "UNSET");
            boolean ifExists = acceptIfExists(cursor);
            action = new AlterAction.UnsetProperties(cursor.expectPropertyKeyList("UNSET TBLPROPERTIES"), ifExists);
        } else {
            throw cursor.expected("ADD SCHEDULE, ALTER SCHEDULE, DROP SCHEDULE, SET REFRESH POLICY, "
                    + "SET TBLPROPERTIES or UNSET TBLPROPERTIES after the view name");
        }
        cursor.expectEndOfStatement(null);
        return new AlterMaterializedView(name, action);
    }

    private static FloeStatement show(ParseCursor cursor) {
        if (cursor.acceptKeywords("SHOW", "MATERIALIZED", "VIEWS")) {
            cursor.statement("SHOW MATERIALIZED VIEWS");
            Optional<QualifiedName> namespace = Optional.empty();
            if (cursor.acceptKeyword("FROM") || cursor.acceptKeyword("IN")) {
                namespace = Optional.of(cursor.expectQualifiedName("a namespace after FROM or IN"));
            }
            Optional<String> pattern = Optional.empty();
            if (cursor.acceptKeyword("LIKE")) {
                pattern = Optional.of(cursor.expectString("a quoted pattern after LIKE"));
            } else if (cursor.peek().kind() == Token.Kind.STRING) {
                pattern = Optional.of(cursor.expectString("a quoted pattern"));
            }
            cursor.expectEndOfStatement(pattern.isPresent() ? null
                    : namespace.isPresent() ? "LIKE 'pattern'" : "FROM namespace, IN namespace, LIKE 'pattern'");
            return new ShowMaterializedViews(namespace, pattern);
        }
        if (cursor.acceptKeywords("SHOW", "TBLPROPERTIES")) {
            cursor.statement("SHOW TBLPROPERTIES");
            QualifiedName name = cursor.expectQualifiedName("a table or view name after SHOW TBLPROPERTIES");
            Optional<String> key = Optional.empty();
            if (cursor.acceptSymbol('(')) {
                key = Optional.of(cursor.expectPropertyKey("a property key"));
                cursor.expectSymbol(')', "after the property key");
            }
            cursor.expectEndOfStatement(key.isPresent() ? null : "'(' property key ')'");
            return new ShowTableProperties(name, key);
        }
        if (cursor.acceptKeywords("SHOW", "REFRESHES")) {
            cursor.statement("SHOW REFRESHES");
            Optional<QualifiedName> view = Optional.empty();
            if (cursor.acceptKeyword("FOR")) {
                view = Optional.of(cursor.expectQualifiedName("a materialized view name after FOR"));
            }
            OptionalInt limit = OptionalInt.empty();
            if (cursor.acceptKeyword("LIMIT")) {
                Token amount = cursor.peek();
                long value = cursor.expectInteger("a whole number after LIMIT");
                if (value > Integer.MAX_VALUE) {
                    throw cursor.errorAt(amount, "LIMIT must be at most " + Integer.MAX_VALUE + " but was " + value);
                }
                limit = OptionalInt.of((int) value);
            }
            cursor.expectEndOfStatement(limit.isPresent() ? null : view.isPresent() ? "LIMIT" : "FOR, LIMIT");
            return new ShowRefreshes(view, limit);
        }
        return null;
    }

    /**
     * Only the plain "describe this relation" form is Floe's; anything the engine might mean by more words
     * (a column, a partition spec, AS JSON, DESCRIBE QUERY ...) is left to it, so this never throws.
     */
    private static FloeStatement describe(ParseCursor cursor) {
        cursor.next();
        if (cursor.peek().kind() == Token.Kind.WORD && DESCRIBE_OTHER_OBJECTS.contains(cursor.peek().upperText())) {
            return null;
        }
        // TABLE, EXTENDED and FORMATTED are modifiers only when a name follows them; otherwise they are the name.
        if (cursor.atKeyword("TABLE") && cursor.peek(1).isIdentifier()) {
            cursor.next();
        }
        boolean extended = false;
        if ((cursor.atKeyword("EXTENDED") || cursor.atKeyword("FORMATTED")) && cursor.peek(1).isIdentifier()) {
            cursor.next();
            extended = true;
        }
        QualifiedName name;
        try {
            name = cursor.expectQualifiedName("a name");
        } catch (FloeParseException notARelationName) {
            return null;
        }
        cursor.acceptSymbol(';');
        return cursor.peek().kind() == Token.Kind.END ? new DescribeRelation(name, extended) : null;
    }

    private static FloeStatement explain(ParseCursor cursor) {
        if (!cursor.acceptKeywords("EXPLAIN", "REFRESH", "MATERIALIZED", "VIEW")) {
            return null;
        }
        cursor.statement("EXPLAIN REFRESH");
        QualifiedName name = cursor.expectQualifiedName(
                "a materialized view name after EXPLAIN REFRESH MATERIALIZED VIEW");
        cursor.expectEndOfStatement(null);
        return new ExplainRefresh(name);
    }

    /** {@code IF EXISTS}; IF counts as the keyword only when EXISTS follows, so a table may be called {@code if}. */
    private static boolean acceptIfExists(ParseCursor cursor) {
        return cursor.acceptKeywords("IF", "EXISTS");
    }
}
