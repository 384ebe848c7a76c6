package io.floe.schedule;

import io.floe.graph.DependencyGraph;
import io.floe.refresh.RefreshTrigger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Decides which materialized views are due for an automatic refresh and in what order.
 *
 * <p>A view with {@code EVERY n unit} is due when it was never refreshed or when its last refresh
 * started at least one interval ago. A view with {@code ON CHANGE} is due when it is stale, which
 * includes reading a stale upstream view, so one round carries a source commit through every
 * {@code ON CHANGE} level below it. A view whose last scheduled attempt failed waits
 * {@code retryDelay} before the next attempt, so a broken view does not run on every poll.
 *
 * <p>Due views run sources before readers: a view never refreshes in a round before an upstream
 * view that is due in the same round.
 */
public final class RefreshPlanner {
  private final Clock clock;
  private final Duration retryDelay;

  public RefreshPlanner(Clock clock, Duration retryDelay) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
  }

  /** The refreshes due now, upstream views before the views that read them. */
  public List<PlannedRefresh> dueRefreshes(Collection<ScheduledView> views) {
    Instant now = clock.instant();
    Map<String, ScheduledView> byName = new LinkedHashMap<>();
    DependencyGraph<String> graph = new DependencyGraph<>();
    for (ScheduledView view : views) {
      byName.put(view.name(), view);
      graph.addNode(view.name());
      for (String source : view.upstream()) {
        graph.addEdge(source, view.name());
      }
    }
    Set<String> due = new LinkedHashSet<>();
    List<PlannedRefresh> round = new ArrayList<>();
    for (String name : graph.topologicalOrder()) {
      ScheduledView view = byName.get(name);
      if (view == null) {
        continue;
      }
      Optional<String> reason = dueReason(view, now, due);
      if (reason.isPresent()) {
        due.add(name);
        round.add(new PlannedRefresh(name, triggerOf(view), reason.get(), dueAncestors(name, byName, due)));
      }
    }
    return round;
  }

  /**
   * When the view is next due by its clock: the last refresh plus the interval (now, when it was
   * never refreshed), later when a failed attempt is being retried. Empty for a view without a
   * schedule or with {@code ON CHANGE}, which runs when a source moves.
   */
  public Optional<Instant> nextFireTime(ScheduledView view) {
    if (view.schedule().isEmpty() || view.schedule().get().kind() != Schedule.Kind.EVERY) {
      return Optional.empty();
    }
    Instant next = view.lastRefresh().map(view.schedule().get()::nextRunAfter).orElse(clock.instant());
    if (view.lastFailure().isPresent()) {
      Instant retry = view.lastFailure().get().plus(retryDelay);
      next = retry.isAfter(next) ? retry : next;
    }
    return Optional.of(next);
  }

  private Optional<String> dueReason(ScheduledView view, Instant now, Set<String> dueUpstream) {
    if (view.schedule().isEmpty()) {
      return Optional.empty();
    }
    if (view.lastFailure().isPresent() && now.isBefore(view.lastFailure().get().plus(retryDelay))) {
      return Optional.empty();
    }
    Schedule schedule = view.schedule().get();
    if (schedule.kind() == Schedule.Kind.ON_CHANGE) {
      if (view.stale()) {
        return Optional.of("ON CHANGE, a source moved");
      }
      return view.upstream().stream().filter(dueUpstream::contains).findFirst()
          .map(upstream -> "ON CHANGE, upstream " + upstream + " refreshes first");
    }
    if (view.lastRefresh().isEmpty()) {
      return Optional.of(schedule.toSql() + ", never refreshed");
    }
    Instant next = schedule.nextRunAfter(view.lastRefresh().get());
    return now.isBefore(next)
        ? Optional.empty()
        : Optional.of(schedule.toSql() + ", last refreshed " + view.lastRefresh().get());
  }

  private static RefreshTrigger triggerOf(ScheduledView view) {
    return view.schedule().get().kind() == Schedule.Kind.ON_CHANGE ? RefreshTrigger.CHANGE : RefreshTrigger.SCHEDULE;
  }

  /** The due views that {@code name} reads, directly or through views that are not due. */
  private static List<String> dueAncestors(String name, Map<String, ScheduledView> views, Set<String> due) {
    Set<String> found = new LinkedHashSet<>();
    Set<String> seen = new LinkedHashSet<>();
    List<String> queue = new ArrayList<>(upstreamOf(name, views));
    while (!queue.isEmpty()) {
      String next = queue.remove(0);
      if (!seen.add(next)) {
        continue;
      }
      if (due.contains(next)) {
        found.add(next);
      }
      queue.addAll(upstreamOf(next, views));
    }
    return new ArrayList<>(found);
  }

  private static Set<String> upstreamOf(String name, Map<String, ScheduledView> views) {
    ScheduledView view = views.get(name);
    return view == null ? Set.of() : view.upstream();
  }
}
