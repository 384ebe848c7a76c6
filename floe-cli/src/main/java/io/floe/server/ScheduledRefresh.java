package io.floe.server;

import io.floe.cli.output.FailureLine;
import io.floe.refresh.RefreshTrigger;
import io.floe.schedule.PlannedRefresh;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the refreshes the server starts: a scheduler round, or one asked for over the API. This is
 * the only place the server invokes a refresh; each runs as a {@code REFRESH MATERIALIZED VIEW}
 * statement on the calling thread with the trigger and run id set as Spark local properties.
 */
final class ScheduledRefresh {
  static final String TRIGGER_PROPERTY = "floe.refresh.trigger";
  static final String RUN_ID_PROPERTY = "floe.refresh.run-id";
  private static final Logger LOG = LoggerFactory.getLogger(ScheduledRefresh.class);

  /** What one refresh statement did: its result rows as column → value, or its error. */
  record Outcome(String mv, RefreshTrigger trigger, List<Map<String, Object>> refreshed, String error) {
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
   * Runs a round in order under one run id. A view whose upstream failed in this round is skipped
   * rather than refreshed from a half-updated pipeline; {@code stopping} ends the round between
   * two refreshes.
   */
  List<Outcome> runRound(List<PlannedRefresh> round, BooleanSupplier stopping) {
    String runId = UUID.randomUUID().toString();
    Set<String> failed = new HashSet<>();
    List<Outcome> outcomes = new ArrayList<>();
    for (PlannedRefresh planned : round) {
      if (stopping.getAsBoolean()) {
        break;
      }
      List<String> failedUpstream = planned.after().stream().filter(failed::contains).toList();
      if (!failedUpstream.isEmpty()) {
        LOG.warn("Skipping the refresh of {}: upstream {} failed in this round", planned.name(), failedUpstream);
        failed.add(planned.name());
        continue;
      }
      LOG.info("Due: {} ({})", planned.name(), planned.reason());
      Outcome outcome = refresh(planned.name(), planned.trigger(), runId, "");
      if (outcome.failed()) {
        failed.add(planned.name());
      }
      outcomes.add(outcome);
    }
    return outcomes;
  }

  /** A refresh asked for by a user, with the statement's {@code FULL} and {@code CASCADE}. */
  Outcome refreshNow(String mv, boolean full, boolean cascade) {
    return refresh(mv, RefreshTrigger.MANUAL, null, (full ? " FULL" : "") + (cascade ? " CASCADE" : ""));
  }

  private Outcome refresh(String mv, RefreshTrigger trigger, String runId, String options) {
    LOG.info("Refreshing {}{} (trigger {})", mv, options, propertyValue(trigger));
    SparkContext context = spark.sparkContext();
    if (trigger != RefreshTrigger.MANUAL) {
      context.setLocalProperty(TRIGGER_PROPERTY, propertyValue(trigger));
      context.setLocalProperty(RUN_ID_PROPERTY, runId);
    }
    try {
      List<Map<String, Object>> refreshed = new ArrayList<>();
      List<Row> rows = spark.sql("REFRESH MATERIALIZED VIEW " + mv + options).collectAsList();
      for (Row row : rows) {
        Map<String, Object> values = new LinkedHashMap<>();
        Arrays.stream(row.schema().fieldNames()).forEach(f -> values.put(f, row.getAs(f)));
        refreshed.add(values);
        metrics.refreshSucceeded(String.valueOf(values.get("materialized_view")),
            String.valueOf(values.get("refresh_type")), propertyValue(trigger), number(values.get("duration_ms")),
            number(values.get("rows_read")), number(values.get("rows_written")));
      }
      return new Outcome(mv, trigger, refreshed, null);
    } catch (Exception e) { // Spark's AnalysisException is checked but undeclared
      LOG.error("Refresh of {} ({}) failed", mv, propertyValue(trigger), e);
      metrics.refreshFailed(mv, propertyValue(trigger));
      return new Outcome(mv, trigger, List.of(), FailureLine.of(e));
    } finally {
      context.setLocalProperty(TRIGGER_PROPERTY, null);
      context.setLocalProperty(RUN_ID_PROPERTY, null);
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
