package io.floe.sql;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@code SHOW REFRESHES [FOR name] [LIMIT n]}: the refresh history.
 *
 * @param materializedView only this view's refreshes; empty for all views
 * @param limit at most this many refreshes (non-negative); empty for no limit
 */
public record ShowRefreshes(Optional<QualifiedName> materializedView, OptionalInt limit) implements FloeStatement {

    public ShowRefreshes {
        Objects.requireNonNull(materializedView, "materializedView");
        Objects.requireNonNull(limit, "limit");
        if (limit.isPresent() && limit.getAsInt() < 0) {
            throw new IllegalArgumentException("limit must not be negative but was " + limit.getAsInt());
        }
    }
}
