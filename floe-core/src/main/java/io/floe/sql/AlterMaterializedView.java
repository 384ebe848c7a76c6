package io.floe.sql;

import java.util.Objects;

/** {@code ALTER MATERIALIZED VIEW name action}; see {@link AlterAction} for the actions. */
public record AlterMaterializedView(QualifiedName name, AlterAction action) implements FloeStatement {

    public AlterMaterializedView {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(action, "action");
    }
}
