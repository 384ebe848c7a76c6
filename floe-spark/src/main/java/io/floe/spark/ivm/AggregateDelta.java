package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.abs;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.greatest;
import static org.apache.spark.sql.functions.isnan;
import static org.apache.spark.sql.functions.least;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.CountSetting;
import io.floe.spark.refresh.PinnedDefinition;
import io.floe.spark.refresh.Source;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;

/**
 * The delta rule of a GROUP BY: the new values of every group a change touches, from the stored
 * values and the change's partial aggregates, or recomputed from the sources where the stored
 * values cannot tell them; and the MERGE that writes them.
 */
public final class AggregateDelta {
  private static final String DELETE = "__floe_delete";
  private static final String RECHECK = "__floe_recheck";

  private final SparkSession spark;
  private final SourcePinning pinning;
  private final ChangeTerms changeTerms;
  private final SizeChecks sizeChecks;

  AggregateDelta(SparkSession spark, SourcePinning pinning, ChangeTerms changeTerms, SizeChecks sizeChecks) {
    this.spark = spark;
    this.pinning = pinning;
    this.changeTerms = changeTerms;
    this.sizeChecks = sizeChecks;
  }

  /** The change of the touched groups, ready to merge, or why a full refresh costs less. */
  sealed interface Result permits Merge, Full {}

  /** The groups' change (a temporary view), what it writes and removes, and the MERGE applying it. */
  record Merge(ChangeSummary summary, StorageMerge merge) implements Result {}

  /** A full refresh costs less than this change, for this reason. */
  record Full(String reason) implements Result {}

  /**
   * The new values of the groups the change of the {@code moved} sources touches, registered as the
   * temporary view {@code changes}, and the MERGE that writes them to the storage; or why a full
   * refresh costs less ({@link SizeChecks}). {@code changeViews} registers the sources' changes as
   * temporary views, once the checks that read none of them kept the refresh incremental.
   */
  Result change(
      MaterializedView mv,
      DefinitionShape shape,
      Table storage,
      Snapshot readSnapshot,
      PinnedDefinition pinned,
      List<Source> oldSources,
      List<Integer> moved,
      java.util.function.Supplier<ChangeTerms.ChangeViews> changeViews,
      String changes,
      Map<String, Long> rowsRead) {
    List<Source> sources = pinned.sources();
    Optional<String> scansWhole =
        outerJoinReadsMoreThanItWrites(mv, shape, readSnapshot, pinned, sources, oldSources, moved);
    if (scansWhole.isPresent()) {
      return new Full(scansWhole.get());
    }
    ChangeTerms.ChangeViews changed = changeViews.get();
    ChangeTerms.Terms terms = changeTerms.terms(
        mv, shape.augmentedParsed().orElseThrow(), groupColumns(mv, shape), sources, oldSources, moved, changed);
    List<String> keys = groupKeys(mv, shape);
    Dataset<Row> affected =
        terms.inserted().select(StorageLayout.columns(keys))
            .union(terms.deleted().select(StorageLayout.columns(keys)))
            .distinct()
            .localCheckpoint(true);
    Optional<String> tooCostly = recomputesMostGroups(shape, readSnapshot, pinned, affected);
    if (tooCostly.isPresent()) {
      return new Full(tooCostly.get());
    }
    // Built once the checks above kept the refresh incremental: a definition that recomputes
    // its touched groups builds their maps from the sources.
    Map<DefinitionShape.DistinctColumn, ChangeTerms.Terms> distinct = new LinkedHashMap<>();
    if (!shape.recomputesGroups()) {
      for (DefinitionShape.DistinctColumn column : shape.distinctColumns()) {
        distinct.put(
            column,
            changeTerms.terms(mv, column.valueCounts(), DistinctState.countColumns(keys), sources, oldSources, moved, changed));
      }
    }
    Dataset<Row> rows = groupChange(mv, shape, readSnapshot, pinned, terms, distinct, keys, affected, rowsRead);
    rows.createOrReplaceTempView(changes);
    ChangeSummary summary = groupSummary(rows, keys, storage, readSnapshot);
    return new Merge(summary, StorageMerge.of(groupMerge(mv, shape, changes, summary.bounds())));
  }

