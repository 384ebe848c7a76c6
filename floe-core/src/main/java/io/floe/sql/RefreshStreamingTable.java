package io.floe.sql;

import java.util.Objects;

/**
 * {@code REFRESH STREAMING TABLE name [FULL]}: loads what arrived since the last run (new files, or the rows
 * newly appended to the tables its flows stream). {@code FULL} replaces the rows of a streaming table fed by
 * tables with its flows' results over all of their sources' rows.
 */
public record RefreshStreamingTable(QualifiedName name, boolean full) implements FloeStatement {

    public RefreshStreamingTable {
        Objects.requireNonNull(name, "name");
    }

    /** An incremental refresh. */
    public RefreshStreamingTable(QualifiedName name) {
        this(name, false);
    }
}
