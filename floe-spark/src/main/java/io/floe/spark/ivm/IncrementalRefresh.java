package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.max;

import io.floe.mv.RefreshState;
import io.floe.mv.SourceState;
import io.floe.refresh.ExpectationResult;
import io.floe.spark.refresh.ExpectationCheck;
import io.floe.spark.capture.CapturedChange;
import io.floe.spark.capture.ChangeFeed;
import io.floe.spark.capture.ChangeCapture;
import io.floe.spark.capture.ChangeKind;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.PinnedDefinition;
import io.floe.spark.refresh.Source;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
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
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;

/**
 * Steps 2 to 4 of the refresh protocol for a definition with an incremental shape: captures the
 * sources' changes since the recorded snapshots ({@link ChangeCapture}, or a source MV's {@link
 * SourceFeeds feed}), propagates them through the definition with the shape's delta rule ({@link
 * LinearDelta}, {@link AggregateDelta}, {@link KeyedRecompute}, over the terms of {@link
 * ChangeTerms}), and applies the resulting change to the storage table in one commit ({@link
 * StorageCommit}); or says why a full refresh must run instead.
 */
public final class IncrementalRefresh {
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

  private final SparkSession spark;
  private final SourcePinning pinning;
  private final ChangeTerms changeTerms;
  private final SizeChecks sizeChecks;

