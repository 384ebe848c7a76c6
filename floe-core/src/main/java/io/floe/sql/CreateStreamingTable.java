package io.floe.sql;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code CREATE [OR REFRESH] STREAMING TABLE [IF NOT EXISTS] name [COMMENT 'text'] [TBLPROPERTIES (...)]
 * AS SELECT * FROM STREAM read_files('path', format => 'json')}: a Bronze table that loads each new file of a
 * folder exactly once.
 *
 * @param orRefresh {@code OR REFRESH}: when the table exists, load its new files instead of failing
 */
public record CreateStreamingTable(
        QualifiedName name,
        boolean orRefresh,
        boolean ifNotExists,
        Optional<String> comment,
        Map<String, String> tableProperties,
        FileSource source) implements FloeStatement {

    public CreateStreamingTable {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(comment, "comment");
        Objects.requireNonNull(source, "source");
        tableProperties = Map.copyOf(tableProperties);
    }
}
