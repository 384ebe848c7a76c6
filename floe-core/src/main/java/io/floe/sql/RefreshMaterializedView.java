package io.floe.sql;

import java.util.Objects;

/**
 * {@code REFRESH MATERIALIZED VIEW name [FULL] [CASCADE]}.
 *
 * @param full recompute the whole view even if an incremental refresh is possible
 * @param cascade first refresh the materialized views this one reads from
 */
public record RefreshMaterializedView(QualifiedName name, boolean full, boolean cascade) implements FloeStatement {

    public RefreshMaterializedView {
        Objects.requireNonNull(name, "name");
    }
}
