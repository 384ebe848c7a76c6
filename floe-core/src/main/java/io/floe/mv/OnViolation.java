package io.floe.mv;

/**
 * What a refresh does with a row that fails a data-quality expectation
 * ({@code CONSTRAINT name EXPECT (condition) [ON VIOLATION DROP ROW | FAIL UPDATE]}).
 */
public enum OnViolation {
    /** Keep the row and only record the violation in the refresh metrics (no ON VIOLATION clause). */
    KEEP,
    /** Leave the row out of the view ({@code ON VIOLATION DROP ROW}). */
    DROP_ROW,
    /** Abort the refresh, leaving the view unchanged ({@code ON VIOLATION FAIL UPDATE}). */
    FAIL_UPDATE
}