  /**
   * The setting of how many bytes of storage files (data and delete files) a view with {@code
   * COUNT(DISTINCT)} holds from which the stored values of the touched groups are spread over the
   * cores before a change is merged into them ({@value #DEFAULT_SPREAD_STATE_BYTES}, 16 MB, by
   * default). Below it, merging them in one task costs less than the shuffles that spread them.
   */
  public static final String SPREAD_STATE_BYTES = "floe.refresh.distinct-state.spread-bytes";

  private static final long DEFAULT_SPREAD_STATE_BYTES = 16L << 20;

  /**
   * The bytes of a storage snapshot's data and delete files, from its summary (data files whose rows
   * are mostly deleted count whole, so it errs high); unknown counts as unlimited.
   */
  private static long storageBytes(Snapshot snapshot) {
    String bytes = snapshot.summary() == null ? null : snapshot.summary().get("total-files-size");
    return bytes == null ? Long.MAX_VALUE : Long.parseLong(bytes);
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

  private Dataset<Row> groupChange(
      MaterializedView mv,
      DefinitionShape shape,
      Snapshot readSnapshot,
      PinnedDefinition pinned,
      ChangeTerms.Terms terms,
      Map<DefinitionShape.DistinctColumn, ChangeTerms.Terms> distinct,
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
      stored = storageBytes(readSnapshot) >= CountSetting.bytes(spark, SPREAD_STATE_BYTES, DEFAULT_SPREAD_STATE_BYTES, 0)
          ? stored.repartition(spark.sparkContext().defaultParallelism()).localCheckpoint(true)
          : stored.coalesce(1).localCheckpoint(true);
      k = DistinctState.withStoredMaps(affected, stored, keys, distinct.keySet());
    }
    for (Map.Entry<DefinitionShape.DistinctColumn, ChangeTerms.Terms> entry : distinct.entrySet()) {
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
   * check, it applies from {@link SizeChecks#SCAN_FLOOR} source rows and is off with {@link
   * SizeChecks#DELTA_THRESHOLD_CHECK}.
   */
  private Optional<String> recomputesMostGroups(
      DefinitionShape shape, Snapshot readSnapshot, PinnedDefinition pinned, Dataset<Row> affected) {
    if (!shape.recomputesGroups() || !sizeChecks.on()) {
      return Optional.empty();
    }
    long sourceRows = pinned.sources().stream().mapToLong(Source::totalRecords).sum();
    long stored = SizeChecks.storedRecords(readSnapshot);
    if (sourceRows < sizeChecks.scanFloor() || stored == Long.MAX_VALUE) {
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
   * ChangeTerms#keptSideNarrowing}): measured over 20 million facts partitioned by the join key, a change of
   * one key took 4.1 s incrementally and 2.3 to 2.7 s in full. A definition that stores about a row
   * per source row gains from the rule: a full refresh rewrites them all. Like the checks above, it
   * applies from {@link SizeChecks#SCAN_FLOOR} source rows and is off with {@link SizeChecks#DELTA_THRESHOLD_CHECK}.
   */
  private Optional<String> outerJoinReadsMoreThanItWrites(
      MaterializedView mv,
      DefinitionShape shape,
      Snapshot readSnapshot,
      PinnedDefinition pinned,
      List<Source> sources,
      List<Source> oldSources,
      List<Integer> moved) {
    if (!sizeChecks.on()) {
      return Optional.empty();
    }
    long sourceRows = pinned.sources().stream().mapToLong(Source::totalRecords).sum();
    long stored = SizeChecks.storedRecords(readSnapshot);
    if (sourceRows < sizeChecks.scanFloor() || stored == Long.MAX_VALUE || stored * 2 >= sourceRows) {
      return Optional.empty();
    }
    LogicalPlan definition = shape.augmentedParsed().orElseThrow();
    List<Integer> reads = changeTerms.reads(mv, definition, sources);
    for (int read = 0; read < reads.size(); read++) {
      if (!moved.contains(reads.get(read))) {
        continue;
      }
      ChangeTerms.MarkedRead marked = changeTerms.markedRead(mv, definition, sources, oldSources, read);
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

  private static ChangeSummary groupSummary(Dataset<Row> change, List<String> keys, Table storage, Snapshot readSnapshot) {
    return ChangeSummary.of(
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
}
