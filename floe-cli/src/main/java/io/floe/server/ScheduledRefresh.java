package io.floe.server;

import io.floe.FloeException;
import io.floe.cli.output.FailureLine;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshStatus;
import io.floe.refresh.RefreshTrigger;
import io.floe.schedule.PlannedRefresh;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.GraphRefresh;
import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.parser.ParseException;
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

  /** What one refresh asked for over the API did: its result rows as column → value, or why it did not. */
  record Outcome(String mv, Result result, List<Map<String, Object>> refreshed, String error) {}

  /** How a refresh asked for over the API ended. */
  enum Result {
    REFRESHED,
    /** The name is not a name: nothing ran and nothing was counted. */
    INVALID_NAME,
    /** The name is no materialized view (nothing by that name, a table, a plain view): nothing ran and nothing was counted. */
    NO_SUCH_VIEW,
    /** The refresh ran and failed; counted as a failed refresh of the view. */
    FAILED
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
        due.add(catalog.loadExisting(catalog.resolve(QualifiedName.parse(planned.name()).parts(), null, null), "refresh"));
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
   * The name is resolved first, as the statement resolves it: a name of no materialized view runs
   * and counts nothing, and the metrics of a refresh that runs name the view by its qualified name.
   */
  Outcome refreshNow(String mv, boolean full, boolean cascade) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(classic());
    List<String> parts;
    try {
      parts = Scala.list(classic().sessionState().sqlParser().parseMultipartIdentifier(mv));
    } catch (ParseException e) {
      LOG.info("Not refreshing '{}': not a name: {}", mv, FailureLine.of(e));
      return new Outcome(mv, Result.INVALID_NAME, List.of(),
          "Invalid materialized view name '" + mv + "': " + FailureLine.of(e));
    }
    MaterializedView view;
    try {
      view = catalog.loadExisting(catalog.resolve(parts, null, null), "refresh");
    } catch (FloeException e) { // not an Iceberg catalog, nothing by that name, a table or a plain view
      LOG.info("Not refreshing {}: {}", mv, e.getMessage());
      return new Outcome(mv, Result.NO_SUCH_VIEW, List.of(), FailureLine.of(e));
    }
    String name = view.name().toString();
    String options = (full ? " FULL" : "") + (cascade ? " CASCADE" : "");
    String trigger = propertyValue(RefreshTrigger.MANUAL);
    LOG.info("Refreshing {}{} (trigger {})", name, options, trigger);
    try {
      List<Map<String, Object>> refreshed = new ArrayList<>();
      for (Row row : spark.sql("REFRESH MATERIALIZED VIEW " + view.name().quoted() + options).collectAsList()) {
        Map<String, Object> values = new LinkedHashMap<>();
        Arrays.stream(row.schema().fieldNames()).forEach(f -> values.put(f, row.getAs(f)));
        refreshed.add(values);
        metrics.refreshSucceeded(String.valueOf(values.get("materialized_view")),
            String.valueOf(values.get("refresh_type")), trigger, number(values.get("duration_ms")),
            number(values.get("rows_read")), number(values.get("rows_written")));
      }
      return new Outcome(name, Result.REFRESHED, refreshed, null);
    } catch (Exception e) { // Spark's AnalysisException is checked but undeclared
      LOG.error("Refresh of {} ({}) failed", name, trigger, e);
      metrics.refreshFailed(name, trigger);
      return new Outcome(name, Result.FAILED, List.of(), FailureLine.of(e));
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
