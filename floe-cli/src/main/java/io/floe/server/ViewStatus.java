package io.floe.server;

import io.floe.mv.Freshness;
import io.floe.schedule.Schedule;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A materialized view as the server sees it at one moment.
 *
 * @param name qualified name, {@code catalog.namespace.view}
 * @param sources what its definition reads, qualified
 * @param upstreamViews the sources that are materialized views
 * @param error why its state could not be read, when it could not
 */
record ViewStatus(
    String name,
    Optional<Schedule> schedule,
    Optional<String> lastRefreshType,
    Optional<Instant> lastRefresh,
    Freshness freshness,
    List<String> sources,
    List<String> upstreamViews,
    Optional<String> error) {}
