package io.floe.spark.refresh;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.not;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.mv.OnViolation;
import io.floe.refresh.ExpectationResult;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.Expectation;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates a materialized view's {@code CONSTRAINT name EXPECT (condition) [ON VIOLATION ...]} expectations on
 * the rows a refresh computes, named by the view's columns. A row passes a constraint when its condition is
 * true; false and NULL are violations. Every constraint is evaluated on every row, before any is dropped, so each
 * count stands alone. {@code DROP ROW} constraints are a filter of the definition's output, the same on a full
 * refresh (all rows) and an incremental one (the change's rows).
 */
public final class ExpectationCheck {
  private static final Logger LOG = LoggerFactory.getLogger(ExpectationCheck.class);

  /** Storage table property: {@code true} keeps the rows DROP ROW constraints leave out in a quarantine table. */
  public static final String QUARANTINE_PROPERTY = "floe.expectations.quarantine";

  /** Suffix of the quarantine table's name, next to the view. */
  public static final String QUARANTINE_SUFFIX = "__quarantine";

  /** Quarantine column: the DROP ROW constraints a row failed, comma-separated. */
  public static final String FAILED_CONSTRAINTS = "_failed_constraints";

  /** Quarantine column: when the refresh that left the row out started. */
  public static final String REFRESHED_AT = "_refreshed_at";

  private final MaterializedView mv;
  private final List<Expectation> expectations;

  public ExpectationCheck(MaterializedView mv) {
    this.mv = mv;
    this.expectations = mv.expectations();
  }

  public boolean isEmpty() {
    return expectations.isEmpty();
  }

  /** Whether computing {@code rows} alone fails. */
  private static boolean definitionFails(Dataset<Row> rows) {
    try {
      rows.foreach((org.apache.spark.api.java.function.ForeachFunction<Row>) row -> { });
      return false;
    } catch (RuntimeException e) {
      return true;
    }
  }

  /** Whether some constraint drops rows. */
  public boolean dropsRows() {
    return expectations.stream().anyMatch(e -> e.onViolation() == OnViolation.DROP_ROW);
  }

  /**
   * Counts, per constraint, the rows of {@code rows} that pass and fail, in one pass; throws, naming the
   * constraint and an example row, when a {@code FAIL UPDATE} constraint has a failing row.
   */
  public List<ExpectationResult> evaluate(Dataset<Row> rows) {
    if (expectations.isEmpty()) {
      return List.of();
    }
    List<Column> aggregates = new ArrayList<>();
    aggregates.add(count(lit(1)));
    for (Expectation expectation : expectations) {
      aggregates.add(coalesce(sum(when(passes(expectation), lit(0L)).otherwise(lit(1L))), lit(0L)));
    }
    Row counts;
    try {
      counts = rows.agg(aggregates.get(0), aggregates.subList(1, aggregates.size()).toArray(new Column[0])).first();
    } catch (Exception e) { // AnalysisException is thrown undeclared
      // The rows are computed in this pass too: a failure of the definition itself (a cast its
      // values do not fit) is the definition's, not the expectations'.
      String cause = ErrorMessages.firstLine(e.getMessage());
      if (!(e instanceof org.apache.spark.sql.AnalysisException) && definitionFails(rows)) {
        throw new FloeException("Cannot refresh " + mv + ": " + cause, e);
      }
      throw new FloeException("Cannot refresh " + mv + ": cannot evaluate its expectations: " + cause, e);
    }
    long total = counts.getLong(0);
    List<ExpectationResult> results = new ArrayList<>();
    for (int i = 0; i < expectations.size(); i++) {
      Expectation expectation = expectations.get(i);
      long failed = counts.getLong(i + 1);
      results.add(new ExpectationResult(expectation.name(), expectation.onViolation(), total - failed, failed));
    }
    for (int i = 0; i < expectations.size(); i++) {
      Expectation expectation = expectations.get(i);
      if (expectation.onViolation() == OnViolation.FAIL_UPDATE && results.get(i).failed() > 0) {
        String example = rows.filter(not(passes(expectation))).toJSON().first();
        throw new FloeException(
            "Cannot refresh " + mv + ": constraint " + expectation.name() + " EXPECT (" + expectation.expression()
                + ") failed on " + results.get(i).failed() + " row" + (results.get(i).failed() == 1 ? "" : "s")
                + " (ON VIOLATION FAIL UPDATE), for example " + example + "; the view is unchanged");
      }
    }
    return results;
  }

  /** Zero counts for every constraint, for a refresh that computed no row. */
  public List<ExpectationResult> nothingEvaluated() {
    List<ExpectationResult> results = new ArrayList<>();
    for (Expectation expectation : expectations) {
      results.add(new ExpectationResult(expectation.name(), expectation.onViolation(), 0, 0));
    }
    return results;
  }

  /**
   * The rows of a change that constraints let in, the counts of each constraint over it, and the
   * rows judged, for {@link #quarantineCommitted} once the refresh committed.
   */
  public record Judged(Dataset<Row> passing, List<ExpectationResult> results, Dataset<Row> judged) {}

  /**
   * Judges the rows an incremental refresh brings in: evaluates every constraint once over them
   * (materialized first, so that the evaluation, the quarantine and the refresh read the same
   * rows) and returns the rows that pass. The rejected rows go to the quarantine table only once
   * the refresh committed ({@link #quarantineCommitted}): an attempt that fails to commit, or a
   * process that dies first, must not leave them there, or its retry would add them again.
   */
  public Judged judgeIncoming(Dataset<Row> incoming) {
    Dataset<Row> rows = incoming.localCheckpoint(true);
    List<ExpectationResult> results = evaluate(rows);
    return new Judged(keepPassing(rows), results, rows);
  }

  /**
   * {@link #quarantine} for a refresh that has committed: a failure cannot undo the refresh, so it
   * is returned as a warning (the rows left out are then not kept) rather than thrown.
   */
  public Optional<String> quarantineCommitted(Dataset<Row> rows, long refreshedAtMs, boolean replace) {
    try {
      quarantine(rows, refreshedAtMs, replace);
      return Optional.empty();
    } catch (RuntimeException e) {
      LOG.warn("The refresh of {} is committed, but its quarantine table was not written", mv, e);
      return Optional.of("the refresh of " + mv + " is committed, but the rows its DROP ROW constraints left out"
          + " are not kept: " + ErrorMessages.firstLine(e.getMessage()));
    }
  }

  /** {@code rows} without those a {@code DROP ROW} constraint rejects. */
  public Dataset<Row> keepPassing(Dataset<Row> rows) {
    Column keep = lit(true);
    for (Expectation expectation : expectations) {
      if (expectation.onViolation() == OnViolation.DROP_ROW) {
        keep = keep.and(passes(expectation));
      }
    }
    return rows.filter(keep);
  }

  /** The rows {@code DROP ROW} constraints reject, with the names of the constraints each failed and a time. */
  public Dataset<Row> dropped(Dataset<Row> rows, long refreshedAtMs) {
    List<Column> names = new ArrayList<>();
    Column any = lit(false);
    for (Expectation expectation : expectations) {
      if (expectation.onViolation() == OnViolation.DROP_ROW) {
        names.add(when(not(passes(expectation)), lit(expectation.name())));
        any = any.or(not(passes(expectation)));
      }
    }
    return rows.filter(any)
        .withColumn(FAILED_CONSTRAINTS, functions.concat_ws(",", names.toArray(new Column[0])))
        .withColumn(REFRESHED_AT, lit(new Timestamp(refreshedAtMs)));
  }

  /**
   * Keeps the rows {@code DROP ROW} constraints left out in {@code <view>__quarantine} when the storage table
   * asks for it ({@value #QUARANTINE_PROPERTY}): a full refresh replaces its rows, an incremental one appends.
   * Runs after the refresh committed, as a separate commit.
   */
  private void quarantine(Dataset<Row> rows, long refreshedAtMs, boolean replace) {
    if (!dropsRows() || !Boolean.parseBoolean(mv.storageTable().properties().get(QUARANTINE_PROPERTY))) {
      return;
    }
    ResolvedName table = quarantineTable(mv);
    Dataset<Row> dropped = dropped(rows, refreshedAtMs);
    try {
      if (replace || !table.catalog().tableExists(table.identifier())) {
        dropped.writeTo(table.quoted()).using("iceberg").createOrReplace();
      } else {
        dropped.writeTo(table.quoted()).append();
      }
    } catch (Exception e) { // NoSuchTableException is checked but Spark may throw others undeclared
      throw new FloeException(
          "Cannot write the quarantine table " + table + " of " + mv + ": " + ErrorMessages.firstLine(e.getMessage()), e);
    }
  }

  /** The quarantine table of {@code mv}. */
  public static ResolvedName quarantineTable(MaterializedView mv) {
    return mv.name().sibling(mv.name().name() + QUARANTINE_SUFFIX);
  }

  private static Column passes(Expectation expectation) {
    return coalesce(expr(expectation.expression()).cast("boolean"), lit(false));
  }
}
