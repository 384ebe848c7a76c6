package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.abs;
import static org.apache.spark.sql.functions.array_repeat;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.explode;
import static org.apache.spark.sql.functions.greatest;
import static org.apache.spark.sql.functions.isnan;
import static org.apache.spark.sql.functions.least;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.floe.ErrorMessages;
import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.mv.SourceState;
import io.floe.refresh.ExpectationResult;
import io.floe.refresh.ExpectationResultParser;
import io.floe.refresh.RefreshType;
import io.floe.spark.Plans;
import io.floe.spark.refresh.ExpectationCheck;
import io.floe.spark.Scala;
import io.floe.spark.capture.CapturedChange;
import io.floe.spark.capture.ChangeFeed;
import io.floe.spark.capture.ChangeCapture;
import io.floe.spark.capture.ChangeKind;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.PinnedDefinition;
import io.floe.spark.refresh.RowCountSetting;
import io.floe.spark.refresh.Source;
import io.floe.spark.refresh.SourcePinning;
import io.floe.spark.refresh.StorageWriteGuard;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.CommitMetadata;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Steps 2 to 4 of the refresh protocol for a definition with an incremental shape: captures the
 * source's change since the recorded snapshot, propagates it through the definition with the
 * shape's delta rule, and applies the resulting change to the storage table in one commit.
 */
