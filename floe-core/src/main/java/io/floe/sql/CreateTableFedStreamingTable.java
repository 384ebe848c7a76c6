package io.floe.sql;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code CREATE [OR REFRESH] STREAMING TABLE [IF NOT EXISTS] name [(column type, ...)] [COMMENT 'text']
 * [TBLPROPERTIES (...)] [AS query]}, where the query reads one Iceberg table with {@code STREAM(source)}: a table
 * that appends the rows its query computes over the source's newly appended rows, each exactly once. Without
 * {@code AS} the table is a target that {@link CreateFlow flows} append to.
 *
 * @param name the table's name as written
 * @param orRefresh {@code OR REFRESH}: when the table exists, refresh it (taking a changed query) instead of failing
 * @param ifNotExists {@code IF NOT EXISTS}
 * @param columns the explicit column list; empty when the columns come from the query or the flows
 * @param comment the {@code COMMENT} text
 * @param tableProperties the {@code TBLPROPERTIES}, in the order written
 * @param query the query after {@code AS} exactly as written, without a trailing {@code ;}; empty for a flow
 *     target
 * @param originalText the whole statement as written, without the {@code ;}
 */
public record CreateTableFedStreamingTable(
        QualifiedName name,
        boolean orRefresh,
        boolean ifNotExists,
        List<TypedColumn> columns,
        Optional<String> comment,
        Map<String, String> tableProperties,
        Optional<String> query,
        String originalText) implements FloeStatement {

    public CreateTableFedStreamingTable {
        Objects.requireNonNull(name, "name");
        columns = List.copyOf(columns);
        Objects.requireNonNull(comment, "comment");
        tableProperties = Collections.unmodifiableMap(new LinkedHashMap<>(tableProperties));
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(originalText, "originalText");
    }
}
