package io.floe.sql;

import io.floe.mv.OnViolation;
import java.util.Objects;

/**
 * A data-quality expectation declared in a materialized view's element list:
 * {@code CONSTRAINT name EXPECT (expression) [ON VIOLATION DROP ROW | FAIL UPDATE]}.
 *
 * @param name the constraint name
 * @param expression the boolean condition each row should satisfy, exactly as written between the parentheses
 *     (trimmed), in the engine's SQL dialect
 * @param onViolation what a refresh does with a failing row; {@link OnViolation#KEEP} without an ON VIOLATION clause
 */
public record Expectation(String name, String expression, OnViolation onViolation) {

    public Expectation {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(expression, "expression");
        Objects.requireNonNull(onViolation, "onViolation");
    }
}
