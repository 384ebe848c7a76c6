package io.floe.schedule;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * What the scheduler knows about one materialized view when it decides what to refresh.
 *
 * @param name the view's qualified name
 * @param schedule its schedule; empty for a view refreshed only by hand
 * @param lastRefresh when its last refresh started ({@code refresh-start-timestamp-ms}); empty
 *     when it was never refreshed
 * @param stale whether one of its own sources moved or its definition changed since its last
 *     refresh (an upstream view that is itself stale does not count: the planner cascades)
 * @param lastFailure when the scheduler's last attempt to refresh it failed, if that attempt is
 *     more recent than the last successful refresh
 * @param upstream the materialized views it reads directly
 */
public record ScheduledView(
    String name,
    Optional<Schedule> schedule,
    Optional<Instant> lastRefresh,
    boolean stale,
    Optional<Instant> lastFailure,
    Set<String> upstream) {

  public ScheduledView {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(schedule, "schedule");
    Objects.requireNonNull(lastRefresh, "lastRefresh");
    Objects.requireNonNull(lastFailure, "lastFailure");
    upstream = Set.copyOf(upstream);
  }
}
