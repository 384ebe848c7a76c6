package io.floe.sql;

import java.util.Optional;

/**
 * The grammar of {@code CREATE FLOW name [COMMENT 'text'] AS INSERT INTO [TABLE] target [BY NAME] query}, after
 * {@code CREATE FLOW}. The query is cut out of the original text, not parsed: it is in the engine's dialect.
 */
final class CreateFlowGrammar {

    static final String STATEMENT = "CREATE FLOW";

    private CreateFlowGrammar() {
    }

    static CreateFlow parse(ParseCursor cursor, Token firstToken) {
        String name = cursor.expectIdentifier("a flow name after " + STATEMENT);
        if (cursor.atSymbol('.')) {
            throw cursor.expected("COMMENT or AS after the flow name (a flow's name has one part; it lives with its "
                    + "target)");
        }
        Optional<String> comment = Optional.empty();
        if (cursor.acceptKeyword("COMMENT")) {
            comment = Optional.of(cursor.expectString("a string literal after COMMENT"));
        }
        if (!cursor.atKeyword("AS")) {
            throw cursor.expected(comment.isPresent() ? "AS" : "COMMENT or AS");
        }
        cursor.next();
        if (!cursor.acceptKeywords("INSERT", "INTO")) {
            throw cursor.expected("INSERT INTO target after AS (a flow appends to a streaming table)");
        }
        cursor.acceptKeyword("TABLE");
        // INSERT INTO ONCE target (a once flow), not a table named once followed by its query.
        Token afterOnce = cursor.peek(1);
        if (cursor.atKeyword("ONCE") && afterOnce.isIdentifier() && !afterOnce.isWord("BY")
                && !afterOnce.isWord("SELECT") && !afterOnce.isWord("WITH") && !afterOnce.isWord("FROM")
                && !afterOnce.isWord("VALUES") && !afterOnce.isWord("TABLE")) {
            throw cursor.errorAt(cursor.peek(), "once flows (INSERT INTO ONCE) are not supported: a flow appends its"
                + " source's new rows at every refresh; for a one-time backfill, append the rows to a table a flow"
                + " streams");
        }
        QualifiedName target = cursor.expectQualifiedName("the target streaming table after INSERT INTO");
        boolean byName = cursor.acceptKeywords("BY", "NAME");
        if (cursor.atSymbol('(') && cursor.peek(1).isIdentifier() && !cursor.peek(1).isWord("SELECT")
                && !cursor.peek(1).isWord("WITH") && !cursor.peek(1).isWord("FROM")) {
            throw cursor.expected("BY NAME or a query after the target (a column list is not supported; use BY NAME)");
        }
        String query = cursor.expectRestOfStatement("a query after INSERT INTO " + target);
        int end = cursor.mark() - 1;
        Token last = cursor.tokenAt(end).isSymbol(';') ? cursor.tokenAt(end - 1) : cursor.tokenAt(end);
        return new CreateFlow(name, comment, target, byName, query, cursor.text(firstToken, last));
    }
}
