package io.floe.spark.refresh;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.mv.RefreshStateParser;
import io.floe.mv.SourceState;
import io.floe.refresh.ExpectationResult;
import io.floe.refresh.ExpectationResultParser;
import io.floe.refresh.RefreshRecord;
import io.floe.refresh.RefreshResult;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshType;
import io.floe.spark.ivm.AggregateDelta;
import io.floe.spark.ivm.ColumnRole;
import io.floe.spark.ivm.DefinitionShape;
import io.floe.spark.ivm.IncrementalRefresh;
import io.floe.spark.ivm.KeyNarrowing;
import io.floe.spark.ivm.RowLineage;
import io.floe.spark.ivm.SizeChecks;
import io.floe.spark.ivm.SourceFeeds;
import io.floe.spark.ivm.SourceColumns;
import io.floe.spark.ivm.StorageLayout;
import io.floe.spark.mv.DefinitionSettings;
import io.floe.spark.mv.MaterializedView;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import io.floe.spark.mv.MaterializedViewCatalog;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a materialized view up to date: pins its sources, computes its rows at the pinned
 * snapshots and commits them to the storage table as one Iceberg snapshot carrying the new
 * refresh state. The commit is validated against the storage snapshot the refresh started from,
 * so two refreshes racing for one view never both apply; the loser retries from step 1. Every
 * refresh, successful or not, appends one row to the refresh history ({@link RefreshHistory}).
 */