  public IncrementalRefresh(SparkSession spark) {
    this.spark = spark;
    this.pinning = new SourcePinning(spark);
    this.changeTerms = new ChangeTerms(spark, pinning);
    this.sizeChecks = new SizeChecks(spark);
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
          SourceFeeds.fromFeed(spark, source, from, to)
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
      long snapshot = StorageCommit.stateOnly(storage, readSnapshot, stateJson, reason, none, byLineage);
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
      ChangeSummary summary;
      StorageMerge merge;
      Optional<StorageCommit.FeedEntry> feed = Optional.empty();
      List<ExpectationResult> expectations = List.of();
      // The rows expectations judged: their rejected ones are quarantined once the change committed.
      Optional<Dataset<Row>> judged = Optional.empty();
      StorageCommit commit = new StorageCommit(spark);
      java.util.function.Supplier<ChangeTerms.ChangeViews> changeViews =
          () -> ChangeTerms.ChangeViews.of(zsets, appends, small, suffix, views);
      if (shape.kind() == DefinitionShape.Kind.AGGREGATE) {
        AggregateDelta.Result result =
            new AggregateDelta(spark, pinning, changeTerms, sizeChecks)
                .change(mv, shape, storage, readSnapshot, pinned, oldSources, moved, changeViews, changes, rowsRead);
        if (!(result instanceof AggregateDelta.Merge groups)) {
          return new Fallback(((AggregateDelta.Full) result).reason());
        }
        summary = groups.summary();
        merge = groups.merge();
      } else {
        Dataset<Row> rows;
        if (keyed.isPresent()) {
          LinearDelta.LineageChange change =
              new LinearDelta(changeTerms)
                  .lineageChange(mv, keyed.get(), sources, oldSources, zsets.get(0), check, suffix, views);
          if (change.repeated() > 0) {
            return new Fallback(change.repeated() + " source row id(s) each give more than one row, so the stored rows"
                + " cannot be matched by them");
          }
          change.rows().createOrReplaceTempView(changes);
          String reason = changedReason(appendOnly, operations);
          long snapshot = commit.merge(
              mv, storage, readSnapshot, LinearDelta.lineageMerge(mv, changes, change), Optional.empty(), stateJson, reason,
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
          ChangeTerms.Terms terms =
              changeTerms.terms(mv, shape.augmentedParsed().orElseThrow(), mv.viewColumns(), sources, oldSources, moved,
                  changeViews.get());
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
          rows = LinearDelta.linearChange(mv, inserted, deleted);
        }
        rows.createOrReplaceTempView(changes);
        LinearDelta.LinearSummary linear = LinearDelta.linearSummary(mv, rows, storage, readSnapshot);
        summary = linear.summary();
        merge = LinearDelta.linearMerge(mv, changes, rows.schema(), linear.keys(), summary.bounds());
        if (ChangeFeed.isOpen(storage)) {
          feed = Optional.of(new StorageCommit.FeedEntry(StorageCommit.feedRows(mv, rows), summary.removed() == 0));
        }
      }
      String reason = changedReason(appendOnly, operations);
      long snapshot = commit.merge(mv, storage, readSnapshot, merge, feed, stateJson, reason, expectations, false);
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

  private static String changedReason(boolean appendOnly, List<String> operations) {
    return appendOnly ? "sources appended rows" : "sources changed rows (" + String.join(", ", operations) + ")";
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
            int index = ChangeTerms.indexOf(sources, name.toString());
            tables.add(name.toString());
            moved[0] |= oldSources.get(index) != sources.get(index);
            read.merge(sources.get(index).name().toString(), oldSources.get(index).totalRecords(), Long::sum);
            return changeTerms.readAt(parts, oldSources.get(index));
          });
      if (!moved[0]) {
        continue;
      }
      LogicalPlan after =
          pinning.substitute(subquery, mv.defaultCatalog(), mv.defaultNamespace(), (parts, name) -> {
            Source source = sources.get(ChangeTerms.indexOf(sources, name.toString()));
            read.merge(source.name().toString(), source.totalRecords(), Long::sum);
            return changeTerms.readAt(parts, source);
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
   * table, the columns the definition depends on, when its plan shows them. For an MV, the view
   * columns the definition's rows need, with, for an MV of plain rows, its hidden multiplicity: a
   * change read in fewer columns decodes fewer (an MV over a wide one reads a few of its columns),
   * and its other view columns are NULL ({@link #logicalRows}). When the plan does not show them,
   * an aggregate MV is read in its view columns, one storage row per group, whose hidden counters
   * and COUNT(DISTINCT) value maps are no part of its rows (the maps are most of its storage and
   * cannot be compared row by row), and an MV of plain rows in every column.
   */
  public static Optional<Set<String>> changeColumns(Source source, SourceColumns readColumns) {
    if (source.materializedView().isEmpty()) {
      return readColumns.rowsDependOn(source.table());
    }
    MaterializedView upstream = source.materializedView().get();
    Optional<Set<String>> needed = readColumns.rowsNeed(source.table()).map(columns -> {
      Set<String> view = new java.util.HashSet<>();
      upstream.viewColumns().forEach(c -> view.add(c.toLowerCase(java.util.Locale.ROOT)));
      Set<String> read = new java.util.TreeSet<>();
      columns.stream().filter(view::contains).forEach(read::add);
      if (upstream.layout() == StorageLayout.ROWS) {
        read.add(StorageLayout.COUNT.toLowerCase(java.util.Locale.ROOT));
      }
      return read;
    });
    if (needed.isPresent() || upstream.layout() != StorageLayout.GROUPS) {
      return needed;
    }
    return Optional.of(Set.copyOf(upstream.viewColumns()));
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
    if (!sizeChecks.on()) {
      return capture;
    }
    long floor = sizeChecks.scanFloor();
    long limit = Math.max(floor, source.totalRecords());
    if (shape.kind() == DefinitionShape.Kind.KEYED || shape.recomputesGroups()) {
      long stored = Math.max(floor, SizeChecks.storedRecords(storageSnapshot));
      if (stored < limit) {
        return capture.limitScanTo(stored,
            "more than %d (the rows the view stores, or " + floor + " if more); its definition recomputes the groups"
                + " or keys a change touches from every source row, so a full refresh costs less");
      }
    }
    return capture.limitScanTo(limit);
  }

  /** How refreshes name {@code source} in their reasons: its table's (or its MV's storage's) quoted name. */
  public static String sparkName(Source source) {
    return source.materializedView().map(MaterializedView::storageName).orElse(source.name()).quoted();
  }

  /**
   * The source's change as rows of what the definition reads, with their weights: for an MV, its
   * view columns, those the change was not read in NULL (the definition's rows need none of them).
   */
  private static Dataset<Row> logicalRows(Dataset<Row> zset, Source source) {
    if (source.materializedView().isEmpty()) {
      return zset;
    }
    MaterializedView mv = source.materializedView().get();
    Dataset<Row> weighted =
        mv.layout() == StorageLayout.ROWS
            ? zset.withColumn(WEIGHT, col(WEIGHT).multiply(col(StorageLayout.COUNT)))
            : zset;
    Set<String> held = new java.util.HashSet<>();
    for (String c : zset.columns()) {
      held.add(c.toLowerCase(java.util.Locale.ROOT));
    }
    org.apache.iceberg.Schema stored = source.table().schema();
    // The view's rows as a read of it gives them: a collated column cast back to its collation.
    Map<String, DataType> collated = mv.collatedColumns();
    List<Column> columns = new ArrayList<>();
    for (String c : mv.viewColumns()) {
      Column column =
          held.contains(c.toLowerCase(java.util.Locale.ROOT))
              ? col(StorageLayout.quote(c))
              : lit(null).cast(SparkSchemaUtil.convert(stored.caseInsensitiveFindField(c).type()));
      columns.add((collated.containsKey(c) ? column.cast(collated.get(c)) : column).as(c));
    }
    columns.add(col(WEIGHT));
    return weighted.select(columns.toArray(new Column[0]));
  }

  private static long summaryCount(Map<String, String> summary, String key) {
    String value = summary.get(key);
    return value == null ? 0 : Long.parseLong(value);
  }

}
