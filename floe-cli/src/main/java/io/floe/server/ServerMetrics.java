package io.floe.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The server's metrics in Prometheus' text format: refreshes by view, type, trigger and status,
 * their durations and rows, failures, and how long each view has been seen stale.
 */
final class ServerMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Clock clock;
  private final Map<String, Instant> staleSince = new ConcurrentHashMap<>();

  ServerMetrics(Clock clock) {
    this.clock = clock;
  }

  /** One refreshed view of a successful refresh statement. */
  void refreshSucceeded(String mv, String type, String trigger, long durationMs, long rowsRead, long rowsWritten) {
    Counter.builder("floe.refreshes").description("Refreshes by materialized view, type, trigger and status")
        .tags("mv", mv, "type", type, "trigger", trigger, "status", "success").register(registry).increment();
    Timer.builder("floe.refresh.duration").description("Time a refresh took")
        .tags("mv", mv, "type", type).register(registry).record(Duration.ofMillis(durationMs));
    Counter.builder("floe.refresh.rows.read").description("Source rows read by refreshes")
        .tag("mv", mv).register(registry).increment(rowsRead);
    Counter.builder("floe.refresh.rows.written").description("Storage rows written by refreshes")
        .tag("mv", mv).register(registry).increment(rowsWritten);
  }

  /** A refresh statement that failed. */
  void refreshFailed(String mv, String trigger) {
    Counter.builder("floe.refreshes").description("Refreshes by materialized view, type, trigger and status")
        .tags("mv", mv, "type", "none", "trigger", trigger, "status", "failure").register(registry).increment();
    Counter.builder("floe.refresh.failures").description("Failed refreshes")
        .tag("mv", mv).register(registry).increment();
  }

  /** Records which views are stale now; a view's staleness counts from the first poll that saw it stale. */
  void observe(List<ViewStatus> views) {
    Instant now = clock.instant();
    for (ViewStatus view : views) {
      if (view.freshness().fresh()) {
        staleSince.remove(view.name());
      } else {
        staleSince.putIfAbsent(view.name(), now);
      }
      Gauge.builder("floe.mv.staleness", this, m -> m.stalenessSeconds(view.name()))
          .description("How long the server has seen the materialized view stale; 0 when fresh")
          .baseUnit("seconds").tag("mv", view.name()).register(registry);
    }
  }

  private double stalenessSeconds(String mv) {
    Instant since = staleSince.get(mv);
    return since == null ? 0 : Duration.between(since, clock.instant()).toMillis() / 1000.0;
  }

  /** Every metric in the Prometheus text exposition format. */
  String scrape() {
    return registry.scrape();
  }
}
