package io.floe.server;

import io.floe.refresh.RefreshOutcome;
import io.floe.schedule.PlannedRefresh;
import io.floe.schedule.RefreshPlanner;
import io.floe.schedule.ScheduledView;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One poll of the server's scheduler: reads every view, records staleness, and runs the refreshes
 * that are due, upstream first. Remembers failed attempts so that a broken view is retried after
 * the planner's retry delay instead of on every poll.
 */
final class Scheduler {
  private static final Logger LOG = LoggerFactory.getLogger(Scheduler.class);

  private final LakehouseViews views;
  private final RefreshPlanner planner;
  private final ScheduledRefresh refresh;
  private final ServerMetrics metrics;
  private final Clock clock;
  private final Map<String, Instant> lastFailure = new ConcurrentHashMap<>();
  /**
   * When a round that refreshed the view successfully started. A refresh that finds no source
   * change commits nothing, so the storage table's last refresh time stays where it was; without
   * this, an {@code EVERY} view whose sources are quiet would be due again on every poll.
   */
  private final Map<String, Instant> lastScheduled = new ConcurrentHashMap<>();

  Scheduler(LakehouseViews views, RefreshPlanner planner, ScheduledRefresh refresh, ServerMetrics metrics, Clock clock) {
    this.views = views;
    this.planner = planner;
    this.refresh = refresh;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Looks at every view and runs the due refreshes. */
  List<RefreshOutcome> poll(BooleanSupplier stopping) {
    List<ViewStatus> current = views.scan();
    // A view dropped (and perhaps created again) starts its schedule over.
    java.util.Set<String> listed = new java.util.HashSet<>();
    current.forEach(view -> listed.add(view.name()));
    lastScheduled.keySet().retainAll(listed);
    metrics.observe(current);
    List<PlannedRefresh> round = planner.dueRefreshes(current.stream().map(this::scheduledView).toList());
    if (round.isEmpty()) {
      return List.of();
    }
    Instant started = clock.instant();
    List<RefreshOutcome> outcomes = refresh.runRound(round, stopping);
    Instant now = clock.instant();
    for (RefreshOutcome outcome : outcomes) {
      switch (outcome.status()) {
        case FAILED -> {
          lastFailure.put(outcome.materializedView(), now);
          LOG.warn("Scheduled refresh of {} failed: {}", outcome.materializedView(), outcome.message());
        }
        case SKIPPED -> LOG.warn("Scheduled refresh of {} skipped: {}", outcome.materializedView(), outcome.message());
        case SUCCEEDED -> {
          lastFailure.remove(outcome.materializedView());
          lastScheduled.put(outcome.materializedView(), started);
        }
      }
    }
    return outcomes;
  }

  /** When the view's schedule next fires; empty for ON CHANGE and unscheduled views. */
  Optional<Instant> nextFireTime(ViewStatus view) {
    return planner.nextFireTime(scheduledView(view));
  }

  /**
   * Whether the view is stale for a reason of its own (a source moved or the definition changed),
   * or a source was compacted since its refresh: that refresh changes no row but records the new
   * snapshot, so that expiring the recorded one cannot force a full refresh later. Freshness also
   * reports an upstream view that is stale; the planner cascades those itself.
   */
  private static boolean ownSourcesMoved(ViewStatus view) {
    return !view.freshness().unrecordedCommits().isEmpty()
        || view.freshness().staleReasons().stream().anyMatch(reason -> !reason.startsWith("upstream "));
  }

  private ScheduledView scheduledView(ViewStatus view) {
    Optional<Instant> lastRefresh = view.lastRefresh();
    Instant scheduled = lastScheduled.get(view.name());
    // Only beside a refresh the storage records: a view that was never refreshed is due at once.
    if (scheduled != null && lastRefresh.isPresent() && scheduled.isAfter(lastRefresh.get())) {
      lastRefresh = Optional.of(scheduled);
    }
    return new ScheduledView(view.name(), view.error().isPresent() ? Optional.empty() : view.schedule(),
        lastRefresh, ownSourcesMoved(view), Optional.ofNullable(lastFailure.get(view.name())),
        java.util.Set.copyOf(view.upstreamViews()));
  }
}
