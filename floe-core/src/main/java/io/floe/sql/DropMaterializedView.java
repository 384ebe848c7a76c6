package io.floe.sql;

import java.util.Objects;

/**
 * {@code DROP MATERIALIZED VIEW [IF EXISTS] name [CASCADE]}.
 *
 * @param ifExists do nothing, rather than fail, when the view does not exist
 * @param cascade also drop the materialized views that read from this one
 */
public record DropMaterializedView(QualifiedName name, boolean ifExists, boolean cascade) implements FloeStatement {

    public DropMaterializedView {
        Objects.requireNonNull(name, "name");
    }
}
