package io.floe.sql;

import java.util.Objects;
import java.util.Optional;

/**
 * {@code SHOW MATERIALIZED VIEWS [FROM|IN namespace] [[LIKE] 'pattern']}.
 *
 * @param namespace where to list; empty for the current namespace
 * @param likePattern a Spark {@code SHOW TABLES}-style pattern ({@code *} any characters, {@code |} alternatives)
 */
public record ShowMaterializedViews(Optional<QualifiedName> namespace, Optional<String> likePattern)
        implements FloeStatement {

    public ShowMaterializedViews {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(likePattern, "likePattern");
    }
}
