package io.floe.server;

import io.floe.cli.output.FailureLine;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshStatus;
import io.floe.refresh.RefreshTrigger;
import io.floe.schedule.PlannedRefresh;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.GraphRefresh;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the refreshes the server starts: a scheduler round, as one {@link GraphRefresh} whose
 * refreshes are recorded with their schedule or change trigger, or one asked for over the API, as
 * the user's {@code REFRESH MATERIALIZED VIEW} statement. This is the only place the server
 * invokes a refresh.
 */
final class ScheduledRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(ScheduledRefresh.class);

  /** What one refresh statement did: its result rows as column → value, or its error. */
  record Outcome(String mv, List<Map<String, Object>> refreshed, String error) {
    boolean failed() {
      return error != null;
    }
  }

  private final SparkSession spark;
  private final ServerMetrics metrics;

  ScheduledRefresh(SparkSession spark, ServerMetrics metrics) {
    this.spark = spark;
    this.metrics = metrics;
  }

  /**
   * Runs a round as one graph refresh under one run: every source outside the round is pinned
   * once, a view refreshes after the views of the round it reads and never after one of them
   * failed, and {@code stopping} lets the refreshes in flight finish but starts no other.
   */
  List<RefreshOutcome> runRound(List<PlannedRefresh> round, BooleanSupplier stopping) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(classic());
    List<MaterializedView> due = new ArrayList<>();
    List<RefreshOutcome> unreadable = new ArrayList<>();
    for (PlannedRefresh planned : round) {
      LOG.info("Due: {} ({})", planned.name(), planned.reason());
      try {
        due.add(catalog.loadExisting(catalog.resolve(List.of(planned.name().split("\\.")), null, null), "refresh"));
      } catch (RuntimeException e) { // dropped since the poll read it
        LOG.warn("Cannot refresh {}: {}", planned.name(), FailureLine.of(e));
        unreadable.add(RefreshOutcome.failed(planned.name(), e));
      }
    }
    RefreshRun run = RefreshRun.start(round.get(0).trigger());
    GraphRefresh graph = GraphRefresh.of(classic()).targets(due).downstream(false).run(run).stopWhen(stopping);
    Map<String, RefreshTrigger> triggers = new HashMap<>();
    for (PlannedRefresh planned : round) {
      graph.trigger(planned.name(), planned.trigger());
      triggers.put(planned.name(), planned.trigger());
    }
    List<RefreshOutcome> outcomes = new ArrayList<>(unreadable);
    if (!due.isEmpty()) {
      outcomes.addAll(graph.refresh().outcomes());
    }
    for (RefreshOutcome outcome : outcomes) {
      String trigger = propertyValue(triggers.getOrDefault(outcome.materializedView(), run.trigger()));
      outcome.refreshResult().ifPresentOrElse(
          result -> metrics.refreshSucceeded(result.materializedView(), result.type().name(), trigger,
              result.durationMs(), result.rowsRead(), result.rowsWritten()),
          () -> {
            if (outcome.status() == RefreshStatus.FAILED) {
              metrics.refreshFailed(outcome.materializedView(), trigger);
            }
          });
    }
    return outcomes;
  }

  private org.apache.spark.sql.classic.SparkSession classic() {
    return (org.apache.spark.sql.classic.SparkSession) spark;
  }

  /**
   * A refresh asked for by a user, run as the {@code REFRESH MATERIALIZED VIEW} statement with its
   * {@code FULL} and {@code CASCADE}, so that it reports and records exactly what the statement does.
   */
  Outcome refreshNow(String mv, boolean full, boolean cascade) {
    String options = (full ? " FULL" : "") + (cascade ? " CASCADE" : "");
    String trigger = propertyValue(RefreshTrigger.MANUAL);
    LOG.info("Refreshing {}{} (trigger {})", mv, options, trigger);
    try {
      List<Map<String, Object>> refreshed = new ArrayList<>();
      for (Row row : spark.sql("REFRESH MATERIALIZED VIEW " + mv + options).collectAsList()) {
        Map<String, Object> values = new LinkedHashMap<>();
        Arrays.stream(row.schema().fieldNames()).forEach(f -> values.put(f, row.getAs(f)));
        refreshed.add(values);
        metrics.refreshSucceeded(String.valueOf(values.get("materialized_view")),
            String.valueOf(values.get("refresh_type")), trigger, number(values.get("duration_ms")),
            number(values.get("rows_read")), number(values.get("rows_written")));
      }
      return new Outcome(mv, refreshed, null);
    } catch (Exception e) { // Spark's AnalysisException is checked but undeclared
      LOG.error("Refresh of {} ({}) failed", mv, trigger, e);
      metrics.refreshFailed(mv, trigger);
      return new Outcome(mv, List.of(), FailureLine.of(e));
    }
  }

  /** A trigger as the local property and the metrics name it: {@code schedule}, {@code change}. */
  static String propertyValue(RefreshTrigger trigger) {
    return trigger.name().toLowerCase(java.util.Locale.ROOT);
  }

  private static long number(Object value) {
    return value instanceof Number ? ((Number) value).longValue() : 0;
  }
}
