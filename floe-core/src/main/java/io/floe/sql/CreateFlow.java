package io.floe.sql;

import java.util.Objects;
import java.util.Optional;

/**
 * {@code CREATE FLOW name [COMMENT 'text'] AS INSERT INTO target [BY NAME] query}, as in Spark Declarative
 * Pipelines: appends what {@code query} computes over the rows newly appended to the table it reads with
 * {@code STREAM(source)} to the streaming table {@code target}. Several flows may feed one target.
 *
 * @param name the flow's name
 * @param comment the {@code COMMENT} text
 * @param target the streaming table the flow appends to, as written
 * @param byName {@code BY NAME}: the query's columns match the target's by name; otherwise by position
 * @param query the query after the target (and {@code BY NAME}) exactly as written, without a trailing {@code ;}
 * @param originalText the whole statement as written, without the {@code ;}
 */
public record CreateFlow(
        String name,
        Optional<String> comment,
        QualifiedName target,
        boolean byName,
        String query,
        String originalText) implements FloeStatement {

    public CreateFlow {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(comment, "comment");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(originalText, "originalText");
        if (query.isBlank()) {
            throw new IllegalArgumentException("Flow " + name + " needs a query");
        }
    }
}
