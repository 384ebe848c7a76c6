package io.floe.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.refresh.RefreshTrigger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RefreshPlannerTest {
  private static final Instant START = Instant.parse("2026-11-30T00:00:00Z");

  /** A clock the test moves forward. */
  private static final class AdvancingClock extends Clock {
    private Instant now = START;

    void advance(Duration by) {
      now = now.plus(by);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  private final AdvancingClock clock = new AdvancingClock();
  private final RefreshPlanner planner = new RefreshPlanner(clock, Duration.ofMinutes(1));

  private static ScheduledView every(String name, long amount, ChronoUnit unit, Instant last, String... upstream) {
    return new ScheduledView(name, Optional.of(Schedule.every(amount, unit)), Optional.ofNullable(last), false,
        Optional.empty(), Set.of(upstream));
  }

  private static ScheduledView onChange(String name, boolean stale, String... upstream) {
    return new ScheduledView(name, Optional.of(Schedule.onChange()), Optional.of(START), stale, Optional.empty(),
        Set.of(upstream));
  }

  private static List<String> names(List<PlannedRefresh> round) {
    return round.stream().map(PlannedRefresh::name).toList();
  }

  @Test
  void intervalViewIsDueExactlyOneIntervalAfterItsLastRefresh() {
    ScheduledView view = every("v", 15, ChronoUnit.MINUTES, START);
    assertThat(planner.dueRefreshes(List.of(view))).isEmpty();
    clock.advance(Duration.ofMinutes(15).minusMillis(1));
    assertThat(planner.dueRefreshes(List.of(view))).isEmpty();
    clock.advance(Duration.ofMillis(1));
    assertThat(planner.dueRefreshes(List.of(view)))
        .singleElement()
        .satisfies(p -> assertThat(p.trigger()).isEqualTo(RefreshTrigger.SCHEDULE));
    assertThat(planner.nextFireTime(view)).contains(START.plus(Duration.ofMinutes(15)));
  }

  @Test
  void neverRefreshedIntervalViewIsDueAtOnce() {
    ScheduledView view = every("v", 1, ChronoUnit.DAYS, null);
    assertThat(names(planner.dueRefreshes(List.of(view)))).containsExactly("v");
    assertThat(planner.nextFireTime(view)).contains(clock.instant());
  }

  @Test
  void nextFireTimeFollowsEachUnit() {
    Instant last = START.minus(Duration.ofMinutes(7));
    assertThat(planner.nextFireTime(every("m", 30, ChronoUnit.MINUTES, last))).contains(last.plusSeconds(30 * 60));
    assertThat(planner.nextFireTime(every("h", 2, ChronoUnit.HOURS, last))).contains(last.plusSeconds(2 * 3600));
    assertThat(planner.nextFireTime(every("d", 1, ChronoUnit.DAYS, last))).contains(last.plusSeconds(86_400));
    assertThat(planner.nextFireTime(onChange("c", true))).isEmpty();
  }

  @Test
  void unscheduledViewIsNeverDue() {
    ScheduledView manual = new ScheduledView("v", Optional.empty(), Optional.empty(), true, Optional.empty(), Set.of());
    assertThat(planner.dueRefreshes(List.of(manual))).isEmpty();
    assertThat(planner.nextFireTime(manual)).isEmpty();
  }

  @Test
  void onChangeViewIsDueOnlyWhenStale() {
    assertThat(planner.dueRefreshes(List.of(onChange("fresh", false)))).isEmpty();
    assertThat(planner.dueRefreshes(List.of(onChange("stale", true))))
        .singleElement()
        .satisfies(p -> assertThat(p.trigger()).isEqualTo(RefreshTrigger.CHANGE));
  }

  @Test
  void upstreamRefreshesBeforeTheViewsThatReadItInTheSameRound() {
    clock.advance(Duration.ofHours(1));
    // Listed readers first, to show the order comes from the dependencies.
    List<ScheduledView> views = List.of(
        every("gold", 1, ChronoUnit.HOURS, START, "silver"),
        every("report", 1, ChronoUnit.MINUTES, START, "gold", "other"),
        every("silver", 1, ChronoUnit.HOURS, START),
        every("other", 1, ChronoUnit.DAYS, START));
    List<PlannedRefresh> round = planner.dueRefreshes(views);
    assertThat(names(round)).containsExactly("silver", "gold", "report");
    assertThat(round.get(1).after()).containsExactly("silver");
    assertThat(round.get(2).after()).containsExactlyInAnyOrder("gold", "silver");
  }

  @Test
  void aBronzeCommitMakesEveryOnChangeLevelDueInOneRound() {
    List<ScheduledView> views = List.of(
        onChange("gold", false, "silver"), onChange("silver", false, "bronze_mv"), onChange("bronze_mv", true));
    List<PlannedRefresh> round = planner.dueRefreshes(views);
    assertThat(names(round)).containsExactly("bronze_mv", "silver", "gold");
    assertThat(round).allSatisfy(p -> assertThat(p.trigger()).isEqualTo(RefreshTrigger.CHANGE));
  }

  @Test
  void onChangeViewBelowAnUpstreamThatIsNotDueWaits() {
    // silver is behind its source but refreshes daily; gold would read the same storage again.
    List<ScheduledView> views = List.of(
        onChange("gold", false, "silver"),
        new ScheduledView("silver", Optional.of(Schedule.every(1, ChronoUnit.DAYS)), Optional.of(START), true,
            Optional.empty(), Set.of()));
    assertThat(planner.dueRefreshes(views)).isEmpty();
  }

  @Test
  void failedViewWaitsForTheRetryDelay() {
    ScheduledView failed = new ScheduledView("v", Optional.of(Schedule.onChange()), Optional.of(START), true,
        Optional.of(START), Set.of());
    assertThat(planner.dueRefreshes(List.of(failed))).isEmpty();
    clock.advance(Duration.ofMinutes(1));
    assertThat(names(planner.dueRefreshes(List.of(failed)))).containsExactly("v");
  }
}