public final class RefreshExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(RefreshExecutor.class);

  private final SparkSession spark;
  private final MaterializedViewCatalog catalog;
  private final SourcePinning pinning;

  public RefreshExecutor(SparkSession spark) {
    this.spark = spark;
    this.catalog = new MaterializedViewCatalog(spark);
    this.pinning = new SourcePinning(spark);
  }

  /**
   * Refreshes {@code mv} as part of the run this thread's local properties name ({@link
   * #currentRun}), every source at its current snapshot.
   *
   * @param full recompute even when no source changed
   */
  public RefreshResult refresh(MaterializedView mv, boolean full) {
    return refresh(mv, full, currentRun(spark), Map.of());
  }

  /**
   * Refreshes {@code mv} as part of {@code run}, reading each source named in {@code prePinned}
   * (by fully qualified name) at the snapshot pinned there and any other at its current snapshot.
   * A failure that another attempt can cure is retried as {@link RetryPolicy} says. The refresh is
   * recorded in the refresh history of the view's catalog whether it succeeds or fails; a history
   * that cannot be written never undoes or hides the refresh: it is logged and added to the
   * result's warnings (or, on failure, to the error's suppressed exceptions).
   *
   * @param full recompute even when no source changed
   * @throws FloeException naming the view when the refresh failed; nothing was committed
   */
  public RefreshResult refresh(MaterializedView mv, boolean full, RefreshRun run, Map<String, Source> prePinned) {
    Map<String, String> differing = DefinitionSettings.differing(spark, mv);
    if (!differing.isEmpty()) {
      // The definition means what it says under the settings it was created with: refresh in a
      // session of its own that has them, leaving this one (shared with other threads) alone.
      LOG.info("Refreshing {} under the settings it was created with: {}", mv, DefinitionSettings.describe(spark, differing));
      try {
        SparkSession own = DefinitionSettings.sessionWith(spark, differing);
        return DefinitionSettings.activeIn(own, () -> new RefreshExecutor(own).refresh(mv, full, run, prePinned));
      } finally {
        // This session's catalog may cache the storage table the other session committed to.
        catalog.invalidateSparkCache(mv.storageName());
      }
    }
    // A refresh reads its sources, never an MV answering for them (least of all this one).
    return io.floe.spark.rewrite.RewriteSuppression.withoutRewrite(() -> refreshWithRetries(mv, full, run, prePinned));
  }

  private RefreshResult refreshWithRetries(MaterializedView mv, boolean full, RefreshRun run, Map<String, Source> prePinned) {
    RefreshLocks.Held held;
    try {
      held = RefreshLocks.hold(mv.name().quoted());
    } catch (FloeException e) {
      recordFailed(mv, run, System.currentTimeMillis(), 0, e);
      throw e;
    }
    try (held) {
      return refreshWithRetriesHeld(mv, full, run, prePinned);
    }
  }

  private RefreshResult refreshWithRetriesHeld(MaterializedView mv, boolean full, RefreshRun run, Map<String, Source> prePinned) {
    RetryPolicy retry = RetryPolicy.of(spark);
    long started = System.currentTimeMillis();
    for (int attempt = 1; ; attempt++) {
      MaterializedView current = mv;
      try {
        current = catalog.loadExisting(mv.name(), "refresh");
        List<String> attemptWarnings = new ArrayList<>();
        RefreshResult once = refreshOnce(current, full, prePinned, attemptWarnings).withAttempts(attempt);
        for (String warning : attemptWarnings) {
          once = once.withWarning(warning);
        }
        RefreshResult result = maintainStorage(current, once);
        return recordSucceeded(current, run, result, started);
      } catch (Exception e) { // not RuntimeException: Spark throws AnalysisException undeclared
        Optional<Throwable> retryable = RetryPolicy.retryableCause(e);
        if (retryable.isEmpty() || attempt >= retry.maxAttempts()) {
          FloeException failure = namingTheView(current, "Cannot refresh ", e);
          if (attempt > 1) {
            failure = new FloeException(failure.getMessage() + " (gave up after " + attempt + " attempts)", e);
          }
          recordFailed(current, run, started, attempt, failure);
          throw failure;
        }
        long delay = retry.delayBefore(attempt + 1);
        LOG.info(
            "Refresh of {} failed on attempt {} of {}, retrying in {} ms: {}",
            mv, attempt, retry.maxAttempts(), delay, retryable.get().getMessage());
        try {
          Thread.sleep(delay);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          FloeException failure =
              new FloeException("Cannot refresh " + mv + ": interrupted while waiting to retry", interrupted);
          failure.addSuppressed(e);
          recordFailed(current, run, started, attempt, failure);
          throw failure;
        }
      }
    }
  }

  /**
   * Keeps the storage of a view whose refresh committed a snapshot cheap to read and bounded: compacts
   * it when it has gathered enough small or delete files ({@link StorageCompaction}), then expires
   * the snapshots nobody needs any more ({@link StorageRetention}). A failure of either leaves the
   * committed refresh as it is and becomes a warning; a compaction that lost a race with another
   * commit is left to a later refresh.
   */
  private RefreshResult maintainStorage(MaterializedView mv, RefreshResult result) {
    if (result.type() == RefreshType.NO_CHANGE) {
      return result;
    }
    try {
      new StorageCompaction(spark).compactIfDue(mv.storageTable())
          .ifPresent(done -> LOG.info("Compacted the storage of {}, {}", mv, done));
    } catch (RuntimeException e) {
      if (StorageCompaction.lostARace(e)) {
        LOG.info("Compaction of {} gave way to a concurrent commit; a later refresh compacts it: {}", mv.storageName(), e.getMessage());
      } else {
        LOG.warn("Cannot compact {}", mv.storageName(), e);
        result = result.withWarning(
            "the refresh of " + mv + " is committed, but compacting " + mv.storageName() + " failed: " + e.getMessage());
      }
    }
    try {
      new StorageRetention(catalog).apply(mv, mv.storageTable(), System.currentTimeMillis());
      return result;
    } catch (RuntimeException e) {
      LOG.warn("Cannot expire old snapshots of {}", mv.storageName(), e);
      return result.withWarning(
          "the refresh of " + mv + " is committed, but expiring old snapshots of " + mv.storageName() + " failed: " + e.getMessage());
    }
  }

  /**
   * The run the refreshes started on this thread belong to, from the local properties {@value
   * RefreshRun#TRIGGER_PROPERTY} and {@value RefreshRun#RUN_ID_PROPERTY}: unset, a manual run
   * with a fresh id.
   */
  public static RefreshRun currentRun(SparkSession spark) {
    try {
      return RefreshRun.of(
          spark.sparkContext().getLocalProperty(RefreshRun.TRIGGER_PROPERTY),
          spark.sparkContext().getLocalProperty(RefreshRun.RUN_ID_PROPERTY));
    } catch (IllegalArgumentException e) {
      throw new FloeException("Local property " + RefreshRun.TRIGGER_PROPERTY + ": " + e.getMessage(), e);
    }
  }

  private RefreshResult recordSucceeded(MaterializedView mv, RefreshRun run, RefreshResult result, long started) {
    Optional<RuntimeException> notRecorded =
        appendHistory(mv, RefreshRecord.succeeded(run, result, started, System.currentTimeMillis()));
    return notRecorded
        .map(e -> result.withWarning(historyWarning(mv, e)))
        .orElse(result);
  }

  private void recordFailed(MaterializedView mv, RefreshRun run, long started, int attempts, FloeException failure) {
    RefreshRecord record =
        RefreshRecord.failed(run, mv.name().toString(), started, System.currentTimeMillis(), attempts, failure.getMessage());
    appendHistory(mv, record).ifPresent(failure::addSuppressed);
  }

  /** Records that {@code mv} was not refreshed in {@code run}, and why; a warning when that fails. */
  Optional<String> recordSkipped(MaterializedView mv, RefreshRun run, String reason) {
    return appendHistory(mv, RefreshRecord.skipped(run, mv.name().toString(), System.currentTimeMillis(), reason))
        .map(e -> historyWarning(mv, e));
  }

  private Optional<RuntimeException> appendHistory(MaterializedView mv, RefreshRecord record) {
    RefreshHistory history = new RefreshHistory(mv.name().catalogName(), mv.name().catalog());
    try {
      history.append(record);
      catalog.invalidateSparkCache(mv.name().withIdentifier(RefreshHistory.IDENTIFIER));
      return Optional.empty();
    } catch (RuntimeException e) {
      LOG.warn("Refresh of {} ({}) could not be recorded in {}", mv, record.status(), history.tableName(), e);
      return Optional.of(e);
    }
  }

  private static String historyWarning(MaterializedView mv, RuntimeException e) {
    return "the refresh of " + mv + " is committed but not recorded in the refresh history: "
        + ErrorMessages.firstLine(e.getMessage());
  }

  /** One attempt at refreshing {@code mv}; what went wrong without failing it is added to {@code attemptWarnings}. */
  private RefreshResult refreshOnce(
      MaterializedView mv, boolean full, Map<String, Source> prePinned, List<String> attemptWarnings) {
    long start = System.currentTimeMillis();
    Table storage = mv.storageTable();
    catalog.invalidateSparkCache(mv.storageName());
    Optional<Snapshot> readSnapshot = Optional.ofNullable(storage.currentSnapshot());
    Optional<RefreshState> recorded = mv.refreshState(storage);
    List<SourceState> before = recorded.map(RefreshState::sourceStates).orElse(List.of());

    PinnedDefinition pinned =
        pinning.pin(definitionOf(mv), mv.defaultCatalog(), mv.defaultNamespace(), notBehind(mv, prePinned, before));
    List<SourceState> after = pinned.sourceStates();
    attemptWarnings.addAll(SourceFeeds.openFeeds(pinned.sources()));

    if (!full
        && recorded.isPresent()
        && recorded.get().viewVersionId() == mv.versionId()
        && new HashSet<>(before).equals(new HashSet<>(after))) {
      return new RefreshResult(
          mv.name().toString(),
          RefreshType.NO_CHANGE,
          "no source changed since the last refresh" + staleUpstreams(pinned),
          before,
          after,
          Map.of(),
          0,
          0,
          start,
          System.currentTimeMillis() - start,
          readSnapshot.map(Snapshot::snapshotId).orElse(null));
    }

    RefreshState state = new RefreshState(mv.versionId(), start, after);
    String stateJson = RefreshStateParser.toJson(state);
    Dataset<Row> definition = analyzeDefinition(mv, pinned);
    PinnedDefinition asView = asViewColumns(mv, pinned, definition);
    if (asView != pinned) {
      pinned = asView;
      definition = analyzeDefinition(mv, pinned);
    }
    LogicalPlan analyzed = definition.queryExecution().analyzed();
    DefinitionShape shape = DefinitionShape.of(pinned.parsed(), analyzed);
    String reason = fullRefreshReason(mv, storage, recorded, full);
    if (!full && recorded.isPresent() && recorded.get().viewVersionId() == mv.versionId() && readSnapshot.isPresent()) {
      Optional<String> notIncremental = incrementalBlocker(mv, storage, shape);
      if (notIncremental.isPresent()) {
        reason = notIncremental.get();
      } else {
        IncrementalRefresh.Outcome outcome =
            new IncrementalRefresh(spark)
                .refresh(
                    mv, storage, readSnapshot.get(), recorded.get(), pinned, shape, analyzed, SourceColumns.of(analyzed), stateJson);
        if (outcome instanceof IncrementalRefresh.Applied) {
          IncrementalRefresh.Applied applied = (IncrementalRefresh.Applied) outcome;
          return new RefreshResult(
              mv.name().toString(),
              RefreshType.INCREMENTAL,
              applied.reason(),
              before,
              after,
              applied.rowsRead(),
              applied.rowsWritten(),
              applied.rowsRemoved(),
              start,
              System.currentTimeMillis() - start,
              applied.snapshotId(),
              1,
              applied.warnings(),
              applied.expectations());
        }
        reason = ((IncrementalRefresh.Fallback) outcome).reason();
      }
    }
    ExpectationCheck check = new ExpectationCheck(mv);
    Dataset<Row> viewRows = viewRows(mv, definition);
    List<ExpectationResult> expectationCounts = check.evaluate(viewRows);
    Optional<LogicalPlan> lineage = lineageDefinition(mv, shape, pinned, definition);
    Dataset<Row> computed = storageRows(mv, storage, shape, pinned, definition, lineage);
    org.apache.spark.sql.Dataset<Row> rows = check.dropsRows() ? check.keepPassing(computed) : computed;
    Optional<ColumnWidening.Widened> widened = ColumnWidening.widen(catalog, mv, storage, rows.schema());
    if (widened.isPresent()) {
      // The view has a new version; the state records it, so the next refresh can be incremental.
      mv = widened.get().mv();
      reason = reason + "; " + widened.get().description();
      stateJson = RefreshStateParser.toJson(new RefreshState(mv.versionId(), start, after));
    }
    String fullReason = reason;
    String writtenState = stateJson;
    MaterializedView written = mv;

    String storageName = written.storageName().quoted();
    StorageWriteGuard.allowWritesTo(
        storage.uuid().toString(),
        () -> {
          var writer =
              rows.writeTo(storageName)
                  .option("snapshot-property." + RefreshState.SUMMARY_KEY, writtenState)
                  .option("snapshot-property." + MaterializedViewProperties.SUMMARY_REFRESH_TYPE, RefreshType.FULL.name())
                  .option("snapshot-property." + MaterializedViewProperties.SUMMARY_REFRESH_REASON, fullReason)
                  .option("snapshot-property." + RowLineage.SUMMARY_KEY, String.valueOf(lineage.isPresent()));
          if (!expectationCounts.isEmpty()) {
            writer = writer.option(
                "snapshot-property." + ExpectationResultParser.SUMMARY_KEY, ExpectationResultParser.toJson(expectationCounts));
          }
          if (readSnapshot.isPresent()) {
            writer =
                writer
                    .option("isolation-level", "serializable")
                    .option("validate-from-snapshot-id", Long.toString(readSnapshot.get().snapshotId()));
          }
          try {
            writer.overwrite(functions.lit(true));
          } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
            throw new FloeException("Cannot refresh " + written + ": storage table " + written.storageName() + " is missing", e);
          }
          return null;
        });

    storage.refresh();
    Snapshot committed = storage.currentSnapshot();
    if (committed == null || !stateJson.equals(committed.summary().get(RefreshState.SUMMARY_KEY))) {
      committed = findCommitted(storage, stateJson);
    }
    List<String> warnings = check.quarantineCommitted(viewRows, start, true).stream().toList();
    Map<String, Long> rowsRead = new LinkedHashMap<>();
    for (Source source : pinned.sources()) {
      rowsRead.put(source.name().toString(), source.totalRecords());
    }
    return new RefreshResult(
        mv.name().toString(),
        RefreshType.FULL,
        fullReason,
        before,
        after,
        rowsRead,
        summaryCount(committed, "added-records"),
        // The rows the storage held: its data files' records less those its deletes had removed
        // (the overwrite's deleted-records counts every record of the files it dropped).
        readSnapshot.map(RefreshExecutor::liveRecords).orElse(0L),
        start,
        System.currentTimeMillis() - start,
        committed.snapshotId(),
        1,
        warnings,
        expectationCounts);
  }

  /**
   * The run's pins, each moved up to the snapshot the view last read its source at when that
   * snapshot descends from the pin. A run pins its sources before it refreshes its views, and a
   * view's refresh may wait for another refresh of it ({@link RefreshLocks}) or be overtaken by
   * one in another process, which read a newer snapshot: refreshing at the pin would take the view
   * back in time (a full refresh to older data). From the newer snapshot the source has nothing
   * to add.
   */
  private Map<String, Source> notBehind(MaterializedView mv, Map<String, Source> prePinned, List<SourceState> recorded) {
    Map<String, Source> pins = new LinkedHashMap<>(prePinned);
    for (Map.Entry<String, Source> entry : prePinned.entrySet()) {
      Source pin = entry.getValue();
      String uuid = pin.table().uuid().toString();
      Optional<Long> read =
          recorded.stream()
              .filter(state -> state.type() == SourceState.Type.TABLE && state.uuid().equals(uuid))
              .map(SourceState::snapshotId)
              .flatMap(Optional::stream)
              .findFirst();
      if (read.isEmpty() || pin.snapshot().isEmpty() || read.get() == pin.snapshot().get().snapshotId()) {
        continue;
      }
      // The pin's metadata knows every snapshot up to the pin; only a later one needs a fresh load.
      Source now = pin.table().snapshot(read.get()) != null ? pin : pinning.pinSource(pin.name());
      Table table = now.table();
      long pinnedId = pin.snapshot().get().snapshotId();
      // The recorded snapshot must still be in the table's history: after a rollback past it, the
      // view holds rows the table no longer has, and the pin is right.
      if (table.uuid().toString().equals(uuid)
          && table.snapshot(read.get()) != null
          && table.currentSnapshot() != null
          && org.apache.iceberg.util.SnapshotUtil.isAncestorOf(table, table.currentSnapshot().snapshotId(), read.get())
          && org.apache.iceberg.util.SnapshotUtil.isAncestorOf(table, read.get(), pinnedId)) {
        LOG.info(
            "{} last read {} at snapshot {}, after this run's pin {}: it is read there, not back in time",
            mv, pin.name(), read.get(), pinnedId);
        pins.put(entry.getKey(), new Source(now.name(), now.materializedView(), table, Optional.of(table.snapshot(read.get()))));
      }
    }
    return pins;
  }

  /**
   * Which columns of a source its change is read in ({@link IncrementalRefresh#changeColumns}): a
   * table's, those the definition depends on (its first column alone when it depends on none, to
   * count rows), or every column when the plan does not show which; an MV's, the view columns the
   * definition needs, with the multiplicity of an MV of plain rows.
   */
  private static String columnsRead(Source source, SourceColumns readColumns) {
    Optional<Set<String>> read = IncrementalRefresh.changeColumns(source, readColumns);
    if (source.materializedView().isPresent()) {
      MaterializedView upstream = source.materializedView().get();
      boolean rows = upstream.layout() == StorageLayout.ROWS;
      return read
          .map(columns -> {
            List<String> view = columns.stream().filter(c -> !c.equalsIgnoreCase(StorageLayout.COUNT)).toList();
            if (view.isEmpty()) {
              return rows ? ", in its hidden row count alone (the view reads none of its columns; rows are counted)" : FIRST_ALONE;
            }
            return someOrAll(view, upstream.viewColumns().size(), "view columns") + (rows ? " and its hidden row count" : "");
          })
          .orElse(", in all its columns, hidden ones included" + NOT_TRACED);
    }
    int total = source.table().schema().columns().size();
    return read
        .map(columns -> columns.isEmpty() ? FIRST_ALONE : someOrAll(columns, total, "columns"))
        .orElse(", in all its " + total + " columns" + NOT_TRACED);
  }

  private static final String FIRST_ALONE = ", in its first column alone (the view reads none; rows are counted)";

  private static final String NOT_TRACED =
      " (the definition reads it through a subquery or an operator whose columns are not traced)";

  /** ", in all its {@code total} {@code noun}", or how many of them are read, named when they are few. */
  private static String someOrAll(java.util.Collection<String> read, int total, String noun) {
    if (read.size() >= total) {
      return ", in all its " + total + " " + noun;
    }
    String named = read.size() <= NAMED_COLUMNS ? " (" + String.join(", ", read) + ")" : "";
    return ", in " + read.size() + " of its " + total + " " + noun + named;
  }

  /** Up to how many read columns {@link #columnsRead} names. */
  private static final int NAMED_COLUMNS = 8;

  /**
   * What a refresh of {@code mv} would do now, without doing it: the definition's shape, each
   * source's recorded and current snapshot with the operations in between, and the strategy with
   * its reason. Reads metadata only, but for the subqueries of {@code NOT IN} filters whose sources
   * moved, read at both snapshots as the refresh would.
   */
  public List<String[]> explain(MaterializedView mv) {
    Map<String, String> differing = DefinitionSettings.differing(spark, mv);
    if (!differing.isEmpty()) {
      SparkSession own = DefinitionSettings.sessionWith(spark, differing);
      List<String[]> lines = new ArrayList<>(DefinitionSettings.activeIn(own, () -> new RefreshExecutor(own).explain(mv)));
      lines.add(Math.min(1, lines.size()), new String[] {
          "settings", "refreshes under the settings it was created with: " + DefinitionSettings.describe(spark, differing)});
      return lines;
    }
    try {
      return io.floe.spark.rewrite.RewriteSuppression.withoutRewrite(() -> explainLines(mv));
    } catch (UnresolvedDefinition e) {
      throw new FloeException("Cannot explain the refresh of " + mv + ": " + e.detail, e);
    } catch (RuntimeException e) {
      throw namingTheView(mv, "Cannot explain the refresh of ", e);
    }
  }

  private List<String[]> explainLines(MaterializedView mv) {
    List<String[]> lines = new ArrayList<>();
    Table storage = mv.storageTable();
    Optional<Snapshot> readSnapshot = Optional.ofNullable(storage.currentSnapshot());
    Optional<RefreshState> recorded = mv.refreshState(storage);
    PinnedDefinition pinned = pin(mv, Map.of());
    LogicalPlan analyzed = analyzeDefinition(mv, pinned).queryExecution().analyzed();
    DefinitionShape shape = DefinitionShape.of(pinned.parsed(), analyzed);
    SourceColumns readColumns = SourceColumns.of(analyzed);
    lines.add(new String[] {"materialized view", mv.name().toString()});
    lines.add(new String[] {"refresh policy", mv.refreshPolicy().name()});
    lines.add(new String[] {"storage layout", mv.layout().name() + (readSnapshot.map(s -> RowLineage.keys(storage, s)).orElse(false)
        ? ", a row per source row, matched by the source row's id (row lineage)" : "")});
    lines.add(new String[] {"definition", describeShape(mv, shape, analyzed)});
    Optional<String> blocker = incrementalBlocker(mv, storage, shape);
    boolean sourcesMoved = false;
    String strategy = null;
    for (Source source : pinned.sources()) {
      Optional<SourceState> before = recorded.flatMap(r -> IncrementalRefresh.recordedState(r, source));
      Long from = before.flatMap(SourceState::snapshotId).orElse(null);
      Long to = source.snapshot().map(Snapshot::snapshotId).orElse(null);
      String detail;
      Optional<String> schemaChange =
          before.isEmpty() ? Optional.empty() : IncrementalRefresh.schemaChange(source, before.get(), from, to, readColumns);
      if (recorded.isPresent() && before.isEmpty()) {
        detail = "re-created since the last refresh: full refresh";
        strategy = strategy == null ? "FULL: source " + source.name() + " was re-created" : strategy;
        sourcesMoved = true;
      } else if (schemaChange.isPresent()) {
        detail = "snapshot " + (from == null ? "none" : from) + " → " + (to == null ? "none" : to) + ": " + schemaChange.get();
        strategy = strategy == null ? "FULL: " + schemaChange.get() : strategy;
        sourcesMoved = true;
      } else if (java.util.Objects.equals(from, to)) {
        Optional<Integer> schemaWas = before.flatMap(SourceState::schemaId);
        Optional<Integer> schemaNow = currentState(pinned, source).schemaId();
        detail = "unchanged at snapshot " + (to == null ? "none" : to)
            + (before.isEmpty() || schemaWas.equals(schemaNow)
                ? ""
                : "; schema " + schemaWas.map(String::valueOf).orElse("none") + " → " + schemaNow.map(String::valueOf).orElse("none")
                    + ", changed in columns the view does not read");
      } else {
        sourcesMoved = true;
        boolean acrossSchemas = before.isPresent() && source.materializedView().isEmpty();
        io.floe.spark.capture.ChangeCapture.Inspection inspection =
            io.floe.spark.capture.ChangeCapture.inspect(source.table(), IncrementalRefresh.sparkName(source), from, to, acrossSchemas);
        io.floe.spark.capture.ChangeCapture capture = new io.floe.spark.capture.ChangeCapture(spark);
        Optional<String> incomparable =
            IncrementalRefresh.changeColumns(source, readColumns).map(capture::reading).orElse(capture)
                .incomparableColumn(source.table(), IncrementalRefresh.sparkName(source), to);
        detail = "snapshot " + (from == null ? "none" : from) + " → " + to + " (" + String.join(", ", inspection.operations()) + ")";
        if (inspection.unsupportedReason().isPresent()) {
          detail += ": change not capturable, " + inspection.unsupportedReason().get();
          strategy = strategy == null ? "FULL: " + inspection.unsupportedReason().get() : strategy;
        } else if (inspection.operations().stream().allMatch("replace"::equals)) {
          detail += ": compaction only, nothing to read";
        } else if (SourceFeeds.readsFromFeed(source, from, to)) {
          detail += ": read the changes its refreshes recorded in its change feed";
        } else if (incomparable.isPresent()) {
          detail += ": change not capturable, " + incomparable.get();
          strategy = strategy == null ? "FULL: " + incomparable.get() : strategy;
        } else if (inspection.operations().contains("replace")) {
          detail += ": read the changed data files only" + columnsRead(source, readColumns)
              + "; the commits between compactions run by run, where that reads less than the files the compactions rewrote";
        } else {
          detail += ": read the changed data files only" + columnsRead(source, readColumns);
        }
      }
      lines.add(new String[] {"source " + source.name() + (source.materializedView().isPresent() ? " (materialized view)" : ""), detail});
    }
    if (recorded.isEmpty() || readSnapshot.isEmpty()) {
      strategy = "FULL: " + MaterializedView.writtenOutsideARefresh(storage).orElse("first refresh");
    } else if (recorded.get().viewVersionId() != mv.versionId()) {
      strategy = "FULL: definition changed";
    } else if (!sourcesMoved && new HashSet<>(recorded.get().sourceStates()).equals(new HashSet<>(pinned.sourceStates()))) {
      strategy = "NO_CHANGE: no source changed since the last refresh; nothing is committed";
    } else if (blocker.isPresent()) {
      strategy = "FULL: " + blocker.get();
    } else if (!sourcesMoved) {
      // Only the schemas of columns the view does not read changed: the refresh records them.
      strategy = "INCREMENTAL: no source has new data; the refresh records the sources' new state and writes no rows";
    } else if (strategy == null) {
      IncrementalRefresh incremental = new IncrementalRefresh(spark);
      // The one check that reads data: the state of a NOT IN subquery decides every row's fate.
      strategy =
          incremental.notInStateChange(mv, pinned, recorded.get())
              .map(reason -> "FULL: " + reason)
              .orElseGet(() -> incrementalStrategy(shape, analyzed));
      if (strategy.startsWith("INCREMENTAL") && new SizeChecks(spark).applyTo(pinned.sources())) {
        // Those checks weigh the change itself, which EXPLAIN does not read.
        strategy += "; FULL instead when the size checks find a full refresh costs less for the change ("
            + SizeChecks.DELTA_THRESHOLD_CHECK + "=false turns them off)";
      }
    }
    lines.add(new String[] {"strategy", strategy});
    return lines;
  }

  /** The state {@code source} was pinned at. */
  private static SourceState currentState(PinnedDefinition pinned, Source source) {
    return IncrementalRefresh.stateOf(pinned.sourceStates(), source)
        .orElseThrow(() -> new IllegalStateException("Source " + source.name() + " was not pinned"));
  }

  /** How an incremental refresh of a definition of {@code shape} applies a change. */
  private static String incrementalStrategy(DefinitionShape shape, LogicalPlan analyzed) {
    String strategy =
        "INCREMENTAL: " + (shape.kind() == DefinitionShape.Kind.KEYED
        ? "recompute the view rows of each " + shape.keyed().orElseThrow().operator().unit()
            + " the change touches from the new snapshot, " + keyedReads(shape.keyed().orElseThrow()) + ", merge by row"
        : shape.kind() == DefinitionShape.Kind.LINEAR
        ? "apply the definition to inserted and deleted rows, merge by row"
        : shape.recomputesGroups()
            ? "recompute the groups the change touches, " + groupReads(analyzed, shape) + ", merge by group"
            : shape.roles().contains(ColumnRole.MIN) || shape.roles().contains(ColumnRole.MAX)
            ? "add per-group partial counts and sums of the change" + averages(shape) + distinctCounts(shape)
                + ", take MIN and MAX from the stored and inserted values, recompute a group whose MIN or MAX may have"
                + " been deleted, " + groupReads(analyzed, shape) + ", merge by group"
            : "add per-group partial counts and sums of the change" + averages(shape) + distinctCounts(shape) + ", merge by group");
    if (shape.keyed().map(k -> k.keys().stream().anyMatch(io.floe.spark.ivm.KeyedShape.Key::computed)).orElse(false)) {
      // The key expression runs on every changed row, those the definition filters out too.
      String unit = shape.keyed().orElseThrow().operator().unit();
      strategy += "; FULL instead when the " + unit + " expression fails on a changed source row the definition may leave out";
    }
    if (io.floe.spark.ivm.NotInGuard.filtersByNotIn(analyzed)) {
      strategy += "; FULL instead when a NOT IN subquery empties or gets its first row, or gets its first NULL or loses its last";
    }
    return strategy;
  }

  /** What a keyed recomputation reads of its sources. */
  private static String keyedReads(io.floe.spark.ivm.KeyedShape keyed) {
    String unit = keyed.operator().unit();
    return keyed.keys().size() == 1
        ? "reading the source rows of those " + unit + "s alone (beyond "
            + String.format(Locale.ROOT, "%,d", KeyNarrowing.MAX_LISTED_KEYS) + " " + unit + "s, the rows in their range)"
        : "reading every source row (a row has several " + unit + "s)";
  }

  /** What recomputing groups reads of the sources: the rows of those groups where a grouping column is a source column. */
  private static String groupReads(LogicalPlan analyzed, DefinitionShape shape) {
    List<Integer> keys = shape.keyPositions();
    return !keys.isEmpty() && KeyNarrowing.narrows(analyzed, keys)
        ? "reading the source rows of those groups alone (beyond "
            + String.format(Locale.ROOT, "%,d", KeyNarrowing.MAX_LISTED_KEYS) + " groups, the rows in their range)"
        : "reading every source row (no grouping column is a source column)";
  }

  private static String averages(DefinitionShape shape) {
    return shape.averages().isEmpty() ? "" : ", divide each AVG's running sum by its count";
  }

  private static String distinctCounts(DefinitionShape shape) {
    return shape.distinctColumns().isEmpty()
        ? ""
        : ", add the change's row counts per group and value to the stored ones for COUNT(DISTINCT)";
  }

  private static String describeShape(MaterializedView mv, DefinitionShape shape, LogicalPlan analyzed) {
    switch (shape.kind()) {
      case LINEAR:
        return "filters and projections over " + inputs(analyzed) + " (linear)";
      case AGGREGATE:
        List<String> columns = new ArrayList<>(mv.viewColumns());
        columns.addAll(mv.hiddenKeys().described());
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < columns.size() && i < shape.roles().size(); i++) {
          parts.add(columns.get(i) + ": " + shape.roles().get(i).name().toLowerCase().replace('_', ' '));
        }
        return "GROUP BY over " + inputs(analyzed) + " (" + String.join(", ", parts) + ")";
      case KEYED:
        List<String> named = new ArrayList<>(mv.viewColumns());
        named.addAll(mv.hiddenKeys().described());
        return shape.keyed().orElseThrow().describe(named);
      default:
        return "not incremental: " + shape.reason();
    }
  }

  /**
   * What a linear or aggregate definition reads: one source, or its joins, an outer join's side
   * that may not match named with its rule ({@code io.floe.spark.ivm.OuterJoinDelta}).
   */
  private static String inputs(LogicalPlan analyzed) {
    List<String> joins = new ArrayList<>();
    analyzed.foreach(node -> {
      if (node instanceof org.apache.spark.sql.catalyst.plans.logical.Join join) {
        joins.add(join.joinType().sql());
      }
      return scala.runtime.BoxedUnit.UNIT;
    });
    if (joins.isEmpty()) {
      return "one source";
    }
    boolean outer = joins.stream().anyMatch(j -> j.contains("OUTER"));
    return "joins (" + String.join(", ", joins) + ")"
        + (outer ? "; a change of an outer join's side that may not match recomputes, new minus old, the rows it matches" : "");
  }

  /** Why this MV cannot be refreshed incrementally now, if it cannot. */
  private Optional<String> incrementalBlocker(MaterializedView mv, Table storage, DefinitionShape shape) {
    if (mv.refreshPolicy() == io.floe.mv.RefreshPolicy.FULL) {
      return Optional.of("refresh policy is FULL");
    }
    if (!Boolean.parseBoolean(spark.conf().get(INCREMENTAL_ENABLED, "true"))) {
      return Optional.of("incremental refresh is disabled (" + INCREMENTAL_ENABLED + "=false)");
    }
    if (shape.kind() == DefinitionShape.Kind.NOT_INCREMENTAL) {
      return Optional.of(shape.reason());
    }
    if (!mv.expectations().isEmpty() && shape.kind() == DefinitionShape.Kind.AGGREGATE) {
      return Optional.of("expectations on a GROUP BY or DISTINCT definition are evaluated by a full refresh");
    }
    if (mv.layout() != shape.layout()) {
      return Optional.of("the storage table was created for full refreshes (" + mv.layout() + " layout)");
    }
    List<String> missing = missingHiddenColumns(storage, shape).stream().map(StructField::name).toList();
    if (!missing.isEmpty()) {
      return Optional.of(
          "the storage table lacks the bookkeeping column(s) " + String.join(", ", missing)
              + " (it was created by an earlier Floe); a full refresh adds them");
    }
    List<String> outdated = outdatedHiddenColumns(storage, shape).stream().map(StructField::name).toList();
    if (!outdated.isEmpty()) {
      return Optional.of(
          "the storage table keeps the bookkeeping column(s) " + String.join(", ", outdated)
              + " in the form an earlier Floe wrote; a full refresh writes them anew");
    }
    List<String> unfilled = unwrittenHiddenColumns(storage, shape);
    if (!unfilled.isEmpty()) {
      return Optional.of(
          "the last refresh wrote the storage rows before the bookkeeping column(s) " + String.join(", ", unfilled)
              + " existed, so they hold no values yet; a full refresh fills them");
    }
    return Optional.empty();
  }

  /**
   * The hidden columns the shape keeps that the schema of the last refresh's snapshot lacked (by
   * field id, so a column dropped and added again counts as new): a full refresh that added them (a
   * schema change, which makes no snapshot) and then failed left them empty in every row.
   * Compactions after that refresh keep its rows, so they do not count.
   */
  private static List<String> unwrittenHiddenColumns(Table storage, DefinitionShape shape) {
    Optional<Snapshot> refreshed = MaterializedView.lastRefreshSnapshot(storage);
    Integer schemaId = refreshed.map(Snapshot::schemaId).orElse(null);
    org.apache.iceberg.Schema written = schemaId == null ? null : storage.schemas().get(schemaId);
    if (written == null) {
      return List.of();
    }
    org.apache.iceberg.Schema current = storage.schema();
    return shape.hiddenFields().stream()
        .map(StructField::name)
        .filter(c -> current.findField(c) != null && written.findField(current.findField(c).fieldId()) == null)
        .toList();
  }

  /**
   * The hidden columns the shape keeps that the storage table has with another type: an earlier
   * Floe kept COUNT(DISTINCT) values in a map, where they are now packed in a binary value.
   */
  private static List<StructField> outdatedHiddenColumns(Table storage, DefinitionShape shape) {
    org.apache.iceberg.Schema schema = storage.schema();
    return shape.hiddenFields().stream()
        .filter(f -> {
          org.apache.iceberg.types.Types.NestedField stored = schema.findField(f.name());
          return stored != null
              && stored.type().typeId() != org.apache.iceberg.spark.SparkSchemaUtil.convert(f.dataType()).typeId();
        })
        .toList();
  }

  /**
   * Replaces the {@linkplain #outdatedHiddenColumns outdated hidden columns} by empty ones of the
   * type the shape keeps, in one schema update (as {@link ColumnWidening} replaces a column), for
   * the full refresh to write anew. The new column has a new field id, so until a refresh writes
   * it, {@link #unwrittenHiddenColumns} keeps the next refresh full: a failed one is retried in full.
   */
  private void replaceOutdatedHiddenColumns(MaterializedView mv, Table storage, DefinitionShape shape) {
    List<StructField> outdated = outdatedHiddenColumns(storage, shape);
    if (outdated.isEmpty()) {
      return;
    }
    var update = storage.updateSchema();
    for (StructField field : outdated) {
      org.apache.iceberg.types.Type type = org.apache.iceberg.spark.SparkSchemaUtil.convert(field.dataType());
      update.deleteColumn(field.name()).addColumn(field.name(), type);
    }
    update.commit();
    catalog.invalidateSparkCache(mv.storageName());
  }

  private static List<StructField> missingHiddenColumns(Table storage, DefinitionShape shape) {
    org.apache.iceberg.Schema schema = storage.schema();
    return shape.hiddenFields().stream().filter(f -> schema.findField(f.name()) == null).toList();
  }

  /**
   * Adds the hidden columns the shape keeps and the storage table lacks (a storage table created
   * before Floe kept them): optional columns, so the table's rows and history are unchanged.
   */
  private void addMissingHiddenColumns(MaterializedView mv, Table storage, DefinitionShape shape) {
    addMissingColumns(mv, storage, missingHiddenColumns(storage, shape));
  }

  /**
   * Adds the hidden columns of the {@link StorageLayout#ROWS} layout the storage table lacks, which
   * its full refresh writes whatever the definition's shape now is.
   */
  private void addMissingRowKeyColumns(MaterializedView mv, Table storage) {
    org.apache.iceberg.Schema schema = storage.schema();
    addMissingColumns(
        mv,
        storage,
        StorageLayout.ROWS.hiddenColumns(List.of()).stream()
            .filter(c -> schema.findField(c) == null)
            .map(c -> new StructField(c, org.apache.spark.sql.types.DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty()))
            .toList());
  }

  private static StructField lineageField() {
    return new StructField(
        RowLineage.COLUMN, org.apache.spark.sql.types.DataTypes.LongType, true, org.apache.spark.sql.types.Metadata.empty());
  }

  private void addMissingColumns(MaterializedView mv, Table storage, List<StructField> missing) {
    missing = missing.stream().filter(f -> storage.schema().findField(f.name()) == null).toList();
    if (missing.isEmpty()) {
      return;
    }
    var update = storage.updateSchema();
    org.apache.iceberg.Schema added =
        org.apache.iceberg.spark.SparkSchemaUtil.convert(new StructType(missing.toArray(new StructField[0])));
    added.columns().forEach(c -> update.addColumn(c.name(), c.type()));
    update.commit();
    catalog.invalidateSparkCache(mv.storageName());
  }

  /**
   * The definition keying its rows by their source rows' ids ({@link RowLineage}), when a full
   * refresh of {@code mv} can key them so now.
   */
  private Optional<LogicalPlan> lineageDefinition(
      MaterializedView mv, DefinitionShape shape, PinnedDefinition pinned, Dataset<Row> definition) {
    if (mv.layout() != StorageLayout.ROWS || shape.kind() != DefinitionShape.Kind.LINEAR || !mv.hiddenKeys().isEmpty()) {
      return Optional.empty();
    }
    List<Source> sources = pinned.sources();
    return RowLineage.keyedDefinition(shape.augmentedParsed().orElseThrow(), definition.queryExecution().analyzed(), sources)
        .filter(keyed -> sources.get(0).snapshot().map(s -> RowLineage.rowsHaveIds(sources.get(0).table(), s)).orElse(true));
  }

  /** The rows of the storage table for a full refresh, with the hidden columns its layout keeps. */
  private Dataset<Row> storageRows(
      MaterializedView mv, Table storage, DefinitionShape shape, PinnedDefinition pinned, Dataset<Row> definition,
      Optional<LogicalPlan> lineage) {
    String[] viewColumns = mv.viewColumns().toArray(new String[0]);
    switch (mv.layout()) {
      case ROWS:
        addMissingRowKeyColumns(mv, storage);
        List<String> rowColumns = mv.rowColumns();
        Dataset<Row> rows;
        if (lineage.isPresent()) {
          addMissingColumns(mv, storage, List.of(lineageField()));
          List<String> keyed = new ArrayList<>(rowColumns);
          keyed.add(RowLineage.COLUMN);
          rows = (Dataset<Row>) AggregateDelta.readPinned(spark, pinning, mv, pinned, lineage.get(), keyed);
        } else {
          rows = definition.toDF(rowColumns.toArray(new String[0]));
        }
        Column[] columns = rowColumns.stream().map(c -> functions.col(StorageLayout.quote(c))).toArray(Column[]::new);
        // Ranges of the clustering column, one per task and file; the aggregate below needs no
        // other shuffle, since equal rows fall in one range.
        Optional<String> clustering = StorageLayout.clusteringColumn(rows.schema());
        Dataset<Row> clustered =
            clustering.isEmpty()
                ? rows
                : (Dataset<Row>) rows.repartitionByRange(clusteredFiles(pinned), functions.col(StorageLayout.quote(clustering.get())));
        if (lineage.isPresent()) {
          // A row per source row: its own id keys it.
          return (Dataset<Row>) RowLineage.storageRows(clustered);
        }
        Dataset<Row> counted = clustered.groupBy(columns).agg(functions.count(functions.lit(1)).as(StorageLayout.COUNT));
        if (storage.schema().findField(RowLineage.COLUMN) != null) {
          counted = counted.withColumn(RowLineage.COLUMN, functions.lit(null).cast(org.apache.spark.sql.types.DataTypes.LongType));
        }
        return (Dataset<Row>) StorageLayout.withRowKey(counted, rowColumns);
      case GROUPS:
        if (shape.kind() != DefinitionShape.Kind.AGGREGATE) {
          throw new FloeException("Cannot refresh " + mv + ": its storage keeps groups but the definition is not an aggregate: " + shape.reason());
        }
        replaceOutdatedHiddenColumns(mv, storage, shape);
        addMissingHiddenColumns(mv, storage, shape);
        try {
          return (Dataset<Row>) AggregateDelta.aggregatedRows(spark, pinning, mv, shape, pinned, all -> all);
        } catch (RuntimeException e) {
          throw new FloeException("Cannot refresh " + mv + ": " + ErrorMessages.firstLine(e.getMessage()), e);
        }
      default:
        return viewRows(mv, definition);
    }
  }

  /**
   * Setting: about how many rows each storage file of a clustered {@code ROWS} layout holds after a
   * full refresh ({@value #DEFAULT_ROWS_PER_CLUSTERED_FILE} by default). Smaller files let a change
   * of close rows read and rewrite less; more files cost more planning.
   */
  public static final String ROWS_PER_CLUSTERED_FILE = "floe.storage.clustered-rows-per-file";

  private static final long DEFAULT_ROWS_PER_CLUSTERED_FILE = 250_000L;

  /** How many ranges, and so files, a full refresh clusters a {@code ROWS} storage table into. */
  private int clusteredFiles(PinnedDefinition pinned) {
    long perFile = CountSetting.rows(spark, ROWS_PER_CLUSTERED_FILE, DEFAULT_ROWS_PER_CLUSTERED_FILE, 1);
    long sourceRows = pinned.sources().stream().mapToLong(Source::totalRecords).sum();
    return (int) Math.min(10_000, Math.max(1, (sourceRows + perFile - 1) / perFile));
  }

  /** Glue's switch for incremental refresh; Floe honours it, and defaults it to on. */
  public static final String INCREMENTAL_ENABLED = "spark.sql.optimizer.incrementalMVRefresh.enabled";

  /**
   * For a view with nothing to do: the source MVs that are themselves stale, whose own refresh
   * (or {@code CASCADE} from them) would bring this view new rows. Empty text when there are none.
   */
  private String staleUpstreams(PinnedDefinition pinned) {
    io.floe.spark.mv.FreshnessCheck check = new io.floe.spark.mv.FreshnessCheck(catalog);
    List<String> stale = new ArrayList<>();
    List<String> movedSinceRun = new ArrayList<>();
    for (Source source : pinned.sources()) {
      if (source.materializedView().isEmpty()) {
        continue;
      }
      MaterializedView upstream = source.materializedView().get();
      io.floe.mv.Freshness freshness = check.evaluate(upstream);
      if (freshness.fresh()) {
        continue;
      }
      // Refreshed in this run, it can be stale only by later writes to its sources, unless a view
      // it reads is stale itself (outside the run): that one needs refreshing first.
      boolean throughStaleView = freshness.staleReasons().stream().anyMatch(r -> r.startsWith("upstream "));
      (source.refreshedInRun() && !throughStaleView ? movedSinceRun : stale).add(upstream.name().toString());
    }
    String advice = "";
    if (!stale.isEmpty()) {
      advice += "; its source" + (stale.size() == 1 ? " " : "s ") + String.join(", ", stale) + (stale.size() == 1 ? " is" : " are")
          + " stale itself: refresh " + (stale.size() == 1 ? "it" : "them") + " first, or use REFRESH ... CASCADE from "
          + (stale.size() == 1 ? "it" : "them");
    }
    if (!movedSinceRun.isEmpty()) {
      // Refreshed in this very run: its own sources were written after the run pinned them.
      advice += "; its source" + (movedSinceRun.size() == 1 ? " " : "s ") + String.join(", ", movedSinceRun)
          + (movedSinceRun.size() == 1 ? " has" : " have") + " sources written after this run read them: the next"
          + " refresh takes those writes";
    }
    return advice;
  }

  /**
   * Why {@code mv} could not be refreshed incrementally under {@code REFRESH POLICY INCREMENTAL},
   * whatever its sources do: a definition no delta rule maintains, or a storage table created for
   * full refreshes. Empty when it could.
   */
  public Optional<String> whyNeverIncremental(MaterializedView mv) {
    PinnedDefinition pinned = pin(mv, Map.of());
    DefinitionShape shape = DefinitionShape.of(pinned.parsed(), analyzeDefinition(mv, pinned).queryExecution().analyzed());
    if (shape.kind() == DefinitionShape.Kind.NOT_INCREMENTAL) {
      return Optional.of(shape.reason());
    }
    if (mv.layout() != shape.layout()) {
      return Optional.of(
          "its storage table was created for full refreshes (" + mv.layout() + " layout); create it again with"
              + " CREATE OR REPLACE MATERIALIZED VIEW ... REFRESH POLICY INCREMENTAL");
    }
    return Optional.empty();
  }

  /** Pins the sources of {@code mv}'s definition, read as the view's columns (see {@link DefinitionColumns}). */
  private PinnedDefinition pin(MaterializedView mv, Map<String, Source> prePinned) {
    PinnedDefinition pinned = pinning.pin(definitionOf(mv), mv.defaultCatalog(), mv.defaultNamespace(), prePinned);
    return asViewColumns(mv, pinned, analyzeDefinition(mv, pinned));
  }

  /**
   * The parsed definition the refresh computes: the view's query with the hidden key columns the
   * storage keeps appended to its select list ({@link io.floe.spark.ivm.HiddenKeys}).
   */
  private LogicalPlan definitionOf(MaterializedView mv) {
    LogicalPlan parsed = pinning.parse(mv.query());
    try {
      return mv.hiddenKeys().appendTo(parsed);
    } catch (IllegalArgumentException e) {
      throw new FloeException("Cannot refresh " + mv + ": " + e.getMessage(), e);
    }
  }

  /**
   * The view's rows of a computed definition: its columns, by position, as the view's, without the
   * hidden key columns that follow them.
   */
  private static Dataset<Row> viewRows(MaterializedView mv, Dataset<Row> definition) {
    List<String> view = mv.viewColumns();
    List<String> row = mv.rowColumns();
    if (definition.columns().length == view.size() || definition.columns().length != row.size()) {
      return definition.toDF(view.toArray(new String[0]));
    }
    // Renamed first: the definition's own names may repeat (SELECT o.id, c.id), the row's do not.
    return definition.toDF(row.toArray(new String[0]))
        .select(view.stream().map(c -> functions.col(StorageLayout.quote(c))).toArray(Column[]::new));
  }

  /**
   * {@code pinned}, or when its {@code analyzed} columns are not the view's, read as them. A
   * definition that lacks one of them is refused and the view keeps its rows.
   */
  private static PinnedDefinition asViewColumns(MaterializedView mv, PinnedDefinition pinned, Dataset<Row> analyzed) {
    Optional<List<String>> columns;
    try {
      columns = DefinitionColumns.projection(mv, List.of(analyzed.columns()), mv.hiddenKeys().columns());
    } catch (FloeException e) {
      throw new FloeException(
          "Cannot refresh " + e.getMessage() + "; the view keeps its rows. Define it again with CREATE OR REPLACE"
              + " MATERIALIZED VIEW", e);
    }
    return columns
        .map(c -> new PinnedDefinition(
            DefinitionColumns.select(pinned.parsed(), c), DefinitionColumns.select(pinned.plan(), c), pinned.sources()))
        .orElse(pinned);
  }

  private Dataset<Row> analyzeDefinition(MaterializedView mv, PinnedDefinition pinned) {
    try {
      return Dataset.ofRows(spark, pinned.plan());
    } catch (Exception e) { // not RuntimeException: Spark throws AnalysisException undeclared
      throw new UnresolvedDefinition(mv, sourceSchemaChanges(mv, pinned), e);
    }
  }

  /** The schema changes of {@code mv}'s sources since its last refresh, in words: what may have broken its definition. */
  private static List<String> sourceSchemaChanges(MaterializedView mv, PinnedDefinition pinned) {
    List<String> changes = new ArrayList<>();
    try {
      for (SourceState was : mv.refreshState(mv.storageTable()).map(RefreshState::sourceStates).orElse(List.of())) {
        pinned.sourceStates().stream()
            .filter(now -> now.type() == SourceState.Type.TABLE && now.uuid().equals(was.uuid()))
            .filter(now -> !now.schemaId().equals(was.schemaId()))
            .findFirst()
            .flatMap(was::describeChangeTo)
            .ifPresent(changes::add);
      }
    } catch (RuntimeException e) {
      // Only a hint for the message of the failure being reported.
      LOG.debug("Cannot read the recorded state of {}", mv, e);
    }
    return changes;
  }

  /**
   * A definition Spark no longer analyzes against its sources, as a refresh reports it; {@link
   * #detail} without the action, for {@code EXPLAIN REFRESH} to report under its own.
   */
  private static final class UnresolvedDefinition extends FloeException {
    final String detail;

    UnresolvedDefinition(MaterializedView mv, List<String> schemaChanges, Exception cause) {
      this(detail(schemaChanges, cause), mv, cause);
    }

    private UnresolvedDefinition(String detail, MaterializedView mv, Exception cause) {
      super("Cannot refresh " + mv + ": " + detail, cause);
      this.detail = detail;
    }

    private static String detail(List<String> schemaChanges, Exception cause) {
      String error = ErrorMessages.firstLine(cause.getMessage());
      return schemaChanges.isEmpty()
          ? error
          : "its definition no longer resolves against its sources (" + String.join("; ", schemaChanges)
              + " since the last refresh): " + error;
    }
  }

  /**
   * The failure with {@code action} and the view's name in front: a failure while computing or committing the rows
   * (a bad cast under ANSI mode, a commit race lost too often) otherwise says nothing about which
   * view failed.
   */
  private static FloeException namingTheView(MaterializedView mv, String action, Exception e) {
    if (e instanceof FloeException && e.getMessage() != null && e.getMessage().contains(mv.toString())) {
      return (FloeException) e;
    }
    return new FloeException(action + mv + ": " + ErrorMessages.firstLine(e.getMessage()), e);
  }

  private static String fullRefreshReason(
      MaterializedView mv, Table storage, Optional<RefreshState> recorded, boolean full) {
    // What makes the refresh full whatever was asked comes first: a replacement's refresh is
    // requested in full, but its reason is its new definition.
    if (recorded.isEmpty()) {
      // A later version without a refresh: a replacement that needed a new storage table.
      return MaterializedView.writtenOutsideARefresh(storage)
          .orElse(mv.versionId() > 1 ? "definition changed" : "first refresh");
    }
    if (recorded.get().viewVersionId() != mv.versionId()) {
      return "definition changed";
    }
    if (full) {
      return "full refresh requested";
    }
    return "sources changed; incremental refresh is not enabled";
  }

  private static Snapshot findCommitted(Table storage, String stateJson) {
    for (Snapshot snapshot : storage.snapshots()) {
      if (stateJson.equals(snapshot.summary().get(RefreshState.SUMMARY_KEY))) {
        return snapshot;
      }
    }
    throw new IllegalStateException("Refresh commit of " + storage.name() + " is not in its history");
  }

  private static long liveRecords(Snapshot snapshot) {
    return summaryCount(snapshot, "total-records") - summaryCount(snapshot, "total-position-deletes")
        - summaryCount(snapshot, "total-equality-deletes");
  }

  private static long summaryCount(Snapshot snapshot, String key) {
    String value = snapshot.summary().get(key);
    return value == null ? 0 : Long.parseLong(value);
  }

}
