package io.floe.sql;

import java.util.Objects;
import java.util.Optional;

/**
 * A column of a materialized view's explicit column list: {@code name [COMMENT 'text']}.
 * The column list renames the query's output columns by position.
 */
public record ColumnSpec(String name, Optional<String> comment) {

    public ColumnSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(comment, "comment");
    }
}
