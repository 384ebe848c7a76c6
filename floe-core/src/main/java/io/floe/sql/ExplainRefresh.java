package io.floe.sql;

import java.util.Objects;

/** {@code EXPLAIN REFRESH MATERIALIZED VIEW name}: describe how the next refresh would be done, without doing it. */
public record ExplainRefresh(QualifiedName name) implements FloeStatement {

    public ExplainRefresh {
        Objects.requireNonNull(name, "name");
    }
}
