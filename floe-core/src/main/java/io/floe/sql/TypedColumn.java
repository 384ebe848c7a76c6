package io.floe.sql;

import java.util.Objects;
import java.util.Optional;

/**
 * A column of a streaming table's explicit column list: {@code name type [COMMENT 'text']}.
 *
 * @param name the column name
 * @param type the type exactly as written, in the engine's dialect ({@code DECIMAL(10, 2)}, {@code ARRAY<STRING>})
 * @param comment the column comment
 */
public record TypedColumn(String name, String type, Optional<String> comment) {

    public TypedColumn {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(comment, "comment");
    }
}
