package io.floe.sql;

import java.util.Objects;

/** {@code REFRESH STREAMING TABLE name}: loads the files that arrived since the last run. */
public record RefreshStreamingTable(QualifiedName name) implements FloeStatement {

    public RefreshStreamingTable {
        Objects.requireNonNull(name, "name");
    }
}
