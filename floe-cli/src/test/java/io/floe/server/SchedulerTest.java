package io.floe.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshStatus;
import io.floe.schedule.RefreshPlanner;
import io.floe.spark.SharedSpark;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The scheduler's polls on the shared test lakehouse, with a clock the test moves. */
class SchedulerTest {

  /** A clock that stands still until the test moves it. */
  private static final class SteppedClock extends Clock {
    private Instant now;

    SteppedClock(Instant now) {
      this.now = now;
    }

    void advance(Duration by) {
      now = now.plus(by);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  @Test
  void aViewRefreshedEveryIntervalWhoseSourcesAreQuietRunsOncePerInterval() {
    SparkSession spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("sched");
    String view = "lake." + ns + ".quiet";
    spark.sql("CREATE TABLE lake." + ns + ".t (id INT) USING iceberg");
    spark.sql("INSERT INTO lake." + ns + ".t VALUES (1), (2)");
    spark.sql("CREATE MATERIALIZED VIEW " + view + " SCHEDULE REFRESH EVERY 1 MINUTE AS SELECT count(*) AS n FROM lake." + ns + ".t");

    SteppedClock clock = new SteppedClock(Instant.now().plus(Duration.ofMinutes(2)));
    ServerMetrics metrics = new ServerMetrics(clock);
    Scheduler scheduler = new Scheduler(
        new LakehouseViews(spark, "lake"), new RefreshPlanner(clock, Duration.ofMinutes(1)),
        new ScheduledRefresh(spark, metrics), metrics, clock);

    // Two minutes after its first refresh it is due; nothing changed, so nothing is committed.
    assertThat(outcomesOf(scheduler.poll(() -> false), view)).singleElement()
        .satisfies(o -> assertThat(o.status()).isEqualTo(RefreshStatus.SUCCEEDED))
        .satisfies(o -> assertThat(o.refreshResult().get().type().name()).isEqualTo("NO_CHANGE"));
    // The next polls within the interval leave it alone, though its storage's last refresh did not move.
    assertThat(outcomesOf(scheduler.poll(() -> false), view)).isEmpty();
    clock.advance(Duration.ofSeconds(59));
    assertThat(outcomesOf(scheduler.poll(() -> false), view)).isEmpty();
    // One interval after that refresh it runs again.
    clock.advance(Duration.ofSeconds(2));
    assertThat(outcomesOf(scheduler.poll(() -> false), view)).hasSize(1);
  }

  private static List<RefreshOutcome> outcomesOf(List<RefreshOutcome> outcomes, String view) {
    return outcomes.stream().filter(o -> o.materializedView().equals(view)).toList();
  }
}
