package io.floe.sql;

import java.util.Objects;

/**
 * {@code DROP TABLE [IF EXISTS] name [PURGE] [CASCADE]}. Floe intercepts it so that dropping a table that
 * materialized views read from can be refused, or cascaded to those views.
 *
 * @param ifExists do nothing, rather than fail, when the table does not exist
 * @param purge delete the table's data files as well
 * @param cascade also drop the materialized views that read from the table
 */
public record DropTable(QualifiedName name, boolean ifExists, boolean purge, boolean cascade)
        implements FloeStatement {

    public DropTable {
        Objects.requireNonNull(name, "name");
    }
}
