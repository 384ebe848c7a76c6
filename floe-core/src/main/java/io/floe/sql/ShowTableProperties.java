package io.floe.sql;

import java.util.Objects;
import java.util.Optional;

/**
 * {@code SHOW TBLPROPERTIES name [(key)]}.
 *
 * @param key the single property to show; empty to show all
 */
public record ShowTableProperties(QualifiedName name, Optional<String> key) implements FloeStatement {

    public ShowTableProperties {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(key, "key");
    }
}
