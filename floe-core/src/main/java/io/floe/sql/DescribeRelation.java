package io.floe.sql;

import java.util.Objects;

/**
 * {@code DESC|DESCRIBE [TABLE] [EXTENDED|FORMATTED] name} with nothing after the name. Floe handles it so that a
 * materialized view is described as one; for any other relation the engine's own output is expected.
 *
 * @param extended {@code EXTENDED} or {@code FORMATTED} was given
 */
public record DescribeRelation(QualifiedName name, boolean extended) implements FloeStatement {

    public DescribeRelation {
        Objects.requireNonNull(name, "name");
    }
}
