package io.floe.mv;

/**
 * How a materialized view is brought up to date when it is refreshed.
 *
 * <p>Declared with {@code REFRESH POLICY AUTO|INCREMENTAL|FULL}.
 */
public enum RefreshPolicy {
    /** Refresh incrementally when the query allows it, otherwise recompute in full. */
    AUTO,
    /** Always refresh incrementally; a refresh that cannot be done incrementally fails. */
    INCREMENTAL,
    /** Always recompute the whole view. */
    FULL
}
