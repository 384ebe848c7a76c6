package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.array_repeat;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.explode;
import static org.apache.spark.sql.functions.lit;

import io.floe.spark.Plans;
import io.floe.spark.Scala;
import io.floe.spark.capture.ChangeCapture;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.Source;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.StructField;

/**
 * The terms of a definition's change: the definition with each read of a changed source replaced
 * by that source's inserted or deleted rows, the other reads pinned at their new or old snapshot
 * (or, under an outer join, the rule of {@link OuterJoinDelta}).
 */
final class ChangeTerms {
  private static final String WEIGHT = ChangeCapture.WEIGHT;

  private final SparkSession spark;
  private final SourcePinning pinning;

  ChangeTerms(SparkSession spark, SourcePinning pinning) {
    this.spark = spark;
    this.pinning = pinning;
  }

  /** The definition's change, as the rows it gains and the rows it loses (each repeated). */
  record Terms(Dataset<Row> inserted, Dataset<Row> deleted) {}

  /**
   * The temporary views of the changes of the moved sources, by their position in {@code moved}:
   * each change's inserted rows and its deleted rows, each repeated as often as its weight says.
   * An appending change deletes nothing, and its deleted rows are a filter Spark knows to be empty,
   * so every term over them is pruned from the plan instead of run over no rows.
   */
  record ChangeViews(List<String> inserted, List<String> deleted, List<Boolean> small) {
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
  Terms terms(
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
  List<Integer> reads(MaterializedView mv, LogicalPlan definition, List<Source> sources) {
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
  record MarkedRead(LogicalPlan plan, String marker, List<String> parts, int source) {}

  MarkedRead markedRead(
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
  Dataset<Row> term(
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

  /** A read of {@code source} at its pinned snapshot; a source that had no snapshot yet was empty. */
  LogicalPlan readAt(List<String> parts, Source source) {
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

  static int indexOf(List<Source> sources, String name) {
    for (int i = 0; i < sources.size(); i++) {
      if (sources.get(i).name().toString().equals(name)) {
        return i;
      }
    }
    throw new IllegalStateException("Source " + name + " was not pinned");
  }

  /** Each row repeated |weight| times, without the weight. */
  private static Dataset<Row> expand(Dataset<Row> rows, boolean negative) {
    Column times = (negative ? col(WEIGHT).multiply(-1) : col(WEIGHT)).cast("int");
    return rows.withColumn("__floe_rep", explode(array_repeat(lit(0), times))).drop("__floe_rep", WEIGHT);
  }
}