public final class IncrementalRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(IncrementalRefresh.class);

  /** What an incremental attempt did: applied the change, or found a reason to recompute. */
  public sealed interface Outcome permits Applied, Fallback {}

  /** The change was committed as {@code snapshotId}. */
  public record Applied(
      Map<String, Long> rowsRead,
      long rowsWritten,
      long rowsRemoved,
      long snapshotId,
      String reason,
      List<ExpectationResult> expectations,
      List<String> warnings)
      implements Outcome {}

  /** Incremental refresh is impossible here; a full refresh must run, for this reason. */
  public record Fallback(String reason) implements Outcome {}

  private static final String WEIGHT = ChangeCapture.WEIGHT;
  private static final String DELETE = "__floe_delete";
  private static final String RECHECK = "__floe_recheck";

  private final SparkSession spark;
  private final SourcePinning pinning;

  public IncrementalRefresh(SparkSession spark) {
    this.spark = spark;
    this.pinning = new SourcePinning(spark);
  }

  /**
   * Refreshes {@code mv} from the change of its single source between the recorded and the
   * pinned snapshot.
   *
   * @param readSnapshot the storage snapshot the refresh started from
   * @param readColumns the columns the analyzed definition reads of its sources
   */
  public Outcome refresh(
      MaterializedView mv,
      Table storage,
      Snapshot readSnapshot,
      RefreshState recorded,
      PinnedDefinition pinned,
      DefinitionShape shape,
      LogicalPlan analyzed,
      SourceColumns readColumns,
      String stateJson) {
    List<Source> sources = pinned.sources();
    List<Source> oldSources = new ArrayList<>(sources);
    // Storage rows keyed by their source rows' ids are matched by them (RowLineage).
    Optional<LogicalPlan> keyed = Optional.empty();
    if (shape.kind() == DefinitionShape.Kind.LINEAR && RowLineage.keys(storage, readSnapshot)) {
      keyed = RowLineage.keyedDefinition(shape.augmentedParsed().orElseThrow(), analyzed, sources);
      if (keyed.isEmpty()) {
        return new Fallback("the stored rows are keyed by their source rows' ids, which the source no longer gives");
      }
    }
    boolean byLineage = keyed.isPresent();
    Map<String, Long> rowsRead = new LinkedHashMap<>();
    List<Integer> moved = new ArrayList<>();
    List<Dataset<Row>> zsets = new ArrayList<>();
    List<Boolean> appends = new ArrayList<>();
    List<Boolean> small = new ArrayList<>();
    List<String> operations = new ArrayList<>();
    boolean appendOnly = true;
    for (int i = 0; i < sources.size(); i++) {
      Source source = sources.get(i);
      Optional<SourceState> before = recordedState(recorded, source);
      if (before.isEmpty()) {
        return new Fallback("source " + source.name() + " was re-created since the last refresh");
      }
      // A source MV whose definition changed but kept its storage table (same columns) is read
      // like any table: its storage snapshots' difference is exactly the change of its rows. A
      // replacement that needed new storage shows up above as a re-created source.
      Long from = before.get().snapshotId().orElse(null);
      Long to = source.snapshot().map(Snapshot::snapshotId).orElse(null);
      // Before the snapshots: a column renamed with no data written since changes what the view
      // computes without a new snapshot.
      Optional<String> schemaChange = schemaChange(source, before.get(), from, to, readColumns);
      if (schemaChange.isPresent()) {
        return new Fallback(schemaChange.get());
      }
      if (java.util.Objects.equals(from, to)) {
        continue;
      }
      if (to == null) {
        return new Fallback("source " + source.name() + " has no snapshot");
      }
      // The schemas that matter were checked above; the snapshots' own may differ (a rename made
      // and refreshed in full after the older one was written).
      boolean acrossSchemas = source.materializedView().isEmpty();
      CapturedChange change =
          fromFeed(source, from, to)
              .<CapturedChange>map(d -> d)
              .orElseGet(() -> {
                ChangeCapture capture = capture(source, shape, readSnapshot);
                capture = changeColumns(source, readColumns).map(capture::reading).orElse(capture);
                capture = byLineage ? capture.byRowLineage() : capture;
                return (acrossSchemas ? capture.acrossSchemaChanges() : capture)
                    .capture(source.table(), sparkName(source), from, to);
              });
      if (change instanceof CapturedChange.Unsupported) {
        return new Fallback(((CapturedChange.Unsupported) change).reason());
      }
      CapturedChange.Delta delta = (CapturedChange.Delta) change;
      rowsRead.put(source.name().toString(), delta.rowsScanned());
      operations.addAll(delta.operations());
      if (delta.kind() == ChangeKind.NONE) {
        continue;
      }
      appendOnly &= delta.kind() == ChangeKind.APPEND_ONLY;
      oldSources.set(
          i,
          new Source(source.name(), source.materializedView(), source.table(),
              from == null ? Optional.empty() : Optional.ofNullable(source.table().snapshot(from))));
      moved.add(i);
      // A small change is processed in one task: the aggregates and joins over it then need no
      // shuffle, each of which costs a Spark job, where the rows would take milliseconds. A change
      // read from few rows is small; one read from many (deletes spread over every file of a large
      // table) is counted, which costs a job over its computed rows.
      boolean fewRows =
          delta.rowsScanned() <= SINGLE_TASK_CHANGE_ROWS
              || delta.zset().limit((int) SINGLE_TASK_CHANGE_ROWS + 1).count() <= SINGLE_TASK_CHANGE_ROWS;
      Dataset<Row> zset = fewRows ? delta.zset().coalesce(1) : delta.zset();
      zsets.add(logicalRows(zset, source));
      appends.add(delta.kind() == ChangeKind.APPEND_ONLY);
      small.add(fewRows);
    }
    ExpectationCheck check = new ExpectationCheck(mv);
    if (moved.isEmpty()) {
      List<ExpectationResult> none = check.nothingEvaluated();
      String reason = "sources changed without data changes" + (operations.isEmpty() ? "" : " (" + String.join(", ", operations) + ")");
      long snapshot = commitStateOnly(storage, readSnapshot, stateJson, reason, none, byLineage);
      new io.floe.spark.mv.MaterializedViewCatalog(spark).invalidateSparkCache(mv.storageName());
      return new Applied(rowsRead, 0, 0, snapshot, reason, none, List.of());
    }

    Optional<String> notIn = notInStateChanged(mv, pinned, sources, oldSources, rowsRead);
    if (notIn.isPresent()) {
      return new Fallback(notIn.get());
    }

    String suffix = UUID.randomUUID().toString().replace("-", "");
    String changes = "__floe_changes_" + suffix;
    List<String> views = new ArrayList<>();
    try {
      Summary summary;
      StorageMerge merge;
      Optional<FeedEntry> feed = Optional.empty();
      List<ExpectationResult> expectations = List.of();
      // The rows expectations judged: their rejected ones are quarantined once the change committed.
      Optional<Dataset<Row>> judged = Optional.empty();
      if (shape.kind() == DefinitionShape.Kind.AGGREGATE) {
        Optional<String> scansWhole = outerJoinReadsMoreThanItWrites(mv, shape, readSnapshot, pinned, sources, oldSources, moved);
        if (scansWhole.isPresent()) {
          return new Fallback(scansWhole.get());
        }
        ChangeViews changed = ChangeViews.of(zsets, appends, small, suffix, views);
        Terms terms =
            terms(mv, shape.augmentedParsed().orElseThrow(), groupColumns(mv, shape), sources, oldSources, moved, changed);
        List<String> keys = groupKeys(mv, shape);
        Dataset<Row> affected =
            terms.inserted().select(StorageLayout.columns(keys)).union(terms.deleted().select(StorageLayout.columns(keys))).distinct().localCheckpoint(true);
        Optional<String> tooCostly =
            recomputesMostGroups(shape, readSnapshot, pinned, affected);
        if (tooCostly.isPresent()) {
          return new Fallback(tooCostly.get());
        }
        // Built once the checks above kept the refresh incremental: a definition that recomputes
        // its touched groups builds their maps from the sources.
        Map<DefinitionShape.DistinctColumn, Terms> distinct = new LinkedHashMap<>();
        if (!shape.recomputesGroups()) {
          for (DefinitionShape.DistinctColumn column : shape.distinctColumns()) {
            distinct.put(
                column, terms(mv, column.valueCounts(), DistinctState.countColumns(keys), sources, oldSources, moved, changed));
          }
        }
        Dataset<Row> rows =
            groupChange(mv, shape, readSnapshot, pinned, terms, distinct, keys, affected, rowsRead);
        rows.createOrReplaceTempView(changes);
        summary = groupSummary(rows, keys, storage, readSnapshot);
        merge = StorageMerge.of(groupMerge(mv, shape, changes, summary.bounds()));
      } else {
        Dataset<Row> rows;
        if (keyed.isPresent()) {
          LineageChange change = lineageChange(mv, keyed.get(), sources, oldSources, zsets.get(0), check, suffix, views);
          if (change.repeated() > 0) {
            return new Fallback(change.repeated() + " source row id(s) each give more than one row, so the stored rows"
                + " cannot be matched by them");
          }
          change.rows().createOrReplaceTempView(changes);
          String reason = changedReason(appendOnly, operations);
          long snapshot = commitMerge(mv, storage, readSnapshot, lineageMerge(mv, changes, change), Optional.empty(), stateJson, reason,
              change.expectations(), true);
          List<String> warnings = new ArrayList<>();
          change.judged().flatMap(rejected -> check.quarantineCommitted(rejected, System.currentTimeMillis(), false))
              .ifPresent(warnings::add);
          Map<String, String> committed = storage.snapshot(snapshot).summary();
          long removed = summaryCount(committed, SnapshotSummary.ADDED_POS_DELETES_PROP)
              - summaryCount(committed, SnapshotSummary.REMOVED_POS_DELETES_PROP);
          return new Applied(rowsRead, summaryCount(committed, SnapshotSummary.ADDED_RECORDS_PROP), removed, snapshot, reason,
              change.expectations(), warnings);
        } else if (shape.kind() == DefinitionShape.Kind.KEYED) {
          List<Source> changed = moved.stream().map(sources::get).collect(Collectors.toList());
          KeyedRecompute.Change change =
              new KeyedRecompute(spark).change(mv, shape.keyed().orElseThrow(), readSnapshot, pinned, changed, zsets, rowsRead, check);
          if (change.rows().isEmpty()) {
            return new Fallback(change.fallback());
          }
          expectations = change.expectations();
          rows = change.rows().get();
          judged = change.judged();
        } else {
          Terms terms =
              terms(mv, shape.augmentedParsed().orElseThrow(), mv.viewColumns(), sources, oldSources, moved,
                  ChangeViews.of(zsets, appends, small, suffix, views));
          Dataset<Row> inserted = terms.inserted();
          Dataset<Row> deleted = terms.deleted();
          if (!check.isEmpty()) {
            // Constraints are judged on the rows the change brings in; DROP ROW filters both sides
            // alike, so a dropped row's later deletion cancels nothing that was stored.
            ExpectationCheck.Judged judgement = check.judgeIncoming(inserted);
            expectations = judgement.results();
            inserted = judgement.passing();
            deleted = check.keepPassing(deleted);
            judged = Optional.of(judgement.judged());
          }
          rows = linearChange(mv, inserted, deleted);
        }
        rows.createOrReplaceTempView(changes);
        LinearSummary linear = linearSummary(mv, rows, storage, readSnapshot);
        summary = linear.summary();
        merge = linearMerge(mv, changes, rows.schema(), linear.keys(), summary.bounds());
        if (ChangeFeed.isOpen(storage)) {
          feed = Optional.of(new FeedEntry(feedRows(mv, rows), summary.removed() == 0));
        }
      }
      String reason = changedReason(appendOnly, operations);
      long snapshot = commitMerge(mv, storage, readSnapshot, merge, feed, stateJson, reason, expectations, false);
      List<String> warnings = new ArrayList<>();
      judged.flatMap(rejected -> check.quarantineCommitted(rejected, System.currentTimeMillis(), false))
          .ifPresent(warnings::add);
      return new Applied(rowsRead, summary.written(), summary.removed(), snapshot, reason, expectations, warnings);
    } finally {
      views.forEach(v -> spark.catalog().dropTempView(v));
      spark.catalog().dropTempView(changes);
    }
  }

  /**
   * Up to how many rows a source's change may hold and still be processed in one task: far fewer
   * than a task handles in the time a shuffle between two tasks costs.
   */
  private static final long SINGLE_TASK_CHANGE_ROWS = 100_000;

  /** The definition's change, as the rows it gains and the rows it loses (each repeated). */
  private record Terms(Dataset<Row> inserted, Dataset<Row> deleted) {}

  /**
   * The temporary views of the changes of the moved sources, by their position in {@code moved}:
   * each change's inserted rows and its deleted rows, each repeated as often as its weight says.
   * An appending change deletes nothing, and its deleted rows are a filter Spark knows to be empty,
   * so every term over them is pruned from the plan instead of run over no rows.
   */
  private record ChangeViews(List<String> inserted, List<String> deleted, List<Boolean> small) {
    /** @param small by moved source, whether its change is small enough to broadcast */
    static ChangeViews of(
        List<Dataset<Row>> zsets, List<Boolean> appends, List<Boolean> small, String suffix, List<String> views) {
      List<String> inserted = new ArrayList<>();
      List<String> deleted = new ArrayList<>();
      for (int m = 0; m < zsets.size(); m++) {
        inserted.add("__floe_ins_" + m + "_" + suffix);
        deleted.add("__floe_del_" + m + "_" + suffix);
        expand(zsets.get(m).filter(col(WEIGHT).gt(0)), false).createOrReplaceTempView(inserted.get(m));
        Column removed = appends.get(m) ? lit(false) : col(WEIGHT).lt(0);
        expand(zsets.get(m).filter(removed), true).createOrReplaceTempView(deleted.get(m));
      }
      views.addAll(inserted);
      views.addAll(deleted);
      return new ChangeViews(inserted, deleted, small);
    }
  }

  /**
   * The change of {@code definition} (the MV's definition, or one derived from it), its columns
   * named {@code names}, from the changes of the {@code moved} sources: one {@link #term} per read
   * of a changed source, for its inserted and for its deleted rows.
   */
  private Terms terms(
      MaterializedView mv,
      LogicalPlan definition,
      List<String> names,
      List<Source> sources,
      List<Source> oldSources,
      List<Integer> moved,
      ChangeViews changes) {
    List<Integer> reads = reads(mv, definition, sources);
    List<Dataset<Row>> fromInserted = new ArrayList<>();
    List<Dataset<Row>> fromDeleted = new ArrayList<>();
    for (int m = 0; m < moved.size(); m++) {
      // A source read more than once (a self-join) gives one term per read.
      for (int read = 0; read < reads.size(); read++) {
        if (reads.get(read) != moved.get(m)) {
          continue;
        }
        Optional<Terms> outer =
            outerJoinTerms(mv, definition, names, sources, oldSources, read, changes, m);
        if (outer.isPresent()) {
          fromInserted.add(outer.get().inserted());
          fromDeleted.add(outer.get().deleted());
        } else {
          fromInserted.add(term(mv, definition, names, sources, oldSources, read, changes.inserted().get(m)));
          fromDeleted.add(term(mv, definition, names, sources, oldSources, read, changes.deleted().get(m)));
        }
      }
    }
    return new Terms(unionAll(fromInserted), unionAll(fromDeleted));
  }

  private static String changedReason(boolean appendOnly, List<String> operations) {
    return appendOnly ? "sources appended rows" : "sources changed rows (" + String.join(", ", operations) + ")";
  }

  private static Dataset<Row> unionAll(List<Dataset<Row>> parts) {
    Dataset<Row> all = parts.get(0);
    for (int i = 1; i < parts.size(); i++) {
      all = all.union(parts.get(i));
    }
    return all;
  }

  /**
   * The source index of each table reference of the definition, in the order {@link
   * SourcePinning#substitute} visits them: a source read twice appears twice.
   */
  private List<Integer> reads(MaterializedView mv, LogicalPlan definition, List<Source> sources) {
    List<Integer> reads = new ArrayList<>();
    pinning.substitute(
        definition,
        mv.defaultCatalog(),
        mv.defaultNamespace(),
        (parts, name) -> {
          reads.add(indexOf(sources, name.toString()));
          return Plans.relation(parts);
        });
    return reads;
  }

  /**
   * The term of read number {@code changed} when it is on the side of an outer join that may not
   * match ({@link OuterJoinDelta}): the definition with that read at its new snapshot as the rows
   * gained, the same at its old snapshot as the rows lost, the join's other side restricted in both
   * to its rows matching a row the change inserted or deleted. Empty when the read is under no such
   * join, and its term is {@link #term}'s.
   */
  private Optional<Terms> outerJoinTerms(
      MaterializedView mv,
      LogicalPlan definition,
      List<String> names,
      List<Source> sources,
      List<Source> oldSources,
      int changed,
      ChangeViews changes,
      int moved) {
    MarkedRead marked = markedRead(mv, definition, sources, oldSources, changed);
    Optional<OuterJoinDelta.Restricted> restricted = restricted(marked, changes, moved);
    if (restricted.isEmpty()) {
      return Optional.empty();
    }
    // Both terms read the same matching rows of the kept side (under a FULL JOIN, each term thrice):
    // cached before either is computed, the kept side is read once (Spark finds the cached rows in
    // each term's plan by their plan; were it not to, the terms would only read the kept side more
    // often). Left to the first term to fill, the cache would be filled by each of that term's
    // reads at once. The terms are computed here, once: they hold the rows of the few matching
    // keys, and the refresh reads them several times.
    Dataset<Row> matching =
        org.apache.spark.sql.classic.Dataset.ofRows(spark, restricted.get().matching())
            .persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK());
    try {
      matching.count();
      LogicalPlan gained = termPlan(restricted.get(), marked, sources, changes.inserted().get(moved));
      LogicalPlan lost = termPlan(restricted.get(), marked, oldSources, changes.deleted().get(moved));
      return Optional.of(new Terms(checkpointed(rows(gained, names)), checkpointed(rows(lost, names))));
    } finally {
      matching.unpersist(false);
    }
  }

  /** The outer join's restriction for the change of {@code marked}'s read ({@link OuterJoinDelta#restricted}). */
  private Optional<OuterJoinDelta.Restricted> restricted(MarkedRead marked, ChangeViews changes, int moved) {
    return OuterJoinDelta.restricted(
        marked.plan(),
        marked.marker(),
        changeMarker(marked),
        alias -> aliased(marked.parts(),
            new org.apache.spark.sql.catalyst.plans.logical.Union(
                Scala.seq(List.of(relation(changes.inserted().get(moved)), relation(changes.deleted().get(moved)))),
                false, false)),
        changes.small().get(moved),
        plan -> Arrays.asList(org.apache.spark.sql.classic.Dataset.ofRows(spark, plan).columns()),
        changes.small().get(moved) ? this::keptSideNarrowing : matching -> Optional.empty());
  }

  private static String changeMarker(MarkedRead marked) {
    return marked.marker() + "_rows";
  }

  /**
   * One term of the outer join's rule: the restricted definition with the changed read at the
   * snapshots of {@code at} (the new ones, or the old), and, under a FULL JOIN, the changed rows
   * of {@code changeView} (those inserted, or those deleted) where the rule reads them.
   */
  private LogicalPlan termPlan(OuterJoinDelta.Restricted restricted, MarkedRead marked, List<Source> at, String changeView) {
    List<String> parts = marked.parts();
    LogicalPlan read = readAt(parts, at.get(marked.source()));
    return OuterJoinDelta.replaceMarker(
        OuterJoinDelta.replaceMarker(restricted.plan(), marked.marker(), alias -> read),
        changeMarker(marked), alias -> aliased(parts, asRead(changeView, read)));
  }

  /**
   * For a small change, the condition that the semi join {@code matching} of an outer join's kept
   * side with the changed rows implies on the kept side: each column it matches on holds a value
   * the changed rows give ({@link KeyNarrowing#holdsTouched}, listed up to {@value
   * KeyNarrowing#MAX_LISTED_KEYS} keys, and their range). On the kept side's read, Iceberg skips
   * the data files (and partitions) whose column bounds hold none of them: a change of a dimension
   * then reads only the facts that can match it where the facts are partitioned or clustered by
   * the join key. Reads the changed rows' keys once.
   */
  private Optional<Expression> keptSideNarrowing(Join matching) {
    LogicalPlan analyzed = org.apache.spark.sql.classic.Dataset.ofRows(spark, matching).queryExecution().analyzed();
    Optional<Join> semi =
        Scala.optional(analyzed.collectFirst(
            new scala.runtime.AbstractPartialFunction<LogicalPlan, Join>() {
              @Override
              public boolean isDefinedAt(LogicalPlan node) {
                return node instanceof Join join && join.joinType() instanceof org.apache.spark.sql.catalyst.plans.LeftSemi$;
              }

              @Override
              public Join apply(LogicalPlan node) {
                return (Join) node;
              }
            }));
    if (semi.isEmpty()) {
      return Optional.empty();
    }
    List<OuterJoinDelta.KeyPair> pairs = OuterJoinDelta.keyPairs(matching, semi.get());
    if (pairs.isEmpty()) {
      return Optional.empty();
    }
    List<Column> keys = new ArrayList<>();
    for (int i = 0; i < pairs.size(); i++) {
      keys.add(org.apache.spark.sql.classic.ExpressionUtils.column(pairs.get(i).changed()).as("k" + i));
    }
    Optional<KeyNarrowing.Touched> touched =
        KeyNarrowing.Touched.of(
            org.apache.spark.sql.classic.Dataset.ofRows(spark, semi.get().right()).select(keys.toArray(Column[]::new)).distinct());
    if (touched.isEmpty()) {
      return Optional.empty();
    }
    Expression condition = null;
    for (int i = 0; i < pairs.size(); i++) {
      Optional<Expression> holds =
          KeyNarrowing.holdsTouched(pairs.get(i).kept(), pairs.get(i).changed().dataType(), touched.get(), i);
      if (holds.isPresent()) {
        condition = condition == null ? holds.get() : new org.apache.spark.sql.catalyst.expressions.And(condition, holds.get());
      }
    }
    return Optional.ofNullable(condition);
  }

  /**
   * The definition with its read number {@code read} replaced by a relation named {@code marker}
   * (under the name it was written as, {@code parts}), for {@link OuterJoinDelta} to find; {@code
   * source} is the index of the source it reads.
   */
  private record MarkedRead(LogicalPlan plan, String marker, List<String> parts, int source) {}

  private MarkedRead markedRead(
      MaterializedView mv, LogicalPlan definition, List<Source> sources, List<Source> oldSources, int read) {
    String marker = "__floe_changed_read_" + UUID.randomUUID().toString().replace("-", "");
    List<List<String>> parts = new ArrayList<>();
    int[] source = {-1};
    LogicalPlan plan =
        read(mv, definition, sources, oldSources, read, (written, index) -> {
          parts.add(written);
          source[0] = index;
          return aliased(written, relation(marker));
        });
    return new MarkedRead(plan, marker, parts.get(0), source[0]);
  }

  /**
   * {@code rows} computed once and kept, without the constraints a checkpoint carries over from
   * the plan that computed them. Spark keeps those in terms of that plan's columns where it
   * replaced a join with an empty side (a source that had no snapshot yet) by NULLs, and its
   * inference of filters from constraints then fails ("key not found") on a UNION of such a term
   * with another; the rows' statistics are kept.
   */
  private Dataset<Row> checkpointed(Dataset<Row> rows) {
    org.apache.spark.sql.classic.Dataset<Row> kept = (org.apache.spark.sql.classic.Dataset<Row>) rows.localCheckpoint(true);
    org.apache.spark.sql.execution.LogicalRDD plan = (org.apache.spark.sql.execution.LogicalRDD) kept.logicalPlan();
    return org.apache.spark.sql.classic.Dataset.ofRows(
        spark,
        new org.apache.spark.sql.execution.LogicalRDD(
            plan.output(), plan.rdd(), plan.outputPartitioning(), plan.outputOrdering(), plan.isStreaming(), plan.stream(),
            spark, scala.Option.apply(plan.computeStats()), scala.Option.empty()));
  }

  /**
   * One term of the change: the definition with table reference number {@code changed} replaced
   * by the rows of {@code view}, the references before it read at their source's new snapshot and
   * those after it at the old one. Over the references of all changed sources, the terms add up
   * to the definition's change (new ⋈ new − old ⋈ old telescopes), self-joins included.
   */
  private Dataset<Row> term(
      MaterializedView mv,
      LogicalPlan definition,
      List<String> names,
      List<Source> sources,
      List<Source> oldSources,
      int changed,
      String view) {
    return rows(read(mv, definition, sources, oldSources, changed, (parts, index) -> aliased(parts, relation(view))), names);
  }

  /** What replaces the changed read of a term, given the name it was written as and its source index. */
  @FunctionalInterface
  private interface ChangedRead {
    LogicalPlan replace(List<String> parts, int index);
  }

  /**
   * The definition with its table reference number {@code changed} replaced by {@code changedRead},
   * the references before it read at their source's new snapshot and those after it at the old one.
   */
  private LogicalPlan read(
      MaterializedView mv,
      LogicalPlan definition,
      List<Source> sources,
      List<Source> oldSources,
      int changed,
      ChangedRead changedRead) {
    int[] visited = {0};
    return pinning.substitute(
        definition,
        mv.defaultCatalog(),
        mv.defaultNamespace(),
        (parts, name) -> {
          int index = indexOf(sources, name.toString());
          int position = visited[0]++;
          if (position == changed) {
            return changedRead.replace(parts, index);
          }
          return readAt(parts, position < changed ? sources.get(index) : oldSources.get(index));
        });
  }

  /** What {@code recorded} holds of {@code source}'s table; empty when the table was re-created since. */
  public static Optional<SourceState> recordedState(RefreshState recorded, Source source) {
    return stateOf(recorded.sourceStates(), source);
  }

  /** The state of {@code source}'s table among {@code states}, matched by the table's UUID. */
  public static Optional<SourceState> stateOf(List<SourceState> states, Source source) {
    String uuid = source.table().uuid().toString();
    return states.stream().filter(s -> s.type() == SourceState.Type.TABLE && s.uuid().equals(uuid)).findFirst();
  }

  /**
   * Why a refresh of {@code mv} starting now would be full because a {@code NOT IN} subquery's state
   * changed since the refresh {@code recorded}: what the refresh itself checks ({@link NotInGuard}),
   * for {@code EXPLAIN REFRESH}. Reads each such subquery whose sources moved at both snapshots; a
   * source re-created or without its recorded snapshot is left to the checks that make those full.
   */
  public Optional<String> notInStateChange(MaterializedView mv, PinnedDefinition pinned, RefreshState recorded) {
    List<Source> sources = pinned.sources();
    List<Source> oldSources = new ArrayList<>(sources);
    for (int i = 0; i < sources.size(); i++) {
      Source source = sources.get(i);
      Optional<SourceState> before = recordedState(recorded, source);
      if (before.isEmpty()) {
        return Optional.empty();
      }
      Long from = before.get().snapshotId().orElse(null);
      Long to = source.snapshot().map(Snapshot::snapshotId).orElse(null);
      if (java.util.Objects.equals(from, to)) {
        continue;
      }
      Optional<Snapshot> old = Optional.ofNullable(from).map(source.table()::snapshot);
      if (from != null && old.isEmpty()) {
        return Optional.empty();
      }
      oldSources.set(i, new Source(source.name(), source.materializedView(), source.table(), old));
    }
    return notInStateChanged(mv, pinned, sources, oldSources, new LinkedHashMap<>());
  }

  /**
   * Why the view's {@code NOT IN} filters cannot be maintained by key this time: the state of a
   * subquery every row depends on ({@link NotInGuard}) differs between the sources' old and new
   * snapshots. A subquery none of whose sources moved is not read.
   */
  private Optional<String> notInStateChanged(
      MaterializedView mv, PinnedDefinition pinned, List<Source> sources, List<Source> oldSources, Map<String, Long> rowsRead) {
    if (!NotInGuard.filtersByNotIn(pinned.parsed())) {
      return Optional.empty();
    }
    Optional<LogicalPlan> inlined = CteInlining.inline(pinned.parsed());
    if (inlined.isEmpty()) {
      return Optional.of("a NOT IN subquery is read through a recursive common table expression, so its rows at each snapshot are not known");
    }
    for (LogicalPlan subquery : NotInGuard.subqueries(inlined.get())) {
      List<String> tables = new ArrayList<>();
      // The rows each read of the subquery scans, counted in the refresh's rows read.
      Map<String, Long> read = new LinkedHashMap<>();
      boolean[] moved = {false};
      LogicalPlan before =
          pinning.substitute(subquery, mv.defaultCatalog(), mv.defaultNamespace(), (parts, name) -> {
            int index = indexOf(sources, name.toString());
            tables.add(name.toString());
            moved[0] |= oldSources.get(index) != sources.get(index);
            read.merge(sources.get(index).name().toString(), oldSources.get(index).totalRecords(), Long::sum);
            return readAt(parts, oldSources.get(index));
          });
      if (!moved[0]) {
        continue;
      }
      LogicalPlan after =
          pinning.substitute(subquery, mv.defaultCatalog(), mv.defaultNamespace(), (parts, name) -> {
            Source source = sources.get(indexOf(sources, name.toString()));
            read.merge(source.name().toString(), source.totalRecords(), Long::sum);
            return readAt(parts, source);
          });
      Optional<String> changed =
          NotInGuard.changed(
              NotInGuard.state(org.apache.spark.sql.classic.Dataset.ofRows(spark, before)),
              NotInGuard.state(org.apache.spark.sql.classic.Dataset.ofRows(spark, after)),
              tables.stream().distinct().toList());
      read.forEach((source, rows) -> rowsRead.merge(source, rows, Long::sum));
      if (changed.isPresent()) {
        return changed;
      }
    }
    return Optional.empty();
  }

  /** A read of {@code source} at its pinned snapshot; a source that had no snapshot yet was empty. */
  private LogicalPlan readAt(List<String> parts, Source source) {
    LogicalPlan read = pinning.read(parts, source);
    return source.snapshot().isEmpty()
        ? new org.apache.spark.sql.catalyst.plans.logical.Filter(
            org.apache.spark.sql.catalyst.expressions.Literal$.MODULE$.apply(false), read)
        : read;
  }

  /**
   * The changed rows of {@code view} with the columns of {@code read}, in its order, so that they
   * stand beside its rows in a UNION: a change holds only the columns the definition reads, the
   * others (which it never reads) are NULL.
   */
  private LogicalPlan asRead(String view, LogicalPlan read) {
    Dataset<Row> changed = spark.table(view);
    Set<String> held = Arrays.stream(changed.columns()).map(c -> c.toLowerCase(java.util.Locale.ROOT)).collect(Collectors.toSet());
    List<Column> columns = new ArrayList<>();
    for (StructField field : org.apache.spark.sql.classic.Dataset.ofRows(spark, read).schema().fields()) {
      columns.add(
          held.contains(field.name().toLowerCase(java.util.Locale.ROOT))
              ? col("`" + field.name().replace("`", "``") + "`")
              : lit(null).cast(field.dataType()).as(field.name()));
    }
    return ((org.apache.spark.sql.classic.Dataset<Row>) changed.select(columns.toArray(Column[]::new))).logicalPlan();
  }

  /** {@code plan} under the name a table reference was written as, for the definition's column references. */
  private static LogicalPlan aliased(List<String> parts, LogicalPlan plan) {
    return new SubqueryAlias(
        new AliasIdentifier(parts.get(parts.size() - 1), Scala.seq(parts.subList(0, parts.size() - 1))), plan);
  }

  private static LogicalPlan relation(String view) {
    return Plans.relation(List.of(view));
  }

  private Dataset<Row> rows(LogicalPlan plan, List<String> names) {
    return org.apache.spark.sql.classic.Dataset.ofRows(spark, plan).toDF(names.toArray(new String[0]));
  }

  /**
   * The schemas a refresh of {@code source} meets: the one its stored rows were computed in (the
   * last refresh recorded it; a state recorded without one stands for the schema of its snapshot),
   * the table's current one (in which a refresh reads pinned snapshots, see {@link SourcePinning})
   * and the one the newer snapshot was written in (in which the change between them is read).
   */
  private static java.util.Set<Integer> schemas(Source source, SourceState recorded, Long from, Long to) {
    java.util.Set<Integer> ids = new java.util.LinkedHashSet<>();
    Optional<Integer> stored =
        recorded.schemaId().or(() -> Optional.ofNullable(from == null ? null : source.table().snapshot(from)).map(Snapshot::schemaId));
    stored.ifPresent(ids::add);
    ids.add(source.table().schema().schemaId());
    // The newer snapshot's own schema matters when it was written since the last refresh; the
    // recorded one itself may be older than the schema the view was last refreshed under.
    Snapshot newer = to == null || java.util.Objects.equals(from, to) ? null : source.table().snapshot(to);
    if (newer != null && newer.schemaId() != null) {
      ids.add(newer.schemaId());
    }
    return ids;
  }

  /**
   * Why a schema change of {@code source} since the last refresh forces a full refresh: it renamed,
   * dropped or retyped a column the definition reads (or the source is an MV, whose storage columns
   * change only with its definition). A change that leaves every read column the same field, such
   * as an added column, lets the refresh stay incremental.
   */
  public static Optional<String> schemaChange(
      Source source, SourceState recorded, Long from, Long to, SourceColumns columns) {
    java.util.Set<Integer> ids = schemas(source, recorded, from, to);
    if (ids.size() < 2) {
      return Optional.empty();
    }
    String prefix = "the schema of source " + source.name() + " changed since the last refresh";
    if (source.materializedView().isPresent()) {
      return Optional.of(prefix + " (schemas " + ids + ")");
    }
    return columns
        .differingColumn(source.table(), source.name().toString(), new ArrayList<>(ids))
        .map(why -> prefix + ": " + why);
  }

  /**
   * The columns the change of {@code source} is read in, when not all of its storage's: for a
   * table, the columns the definition depends on, when its plan shows them; for an aggregate MV,
   * its view columns, one storage row per group, whose hidden counters and COUNT(DISTINCT) value
   * maps are no part of its rows (the maps are most of its storage and cannot be compared row by
   * row). An MV of plain rows is read in every column: its change needs its hidden multiplicity.
   */
  public static Optional<Set<String>> changeColumns(Source source, SourceColumns readColumns) {
    if (source.materializedView().isEmpty()) {
      return readColumns.rowsDependOn(source.table());
    }
    MaterializedView upstream = source.materializedView().get();
    return upstream.layout() == StorageLayout.GROUPS ? Optional.of(Set.copyOf(upstream.viewColumns())) : Optional.empty();
  }

  /**
   * The capture for one source, limited, unless the delta threshold check is off, to the rows a
   * full refresh would read: reading the files a change touches costs more than recomputing when
   * a small change is spread over large files. A definition that recomputes the touched groups or
   * keys reads every source in full on top of the change, so for it the change must also be smaller
   * than what a full refresh writes, the storage table's rows: a full refresh then costs less. Small
   * tables are never limited: both are cheap.
   */
  private ChangeCapture capture(Source source, DefinitionShape shape, Snapshot storageSnapshot) {
    ChangeCapture capture = new ChangeCapture(spark);
    if (!sizeChecksOn()) {
      return capture;
    }
    long floor = scanFloor();
    long limit = Math.max(floor, source.totalRecords());
    if (shape.kind() == DefinitionShape.Kind.KEYED || shape.recomputesGroups()) {
      long stored = Math.max(floor, storedRecords(storageSnapshot));
      if (stored < limit) {
        return capture.limitScanTo(stored,
            "more than %d (the rows the view stores, or " + floor + " if more); its definition recomputes the groups"
                + " or keys a change touches from every source row, so a full refresh costs less");
      }
    }
    return capture.limitScanTo(limit);
  }

  /**
   * From how many bytes of storage files the stored value maps of the touched groups are spread
   * over the cores before a change is merged into them. Below it, merging them in one task costs
   * less than the shuffles that spread them.
   */
  private static final long SPREAD_STATE_BYTES = 16L << 20;

  /**
   * The bytes of a storage snapshot's data and delete files, from its summary (data files whose rows
   * are mostly deleted count whole, so it errs high); unknown counts as unlimited.
   */
  private static long storageBytes(Snapshot snapshot) {
    String bytes = snapshot.summary() == null ? null : snapshot.summary().get("total-files-size");
    return bytes == null ? Long.MAX_VALUE : Long.parseLong(bytes);
  }

  /**
   * Live rows of a storage snapshot, from its summary: the rows in its data files less those its
   * position deletes remove (the storage is merge-on-read); unknown counts as unlimited.
   */
  private static long storedRecords(Snapshot snapshot) {
    String records = snapshot.summary() == null ? null : snapshot.summary().get("total-records");
    if (records == null) {
      return Long.MAX_VALUE;
    }
    String deleted = snapshot.summary().get("total-position-deletes");
    return Math.max(0, Long.parseLong(records) - (deleted == null ? 0 : Long.parseLong(deleted)));
  }

  /**
   * Whether the size checks can turn a refresh over {@code sources} into a full one: they are on and
   * the sources hold {@link #SCAN_FLOOR} rows or more, for {@code EXPLAIN REFRESH}.
   */
  public boolean sizeChecksApply(List<Source> sources) {
    return sizeChecksOn() && sources.stream().mapToLong(Source::totalRecords).sum() >= scanFloor();
  }

  private boolean sizeChecksOn() {
    return Boolean.parseBoolean(spark.conf().get(DELTA_THRESHOLD_CHECK, "true"));
  }

  /** Glue's switch for the check that a change is small enough to refresh incrementally. */
  public static final String DELTA_THRESHOLD_CHECK = "spark.sql.optimizer.incrementalMVRefresh.deltaThresholdCheckEnabled";

  /**
   * The fewest rows a change may be read from before the check above applies ({@value
   * #DEFAULT_SCAN_FLOOR} by default): below it both refreshes are cheap.
   */
  public static final String SCAN_FLOOR = "floe.refresh.incremental.min-rows-checked";

  private static final long DEFAULT_SCAN_FLOOR = 1_000_000L;

  private long scanFloor() {
    return RowCountSetting.of(spark, SCAN_FLOOR, DEFAULT_SCAN_FLOOR, 0);
  }

  private static int indexOf(List<Source> sources, String name) {
    for (int i = 0; i < sources.size(); i++) {
      if (sources.get(i).name().toString().equals(name)) {
        return i;
      }
    }
    throw new IllegalStateException("Source " + name + " was not pinned");
  }

  /** How refreshes name {@code source} in their reasons: its table's (or its MV's storage's) quoted name. */
  public static String sparkName(Source source) {
    return source.materializedView().map(MaterializedView::storageName).orElse(source.name()).quoted();
  }

  /** The source's change as rows of what the definition reads, with their weights. */
  private static Dataset<Row> logicalRows(Dataset<Row> zset, Source source) {
    if (source.materializedView().isEmpty()) {
      return zset;
    }
    MaterializedView mv = source.materializedView().get();
    Dataset<Row> weighted =
        mv.layout() == StorageLayout.ROWS
            ? zset.withColumn(WEIGHT, col(WEIGHT).multiply(col(StorageLayout.COUNT)))
            : zset;
    // The view's rows as a read of it gives them: a collated column cast back to its collation.
    Map<String, DataType> collated = mv.collatedColumns();
    List<Column> columns = new ArrayList<>();
    for (String c : mv.viewColumns()) {
      Column column = col(StorageLayout.quote(c));
      columns.add(collated.containsKey(c) ? column.cast(collated.get(c)).as(c) : column);
    }
    columns.add(col(WEIGHT));
    return weighted.select(columns.toArray(new Column[0]));
  }

  /** Each row repeated |weight| times, without the weight. */
  private static Dataset<Row> expand(Dataset<Row> rows, boolean negative) {
    Column times = (negative ? col(WEIGHT).multiply(-1) : col(WEIGHT)).cast("int");
    return rows.withColumn("__floe_rep", explode(array_repeat(lit(0), times))).drop("__floe_rep", WEIGHT);
  }

  private static List<String> storageColumnsWithout(MaterializedView mv, String excluded) {
    List<String> columns = new ArrayList<>();
    for (StructField field : org.apache.iceberg.spark.SparkSchemaUtil.convert(mv.storageTable().schema()).fields()) {
      if (!field.name().equals(excluded)) {
        columns.add(field.name());
      }
    }
    return columns;
  }

  /**
   * The columns an aggregate definition's augmented select list gives, by name: the view's columns
   * and the hidden ones but the distinct-value maps, in the order the augmented list has them. Named
   * so, they meet the storage table's columns by name, whatever order the table has them in (a
   * storage table created before Floe kept a hidden column has it appended).
   */
  private static List<String> groupColumns(MaterializedView mv, DefinitionShape shape) {
    List<String> columns = new ArrayList<>(mv.rowColumns());
    shape.hiddenFields().stream()
        .map(StructField::name)
        .filter(c -> !StorageLayout.isDistinctState(c))
        .forEach(columns::add);
    return columns;
  }

  // LINEAR: consolidated rows with weights, keyed by a hash of their values.

  private static Dataset<Row> linearChange(MaterializedView mv, Dataset<Row> inserted, Dataset<Row> deleted) {
    List<String> view = mv.rowColumns();
    Dataset<Row> change =
        inserted.withColumn(WEIGHT, lit(1L))
            .unionByName(deleted.withColumn(WEIGHT, lit(-1L)))
            .groupBy(StorageLayout.columns(view))
            .agg(sum(col(WEIGHT)).as(WEIGHT))
            .filter(col(WEIGHT).notEqual(0));
    return StorageLayout.withRowKey(change, view).localCheckpoint(true);
  }

  /**
   * What a computed change writes to and removes from the storage, and the condition its rows'
   * value ranges put on the stored rows the MERGE can match ({@link ChangeBounds}).
   */
  private record Summary(long written, long removed, Optional<String> bounds) {}

  /**
   * The summary of a change, from one pass over it: two counts and the matched columns' bounds,
   * kept only when they leave out a data file of the storage at {@code readSnapshot} (the bounds
   * of a change spread over the storage's whole range would only make the MERGE read their
   * columns to drop nothing).
   */
  private static Summary summarize(
      Dataset<Row> change, Column written, Column removed, List<String> matched, Table storage, Snapshot readSnapshot) {
    ChangeBounds bounds = ChangeBounds.of(change, matched);
    List<Column> more = new ArrayList<>(List.of(coalesce(removed, lit(0L))));
    more.addAll(bounds.aggregates());
    Row row = change.agg(coalesce(written, lit(0L)), more.toArray(new Column[0])).first();
    return new Summary(row.getLong(0), row.getLong(1), bounds.condition(row, 2, "t", storage, readSnapshot));
  }

  /** The summary of a change of plain rows, and its distinct row keys when they are few enough to list. */
  private record LinearSummary(Summary summary, Optional<Set<Long>> keys) {}

  /**
   * The summary of a change of plain rows, bounded by the column the storage is clustered by: the
   * bounds of other columns rarely prune files and each costs the aggregate three more columns.
   *
   * <p>A change of at most {@link #MAX_LISTED_KEYS} rows is collected once, its keys, weights and
   * clustering values, and summarized here: a small refresh spends tens of milliseconds on every
   * Spark job, and an aggregate of a few rows costs one or two of them for nothing. A larger change
   * is summarized by an aggregate and lists no keys.
   */
  private static LinearSummary linearSummary(MaterializedView mv, Dataset<Row> change, Table storage, Snapshot readSnapshot) {
    List<StructField> view = new ArrayList<>();
    for (String column : mv.viewColumns()) {
      view.add(change.schema().apply(column));
    }
    List<String> clustering =
        StorageLayout.clusteringColumn(new StructType(view.toArray(new StructField[0]))).stream().toList();
    ChangeBounds bounds = ChangeBounds.of(change, clustering);
    List<Column> collected = new ArrayList<>(List.of(col(StorageLayout.quote(StorageLayout.KEY)), col(WEIGHT)));
    collected.addAll(bounds.exactValues());
    List<Row> rows = change.select(collected.toArray(new Column[0])).limit(MAX_LISTED_KEYS + 1).collectAsList();
    if (rows.size() > MAX_LISTED_KEYS) {
      Summary summary = summarize(
          change,
          sum(when(col(WEIGHT).gt(0), col(WEIGHT))),
          sum(when(col(WEIGHT).lt(0), col(WEIGHT).multiply(-1))),
          clustering,
          storage,
          readSnapshot);
      return new LinearSummary(summary, Optional.empty());
    }
    long written = 0;
    long removed = 0;
    Set<Long> keys = new java.util.HashSet<>();
    for (Row row : rows) {
      keys.add(row.getLong(0));
      long weight = row.getLong(1);
      if (weight > 0) {
        written += weight;
      } else {
        removed -= weight;
      }
    }
    List<Object> summaryRow = new ArrayList<>(List.of(written, removed));
    summaryRow.addAll(bounds.aggregated(rows, 2));
    Optional<String> condition = bounds.condition(RowFactory.create(summaryRow.toArray()), 2, "t", storage, readSnapshot);
    return new LinearSummary(new Summary(written, removed, condition), Optional.of(keys));
  }

  /**
   * Up to how many changed row keys the storage MERGE lists. MERGE joins the storage table with the
   * change as a right outer join (unmatched change rows are inserted), which Spark cannot run with
   * the small change broadcast, so it shuffles every stored row. A condition on the target alone
   * is applied to the storage scan before that join: with the keys listed, only the few stored rows
   * that can match are shuffled. Beyond this many keys the set shipped with every task of the
   * storage scan grows large ({@link StorageMerge}).
   */
  private static final int MAX_LISTED_KEYS = 50_000;

  private static StorageMerge linearMerge(
      MaterializedView mv, String changes, StructType changeSchema, Optional<Set<Long>> changedKeys, Optional<String> bounds) {
    // The stored row: the view's columns and the hidden key columns, all matched by the row key.
    List<String> view = mv.rowColumns();
    String count = StorageLayout.quote(StorageLayout.COUNT);
    String key = StorageLayout.quote(StorageLayout.KEY);
    String weight = StorageLayout.quote(WEIGHT);
    // The listed keys and the bounds are implied by the match, so they change which rows are read,
    // not the result.
    Optional<Set<Long>> listedKeys = changedKeys.filter(keys -> !keys.isEmpty());
    String listed = listedKeys.map(keys -> " AND " + StorageMerge.listedKeysCondition("t." + key)).orElse("");
    String key2 = StorageLayout.quote(StorageLayout.KEY2);
    // Columns the key does not tell apart are compared by value (StorageLayout.withRowKey).
    String nested =
        view.stream()
            .filter(c -> !StorageLayout.identifiedByKey(changeSchema.apply(c).dataType()))
            .map(c -> " AND t." + StorageLayout.quote(c) + " <=> s." + StorageLayout.quote(c))
            .collect(Collectors.joining());
    String match =
        "t." + key + " = s." + key + " AND t." + key2 + " = s." + key2
            + nested
            + listed
            + bounds.map(b -> " AND " + b).orElse("");
    // A matched row has the change row's values (the 128-bit key and the compared nested columns
    // say so), so an update sets them from the change: the MERGE then reads only the keys and the
    // count of the stored rows, not their values.
    String values =
        view.stream().map(c -> "t." + StorageLayout.quote(c) + " = s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String insertColumns = view.stream().map(StorageLayout::quote).collect(Collectors.joining(", "));
    String insertValues = view.stream().map(c -> "s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String sql = "MERGE INTO %s t USING " + changes + " s ON " + match
        + " WHEN MATCHED AND t." + count + " + s." + weight + " <= 0 THEN DELETE"
        + " WHEN MATCHED THEN UPDATE SET " + values + ", t." + count + " = t." + count + " + s." + weight
        + " WHEN NOT MATCHED AND s." + weight + " > 0 THEN INSERT (" + insertColumns + ", " + count + ", " + key + ", " + key2
        + ") VALUES (" + insertValues + ", s." + weight + ", s." + key + ", s." + key2 + ")";
    return listedKeys.map(keys -> StorageMerge.listing(sql, keys)).orElse(StorageMerge.of(sql));
  }

  // LINEAR keyed by row lineage: each changed source row's view row as of the newer snapshot, or its removal.

  /** The change column saying that the stored row of the row id goes. */
  private static final String REMOVED = "__floe_removed";

  /**
   * A change of storage rows keyed by row lineage ({@link RowLineage}).
   *
   * @param rows one row per changed source row id: the view row it now gives, or {@value #REMOVED}
   *     when it gives none (deleted, or filtered out or rejected by a constraint now)
   * @param ids the row ids, when few enough to list for the MERGE
   * @param repeated how many row ids gave more than one row (none, unless the source's writers broke its lineage)
   */
  private record LineageChange(
      Dataset<Row> rows, Optional<Set<Long>> ids, long repeated, List<ExpectationResult> expectations,
      Optional<Dataset<Row>> judged) {}

  private LineageChange lineageChange(
      MaterializedView mv, LogicalPlan keyed, List<Source> sources, List<Source> oldSources, Dataset<Row> zset,
      ExpectationCheck check, String suffix, List<String> views) {
    String newer = "__floe_newer_" + suffix;
    zset.filter(col(WEIGHT).gt(0)).drop(WEIGHT).createOrReplaceTempView(newer);
    views.add(newer);
    List<String> names = new ArrayList<>(mv.rowColumns());
    names.add(RowLineage.COLUMN);
    Dataset<Row> upserts = term(mv, keyed, names, sources, oldSources, 0, newer);
    List<ExpectationResult> expectations = List.of();
    Optional<Dataset<Row>> judged = Optional.empty();
    if (!check.isEmpty()) {
      ExpectationCheck.Judged judgement = check.judgeIncoming(upserts);
      expectations = judgement.results();
      upserts = judgement.passing();
      judged = Optional.of(judgement.judged().drop(RowLineage.COLUMN));
    }
    Column id = col(StorageLayout.quote(RowLineage.COLUMN));
    Dataset<Row> kept = RowLineage.storageRows(upserts).withColumn(REMOVED, lit(false));
    Dataset<Row> gone =
        zset.select(col(ChangeCapture.ROW_ID).as(RowLineage.COLUMN)).distinct()
            .join(upserts.select(id), Scala.seq(RowLineage.COLUMN), "left_anti")
            .withColumn(REMOVED, lit(true));
    Dataset<Row> rows = kept.unionByName(gone, true).localCheckpoint(true);
    List<Row> listed = rows.select(id).limit(MAX_LISTED_KEYS + 1).collectAsList();
    if (listed.size() <= MAX_LISTED_KEYS) {
      Set<Long> ids = listed.stream().map(r -> r.getLong(0)).collect(Collectors.toSet());
      return new LineageChange(rows, Optional.of(ids), listed.size() - ids.size(), expectations, judged);
    }
    long repeated = rows.groupBy(id).count().filter(col("count").gt(1L)).count();
    return new LineageChange(rows, Optional.empty(), repeated, expectations, judged);
  }

  /** The MERGE of a change keyed by row lineage: a stored row is matched by its source row's id alone. */
  private static StorageMerge lineageMerge(MaterializedView mv, String changes, LineageChange change) {
    List<String> columns = new ArrayList<>(mv.rowColumns());
    columns.addAll(List.of(StorageLayout.COUNT, StorageLayout.KEY, StorageLayout.KEY2));
    String id = StorageLayout.quote(RowLineage.COLUMN);
    String removed = StorageLayout.quote(REMOVED);
    Optional<Set<Long>> listedIds = change.ids().filter(ids -> !ids.isEmpty());
    String listed = listedIds.map(ids -> " AND " + StorageMerge.listedKeysCondition("t." + id)).orElse("");
    String values =
        columns.stream().map(c -> "t." + StorageLayout.quote(c) + " = s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String insertColumns = columns.stream().map(StorageLayout::quote).collect(Collectors.joining(", "));
    String insertValues = columns.stream().map(c -> "s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String sql = "MERGE INTO %s t USING " + changes + " s ON t." + id + " = s." + id + listed
        + " WHEN MATCHED AND s." + removed + " THEN DELETE"
        + " WHEN MATCHED THEN UPDATE SET " + values
        + " WHEN NOT MATCHED AND NOT s." + removed + " THEN INSERT (" + insertColumns + ", " + id + ") VALUES ("
        + insertValues + ", s." + id + ")";
    return listedIds.map(ids -> StorageMerge.listing(sql, ids)).orElse(StorageMerge.of(sql));
  }

  private static long summaryCount(Map<String, String> summary, String key) {
    String value = summary.get(key);
    return value == null ? 0 : Long.parseLong(value);
  }

  // AGGREGATE: new values of every affected group, or a flag that the group is gone.

  private Dataset<Row> groupChange(
      MaterializedView mv,
      DefinitionShape shape,
      Snapshot readSnapshot,
      PinnedDefinition pinned,
      Terms terms,
      Map<DefinitionShape.DistinctColumn, Terms> distinct,
      List<String> keys,
      Dataset<Row> affected,
      Map<String, Long> rowsRead) {
    List<String> view = mv.rowColumns();
    List<String> storageColumns = storageColumnsWithout(mv, StorageLayout.KEY);

    if (shape.recomputesGroups()) {
      return recomputeGroups(mv, shape, pinned, affected, keys, rowsRead);
    }

    Dataset<Row> stored = storedGroups(mv, readSnapshot, affected, keys);
    Dataset<Row> k = affected;
    if (!distinct.isEmpty()) {
      // The value maps of the touched groups are most of the work. The storage holds few, large
      // rows, often in one file read by one task: spread them over the cores before merging, when
      // they are large enough for that to pay; small ones stay in one task, which saves the shuffles
      // (the storage is then read in one task too, which the size bound keeps short).
      stored = storageBytes(readSnapshot) >= SPREAD_STATE_BYTES
          ? stored.repartition(spark.sparkContext().defaultParallelism()).localCheckpoint(true)
          : stored.coalesce(1).localCheckpoint(true);
      k = DistinctState.withStoredMaps(affected, stored, keys, distinct.keySet());
    }
    for (Map.Entry<DefinitionShape.DistinctColumn, Terms> entry : distinct.entrySet()) {
      k = DistinctState.maintained(k, entry.getValue().inserted(), entry.getValue().deleted(), keys, entry.getKey());
    }
    k = prefixed(k, "k_");
    // The stored plain columns, joined to the groups by key: small, without the maps.
    Dataset<Row> o = prefixed(withoutDistinctState(stored), "o_");
    // Several changed sources give several partial rows per group: add them up first.
    Dataset<Row> in = prefixed(collapse(terms.inserted(), keys, mv, shape), "i_");
    Dataset<Row> out = prefixed(collapse(terms.deleted(), keys, mv, shape), "d_");
    Dataset<Row> joined =
        k.join(o, prefixedCondition(keys, "k_", "o_"), "left")
            .join(in, prefixedCondition(keys, "k_", "i_"), "left")
            .join(out, prefixedCondition(keys, "k_", "d_"), "left");
    Map<String, DataType> types = new LinkedHashMap<>();
    for (StructField field : stored.schema().fields()) {
      types.put(field.name(), field.dataType());
    }
    List<Column> result = new ArrayList<>();
    Column recheck = lit(false);
    // Whether some column can ask for its group to be recomputed (recheck is then not just false).
    boolean mayRecheck = false;
    Map<String, Integer> runningSums = new LinkedHashMap<>();
    shape.averages().keySet().forEach(p -> runningSums.put(StorageLayout.runningSum(p), p));
    for (String column : storageColumns) {
      int position = view.indexOf(column);
      ColumnRole role = position >= 0 ? shape.roles().get(position) : ColumnRole.COUNT_ROWS;
      Column value;
      if (role == ColumnRole.KEY || StorageLayout.isDistinctState(column)) {
        value = sided("k_", column);
      } else if (role == ColumnRole.COUNT_DISTINCT) {
        value = DistinctState.size(sided("k_", StorageLayout.distinctState(position)));
      } else if (role == ColumnRole.SUM) {
        Column nonNull = combined(StorageLayout.nonNullCount(position));
        value = when(nonNull.equalTo(0), lit(null)).otherwise(combined(column));
        if (isFloating(types.get(column))) {
          recheck = recheck.or(floatingSumUnsure(column));
          mayRecheck = true;
        } else if (types.get(column) instanceof org.apache.spark.sql.types.DecimalType) {
          recheck = recheck.or(decimalSumOverflowed(column, StorageLayout.nonNullCount(position)));
          mayRecheck = true;
        }
      } else if (role == ColumnRole.AVG) {
        value = AverageState.value(
            shape.averages().get(position),
            runningSum(position),
            combined(StorageLayout.nonNullCount(position)));
      } else if (runningSums.containsKey(column)) {
        value = runningSum(runningSums.get(column));
        if (isFloating(types.get(column))) {
          recheck = recheck.or(floatingSumUnsure(column));
          mayRecheck = true;
        } else if (types.get(column) instanceof org.apache.spark.sql.types.DecimalType) {
          // An AVG's running DECIMAL sum overflows as a SUM does.
          recheck = recheck.or(decimalSumOverflowed(column, StorageLayout.nonNullCount(runningSums.get(column))));
          mayRecheck = true;
        }
      } else if (role == ColumnRole.MIN || role == ColumnRole.MAX) {
        Column storedValue = sided("o_", column);
        Column added = sided("i_", column);
        Column removed = sided("d_", column);
        // least/greatest skip NULLs: a group without values keeps NULL.
        value = role == ColumnRole.MIN ? least(storedValue, added) : greatest(storedValue, added);
        // A removed value that could have been the extreme (ties included) leaves the new extreme
        // unknown from the stored row alone.
        Column couldBeExtreme = role == ColumnRole.MIN ? removed.leq(storedValue) : removed.geq(storedValue);
        recheck = recheck.or(removed.isNotNull().and(storedValue.isNull().or(couldBeExtreme)));
        mayRecheck = true;
      } else {
        value = combined(column);
      }
      result.add(value.cast(types.get(column)).as(column));
    }
    // Without GROUP BY the view's one row stays when its input empties: counts 0, sums NULL.
    Column gone = keys.isEmpty() ? lit(false) : combined(StorageLayout.COUNT).leq(0);
    result.add(gone.as(DELETE));
    result.add(recheck.and(gone.unary_$bang()).as(RECHECK));
    Dataset<Row> maintained = joined.select(result.toArray(new Column[0])).localCheckpoint(true);
    if (!mayRecheck) {
      return maintained.drop(RECHECK);
    }
    // Asked of the stored change first: groups to recheck are rare, and a checkpoint of none would
    // cost a Spark job of its own.
    Dataset<Row> rechecked = maintained.filter(col(RECHECK)).select(StorageLayout.columns(keys));
    if (rechecked.isEmpty()) {
      return maintained.drop(RECHECK);
    }
    return maintained.filter(col(RECHECK).unary_$bang()).drop(RECHECK)
        .unionByName(recomputeGroups(mv, shape, pinned, rechecked.localCheckpoint(true), keys, rowsRead))
        .localCheckpoint(true);
  }

  /**
   * How much smaller than the sum it was, or than what was removed, a floating-point sum may become
   * by a subtraction before the rounding of the larger values dominates it: 2^20, about a millionth.
   */
  private static final double CANCELLATION = 1 << 20;

  private static boolean isFloating(DataType type) {
    return type instanceof org.apache.spark.sql.types.DoubleType || type instanceof org.apache.spark.sql.types.FloatType;
  }

  /**
   * Whether the group's floating-point sum in {@code column}, maintained by subtracting what a
   * change removed, may differ from the sum of the group's rows: a DOUBLE sum cannot take back what
   * it absorbed. Removing a NaN or an infinity, or removing from a sum that is one, leaves it so;
   * removing values that cancel most of the sum leaves mostly the rounding of the larger values it
   * held (1e16 + 1 − 1e16 gives 0). Such a group is recomputed from its rows, as one whose MIN may
   * have been removed is. Inserts alone only add, as a full refresh adds, in another order.
   */
  private static Column floatingSumUnsure(String column) {
    Column stored = sided("o_", column).cast(DataTypes.DoubleType);
    Column removed = sided("d_", column).cast(DataTypes.DoubleType);
    Column now = combined(column).cast(DataTypes.DoubleType);
    Column cancelled = abs(now).multiply(CANCELLATION).lt(greatest(abs(coalesce(stored, lit(0.0))), abs(removed)));
    Column unsure = removed.isNotNull().and(nonFinite(coalesce(stored, lit(0.0))).or(nonFinite(removed)).or(cancelled));
    // Never NULL: a NULL would drop the group from both the kept and the recomputed rows.
    return coalesce(unsure, lit(false));
  }

  /**
   * Whether a DECIMAL sum of the group overflowed: without ANSI mode Spark's SUM gives NULL when the
   * sum does not fit its type, so a NULL stored sum, change sum or new sum over non-NULL values
   * says the sum is not known from the stored row and the change (adding to NULL as to 0 would
   * make one up). Such a group is recomputed from its rows, which gives NULL again or, once the
   * values that overflowed it are gone, the sum.
   */
  private static Column decimalSumOverflowed(String column, String nonNullCount) {
    Column overflowed = lit(false);
    for (String side : List.of("o_", "i_", "d_")) {
      overflowed = overflowed.or(
          sided(side, column).isNull().and(coalesce(sided(side, nonNullCount), lit(0L)).gt(0)));
    }
    overflowed = overflowed.or(combined(column).isNull().and(combined(nonNullCount).gt(0)));
    // Never NULL: a NULL would drop the group from both the kept and the recomputed rows.
    return coalesce(overflowed, lit(false));
  }

  private static Column nonFinite(Column value) {
    return isnan(value).or(abs(value).equalTo(lit(Double.POSITIVE_INFINITY)));
  }

  private static Dataset<Row> withoutDistinctState(Dataset<Row> rows) {
    return rows.drop(Arrays.stream(rows.columns()).filter(StorageLayout::isDistinctState).toArray(String[]::new));
  }

  /** The stored rows of the {@code affected} groups, at the storage snapshot the refresh started from. */
  private Dataset<Row> storedGroups(MaterializedView mv, Snapshot readSnapshot, Dataset<Row> affected, List<String> keys) {
    Dataset<Row> old =
        spark.sql("SELECT * FROM " + mv.storageName().quoted() + " VERSION AS OF " + readSnapshot.snapshotId());
    return old.join(affected, joinCondition(old, affected, keys), "left_semi");
  }

  static List<String> groupKeys(MaterializedView mv, DefinitionShape shape) {
    List<String> view = mv.rowColumns();
    return shape.keyPositions().stream().map(view::get).collect(Collectors.toList());
  }

  /**
   * Why a definition that recomputes the groups a change touches should refresh in full: when the
   * change touches at least half of the stored groups, recomputing them aggregates every source
   * row like a full refresh and then merges most groups, which costs more. Like the change-size
   * check, it applies from {@link #SCAN_FLOOR} source rows and is off with {@link
   * #DELTA_THRESHOLD_CHECK}.
   */
  private Optional<String> recomputesMostGroups(
      DefinitionShape shape, Snapshot readSnapshot, PinnedDefinition pinned, Dataset<Row> affected) {
    if (!shape.recomputesGroups() || !sizeChecksOn()) {
      return Optional.empty();
    }
    long sourceRows = pinned.sources().stream().mapToLong(Source::totalRecords).sum();
    long stored = storedRecords(readSnapshot);
    if (sourceRows < scanFloor() || stored == Long.MAX_VALUE) {
      return Optional.empty();
    }
    long touched = affected.count();
    if (touched * 2 < stored) {
      return Optional.empty();
    }
    return Optional.of(
        "the change touches " + touched + " of the " + stored + " groups; recomputing them reads every source row"
            + " like a full refresh and then merges them, so a full refresh costs less");
  }

  /**
   * Why an aggregate over an outer join should refresh in full: a changed source read on a side of
   * the join that may not match takes the outer join's rule ({@link OuterJoinDelta}), whose terms
   * read the join's other side restricted by a semi join as it is read. When the view stores fewer
   * groups than half its sources' rows, a full refresh only aggregates the sources and writes those
   * few groups, which costs less than computing both terms and merging the touched groups, even
   * when the changed rows' keys let the terms skip most of the other side's files ({@link
   * #keptSideNarrowing}): measured over 20 million facts partitioned by the join key, a change of
   * one key took 4.1 s incrementally and 2.3 to 2.7 s in full. A definition that stores about a row
   * per source row gains from the rule: a full refresh rewrites them all. Like the checks above, it
   * applies from {@link #SCAN_FLOOR} source rows and is off with {@link #DELTA_THRESHOLD_CHECK}.
   */
  private Optional<String> outerJoinReadsMoreThanItWrites(
      MaterializedView mv,
      DefinitionShape shape,
      Snapshot readSnapshot,
      PinnedDefinition pinned,
      List<Source> sources,
      List<Source> oldSources,
      List<Integer> moved) {
    if (!sizeChecksOn()) {
      return Optional.empty();
    }
    long sourceRows = pinned.sources().stream().mapToLong(Source::totalRecords).sum();
    long stored = storedRecords(readSnapshot);
    if (sourceRows < scanFloor() || stored == Long.MAX_VALUE || stored * 2 >= sourceRows) {
      return Optional.empty();
    }
    LogicalPlan definition = shape.augmentedParsed().orElseThrow();
    List<Integer> reads = reads(mv, definition, sources);
    for (int read = 0; read < reads.size(); read++) {
      if (!moved.contains(reads.get(read))) {
        continue;
      }
      MarkedRead marked = markedRead(mv, definition, sources, oldSources, read);
      if (OuterJoinDelta.onSideThatMayNotMatch(marked.plan(), marked.marker())) {
        return Optional.of(
            "the change of " + sources.get(reads.get(read)).name() + " is on a side of an outer join that may not match,"
                + " so it is recomputed from the rows of the join's other side that can match it, which costs more than"
                + " aggregating the sources again when the view stores " + stored + " groups of " + sourceRows
                + " source rows, so a full refresh costs less");
      }
    }
    return Optional.empty();
  }

  /**
   * The new rows of the {@code groups} (distinct key rows) recomputed from every source row at the
   * pinned snapshots, and a deletion for each of them the new snapshot no longer has.
   */
  private Dataset<Row> recomputeGroups(
      MaterializedView mv,
      DefinitionShape shape,
      PinnedDefinition pinned,
      Dataset<Row> groups,
      List<String> keys,
      Map<String, Long> rowsRead) {
    List<String> storageColumns = storageColumnsWithout(mv, StorageLayout.KEY);
    // The reads of source columns equal to a grouping column hold the touched groups' rows in the
    // files whose bounds hold their values: each read of the definition (and of its COUNT(DISTINCT)
    // value counts) is narrowed to those, as a keyed recomputation's are.
    Optional<KeyNarrowing.Touched> touched =
        keys.isEmpty() ? Optional.empty() : KeyNarrowing.Touched.of(groups.select(StorageLayout.columns(keys)));
    List<Optional<KeyNarrowing>> narrowings = new ArrayList<>();
    Dataset<Row> fresh =
        aggregatedRows(spark, pinning, mv, shape, pinned, rows -> {
          // Not under an outer join: a row of the side that may not match, left out by a narrowed
          // read, would make the rows it matched stand NULL-padded in another group.
          LogicalPlan analyzed = rows.queryExecution().analyzed();
          Optional<KeyNarrowing> narrowing =
              OuterJoinDelta.holdsOuterJoin(analyzed)
                  ? Optional.empty()
                  : touched.flatMap(t -> KeyNarrowing.of(analyzed, groupKey(rows, keys), t));
          narrowings.add(narrowing);
          Dataset<Row> read =
              narrowing.<Dataset<Row>>map(n -> org.apache.spark.sql.classic.Dataset.ofRows(spark, n.plan())).orElse(rows);
          return read.join(groups, joinCondition(read, groups, keys), "left_semi");
        });
    // Aggregated once: Spark pushes the semi join on grouping columns below the aggregate, and a
    // group missing from the recomputed ones is one the new snapshot no longer has.
    Dataset<Row> recomputed = fresh.localCheckpoint(true);
    Dataset<Row> gone = groups.join(recomputed, joinCondition(groups, recomputed, keys), "left_anti");
    List<Column> goneColumns = new ArrayList<>();
    for (String column : storageColumns) {
      goneColumns.add(keys.contains(column) ? col(StorageLayout.quote(column)) : lit(null).as(column));
    }
    Dataset<Row> goneRows = gone.select(goneColumns.toArray(new Column[0]));
    for (Source source : pinned.sources()) {
      // The plans read the same files but for their narrowing: the rows of the widest read count.
      long read = 0;
      for (Optional<KeyNarrowing> narrowing : narrowings) {
        read = Math.max(read, narrowing.map(n -> n.rowsRead(source)).orElse(source.totalRecords()));
      }
      rowsRead.merge(source.name().toString(), read, Long::sum);
    }
    Dataset<Row> result =
        recomputed.withColumn(DELETE, lit(false))
            .unionByName(alignTypes(goneRows, recomputed).withColumn(DELETE, lit(true)));
    return result.localCheckpoint(true);
  }

  /** The grouping columns {@code keys} as a key of the rows read, by their positions there. */
  private static KeyedShape.Key groupKey(Dataset<Row> rows, List<String> keys) {
    List<String> columns = Arrays.asList(rows.columns());
    return KeyedShape.Key.ofPositions(keys.stream().map(columns::indexOf).collect(Collectors.toList()));
  }

  /**
   * The storage rows of an aggregate definition computed from its pinned sources: the augmented
   * definition's groups with each distinct-value map attached, and its size as the COUNT(DISTINCT). {@code restrict} limits the groups
   * (and the value counts) before they are joined.
   */
  public static Dataset<Row> aggregatedRows(
      SparkSession spark,
      SourcePinning pinning,
      MaterializedView mv,
      DefinitionShape shape,
      PinnedDefinition pinned,
      java.util.function.UnaryOperator<Dataset<Row>> restrict) {
    List<String> keys = groupKeys(mv, shape);
    Dataset<Row> rows =
        restrict.apply(readPinned(spark, pinning, mv, pinned, shape.augmentedParsed().orElseThrow(), groupColumns(mv, shape)));
    for (DefinitionShape.DistinctColumn column : shape.distinctColumns()) {
      Dataset<Row> counts =
          restrict.apply(readPinned(spark, pinning, mv, pinned, column.valueCounts(), DistinctState.countColumns(keys)));
      rows = DistinctState.attach(rows, DistinctState.maps(counts, keys, column.stateColumn()), keys, column.stateColumn());
      String counted = mv.rowColumns().get(column.position());
      rows = rows.withColumn(
          counted, DistinctState.size(col(StorageLayout.quote(column.stateColumn()))).cast(rows.schema().apply(counted).dataType()));
    }
    return rows;
  }

  /** The rows of {@code plan}, a definition or one derived from it, at the pinned sources, its columns named {@code names}. */
  public static Dataset<Row> readPinned(
      SparkSession spark, SourcePinning pinning, MaterializedView mv, PinnedDefinition pinned, LogicalPlan plan, List<String> names) {
    LogicalPlan read = pinning.readPinned(plan, mv.defaultCatalog(), mv.defaultNamespace(), pinned.sources());
    return org.apache.spark.sql.classic.Dataset.ofRows(spark, read).toDF(names.toArray(new String[0]));
  }

  /** One row per group: its counter columns summed, its MIN and MAX columns reduced alike. */
  private static Dataset<Row> collapse(Dataset<Row> partials, List<String> keys, MaterializedView mv, DefinitionShape shape) {
    List<String> view = mv.rowColumns();
    List<Column> sums = new ArrayList<>();
    for (String column : partials.columns()) {
      if (!keys.contains(column)) {
        int position = view.indexOf(column);
        ColumnRole role = position >= 0 ? shape.roles().get(position) : ColumnRole.COUNT_ROWS;
        Column partial = col(StorageLayout.quote(column));
        // An AVG column's partial averages are not added up: its hidden sum and count are.
        Column reduced =
            role == ColumnRole.MIN || role == ColumnRole.AVG ? min(partial) : role == ColumnRole.MAX ? max(partial) : sum(partial);
        sums.add(reduced.as(column));
      }
    }
    return partials
        .groupBy(StorageLayout.columns(keys))
        .agg(sums.get(0), sums.subList(1, sums.size()).toArray(new Column[0]));
  }

  /**
   * The new running sum of the AVG in column {@code position}: NULL once no value is left, so that
   * no rounding residue of a DOUBLE sum outlives its values.
   */
  private static Column runningSum(int position) {
    return when(combined(StorageLayout.nonNullCount(position)).equalTo(0), lit(null))
        .otherwise(combined(StorageLayout.runningSum(position)));
  }

  /** old + inserted − deleted for a counter column, treating absent as zero. */
  private static Column combined(String column) {
    return coalesce(sided("o_", column), lit(0))
        .plus(coalesce(sided("i_", column), lit(0)))
        .minus(coalesce(sided("d_", column), lit(0)));
  }

  private static Dataset<Row> prefixed(Dataset<Row> rows, String prefix) {
    String[] names = rows.columns();
    String[] renamed = new String[names.length];
    for (int i = 0; i < names.length; i++) {
      renamed[i] = prefix + names[i];
    }
    return rows.toDF(renamed);
  }

  /** The column {@code column} of a side {@link #prefixed} with {@code prefix}, whatever its name holds. */
  private static Column sided(String prefix, String column) {
    return col(StorageLayout.quote(prefix + column));
  }

  private static Column prefixedCondition(List<String> keys, String left, String right) {
    Column condition = lit(true);
    for (String key : keys) {
      condition = condition.and(sided(left, key).eqNullSafe(sided(right, key)));
    }
    return condition;
  }

  /** {@code left} and {@code right} rows have the same {@code keys}, NULL matching NULL. */
  static Column joinCondition(Dataset<Row> left, Dataset<Row> right, List<String> keys) {
    Column condition = lit(true);
    for (String key : keys) {
      condition = condition.and(left.col(StorageLayout.quote(key)).eqNullSafe(right.col(StorageLayout.quote(key))));
    }
    return condition;
  }

  private static Dataset<Row> alignTypes(Dataset<Row> rows, Dataset<Row> like) {
    List<Column> columns = new ArrayList<>();
    for (StructField field : like.schema().fields()) {
      columns.add(col(StorageLayout.quote(field.name())).cast(field.dataType()).as(field.name()));
    }
    return rows.select(columns.toArray(new Column[0]));
  }

  private static Summary groupSummary(Dataset<Row> change, List<String> keys, Table storage, Snapshot readSnapshot) {
    return summarize(
        change,
        sum(when(col(DELETE), lit(0L)).otherwise(lit(1L))),
        sum(when(col(DELETE), lit(1L)).otherwise(lit(0L))),
        keys,
        storage,
        readSnapshot);
  }

  private static String groupMerge(MaterializedView mv, DefinitionShape shape, String changes, Optional<String> bounds) {
    List<String> storage = storageColumnsWithout(mv, StorageLayout.KEY);
    List<String> keys = groupKeys(mv, shape);
    String match =
        keys.isEmpty()
            ? "TRUE"
            : keys.stream().map(k -> "t." + StorageLayout.quote(k) + " <=> s." + StorageLayout.quote(k)).collect(Collectors.joining(" AND "))
                + bounds.map(b -> " AND " + b).orElse("");
    String set =
        storage.stream().filter(c -> !keys.contains(c))
            .map(c -> "t." + StorageLayout.quote(c) + " = s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String insertColumns = storage.stream().map(StorageLayout::quote).collect(Collectors.joining(", "));
    String insertValues = storage.stream().map(c -> "s." + StorageLayout.quote(c)).collect(Collectors.joining(", "));
    String delete = StorageLayout.quote(DELETE);
    return "MERGE INTO %s t USING " + changes + " s ON " + match
        + " WHEN MATCHED AND s." + delete + " THEN DELETE"
        + " WHEN MATCHED THEN UPDATE SET " + set
        + " WHEN NOT MATCHED AND NOT s." + delete + " THEN INSERT (" + insertColumns + ") VALUES (" + insertValues + ")";
  }

  // Commits.

  /**
   * A change to record in the storage table's {@link ChangeFeed}: its rows in the storage columns,
   * the multiplicity column holding the signed change, and whether it only adds rows.
   */
  private record FeedEntry(Dataset<Row> rows, boolean addsOnly) {}

  /** A computed change of a {@link StorageLayout#ROWS} storage as feed rows: its weight as the multiplicity. */
  private static Dataset<Row> feedRows(MaterializedView mv, Dataset<Row> change) {
    List<Column> columns = new ArrayList<>(List.of(StorageLayout.columns(mv.rowColumns())));
    columns.add(col(WEIGHT).as(StorageLayout.COUNT));
    columns.add(col(StorageLayout.quote(StorageLayout.KEY)));
    columns.add(col(StorageLayout.quote(StorageLayout.KEY2)));
    return change.select(columns.toArray(new Column[0]));
  }

  /**
   * The change of a source MV with {@link StorageLayout#ROWS} storage from the feed its refreshes
   * recorded, when the feed holds the whole range; reading it costs the change's size, not that of
   * the storage files it touched.
   */
  private Optional<CapturedChange.Delta> fromFeed(Source source, Long from, long to) {
    if (!recordsFeed(source, from)) {
      return Optional.empty();
    }
    return ChangeFeed.capture(spark, source.table(), sparkName(source), from, to, StorageLayout.COUNT);
  }

  /**
   * Whether the change of {@code source} after {@code from} up to {@code to} is read from its
   * change feed (what {@code EXPLAIN REFRESH} shows); reads table metadata only.
   */
  public static boolean readsFromFeed(Source source, Long from, long to) {
    return recordsFeed(source, from) && ChangeFeed.covers(source.table(), from, to);
  }

  /**
   * Opens the change feed of each source that is an MV with {@link StorageLayout#ROWS} storage, so
   * that its refreshes record their changes for this reader from now on ({@link ChangeFeed}). A
   * change the source committed before it was opened is read from its storage files, and so is
   * every change of a source whose feed cannot be opened (a reader not allowed to write to the
   * source's storage table): that costs time, not correctness, so it does not fail the refresh and
   * is returned as a warning instead.
   */
  public static List<String> openFeeds(List<Source> sources) {
    List<String> warnings = new ArrayList<>();
    for (Source source : sources) {
      if (keepsFeed(source)) {
        try {
          ChangeFeed.open(source.table());
        } catch (RuntimeException e) {
          LOG.warn("Cannot open the change feed of {}", source.name(), e);
          warnings.add("cannot open the change feed of " + source.name() + " (" + ErrorMessages.firstLine(e.getMessage())
              + "), so its changes are read from its storage files");
        }
      }
    }
    return warnings;
  }

  /** Whether the source is an MV whose refreshes record a change feed, and a recorded snapshot to read it from. */
  private static boolean recordsFeed(Source source, Long from) {
    return from != null && keepsFeed(source);
  }

  /**
   * Whether the source is an MV with {@link StorageLayout#ROWS} storage whose rows are matched by
   * value: one with a change feed for its readers. The refreshes of one whose rows are keyed by
   * row lineage ({@link RowLineage}) know a removed row by its id alone, not by the values a
   * reader needs: its readers read its storage files for the columns they use instead.
   */
  private static boolean keepsFeed(Source source) {
    return source.materializedView().map(m -> m.layout() == StorageLayout.ROWS).orElse(false)
        && !source.snapshot().map(s -> RowLineage.keys(source.table(), s)).orElse(false);
  }

  private long commitMerge(
      MaterializedView mv, Table storage, Snapshot readSnapshot, StorageMerge merge, Optional<FeedEntry> feed, String stateJson,
      String reason, List<ExpectationResult> expectations, boolean byLineage) {
    Map<String, String> properties = summary(stateJson, reason, expectations);
    properties.put(RowLineage.SUMMARY_KEY, String.valueOf(byLineage));
    try (BranchCommit commit = new BranchCommit(storage, readSnapshot.snapshotId())) {
      new io.floe.spark.mv.MaterializedViewCatalog(spark).invalidateSparkCache(mv.storageName());
      if (feed.isPresent()) {
        recordInFeed(mv, storage, feed.get())
            .ifPresent(entry -> properties.put(ChangeFeed.SNAPSHOT_PROPERTY, String.valueOf(entry)));
      }
      String target = commit.sparkName(mv.storageName().quoted());
      StorageWriteGuard.allowWritesTo(
          storage.uuid().toString(),
          () ->
              CommitMetadata.withCommitProperties(
                  properties,
                  () -> {
                    merge.run(spark, target);
                    return null;
                  },
                  RuntimeException.class));
      long published = commit.publish();
      new io.floe.spark.mv.MaterializedViewCatalog(spark).invalidateSparkCache(mv.storageName());
      return published;
    }
  }

  /**
   * Appends a change to the storage table's feed branch and returns the feed snapshot, or nothing
   * when the feed was closed (its last reader dropped) since the refresh found it open: the change
   * then goes unrecorded, as it would have had the refresh started after the close. A refresh that
   * loses the race for main leaves an entry no main snapshot refers to, which {@link
   * ChangeFeed#trim} drops.
   */
  private java.util.OptionalLong recordInFeed(MaterializedView mv, Table storage, FeedEntry entry) {
    String token = UUID.randomUUID().toString();
    Map<String, String> properties =
        Map.of(ChangeFeed.TOKEN_PROPERTY, token, ChangeFeed.ADDS_ONLY_PROPERTY, String.valueOf(entry.addsOnly()));
    String branch = mv.storageName().quoted() + ".`branch_" + ChangeFeed.BRANCH + "`";
    boolean appended = StorageWriteGuard.allowWritesTo(
        storage.uuid().toString(),
        () -> CommitMetadata.withCommitProperties(properties, () -> {
          try {
            entry.rows().writeTo(branch).append();
            return true;
          } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
            LOG.info("The change feed of {} was closed during its refresh; the refresh's change is not recorded in it",
                mv.storageName());
            return false;
          }
        }, RuntimeException.class));
    return appended ? java.util.OptionalLong.of(ChangeFeed.appendedWith(storage, token)) : java.util.OptionalLong.empty();
  }

  /** Records the new source states without changing any row: the sources moved, their data did not. */
  private static long commitStateOnly(
      Table storage, Snapshot readSnapshot, String stateJson, String reason, List<ExpectationResult> expectations,
      boolean byLineage) {
    try (BranchCommit commit = new BranchCommit(storage, readSnapshot.snapshotId())) {
      var append = storage.newAppend().toBranch(commit.branch());
      summary(stateJson, reason, expectations).forEach(append::set);
      append.set(RowLineage.SUMMARY_KEY, String.valueOf(byLineage));
      append.set(ChangeFeed.SNAPSHOT_PROPERTY, ChangeFeed.NONE);
      append.commit();
      return commit.publish();
    }
  }

  private static Map<String, String> summary(String stateJson, String reason, List<ExpectationResult> expectations) {
    Map<String, String> properties = new LinkedHashMap<>();
    if (!expectations.isEmpty()) {
      properties.put(ExpectationResultParser.SUMMARY_KEY, ExpectationResultParser.toJson(expectations));
    }
    properties.put(RefreshState.SUMMARY_KEY, stateJson);
    properties.put(MaterializedViewProperties.SUMMARY_REFRESH_TYPE, RefreshType.INCREMENTAL.name());
    properties.put(MaterializedViewProperties.SUMMARY_REFRESH_REASON, reason);
    return properties;
  }

}
