package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAlias;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import org.apache.spark.sql.catalyst.optimizer.InlineCTE;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;

/**
 * The incremental shape of a definition: which delta rule maintains it, or why none does.
 *
 * <ul>
 *   <li>LINEAR: filters, projections, generators, inner joins and UNION ALL, each source read
 *       once. The definition is linear in each source, so its change is, summed over the sources
 *       that changed, the definition with that source replaced by its inserted rows minus the same
 *       with its deleted rows, the sources before it read at their new snapshot and those after it
 *       at their old one.
 *   <li>AGGREGATE: a GROUP BY over a linear part, every grouping expression selected. COUNT and
 *       SUM columns are maintained from per-group partial aggregates of the change, AVG columns
 *       from a hidden running sum and count ({@link AverageState}), COUNT(DISTINCT) columns from a
 *       hidden count per group and value ({@link DistinctState}); other aggregates are recomputed
 *       for the affected groups only. SELECT DISTINCT is the aggregate
 *       grouping by every column.
 *   <li>KEYED: HAVING, window functions with PARTITION BY and outer joins on an equi-join key; the
 *       view rows of the keys a change touches are recomputed, see {@link KeyedShape}.
 * </ul>
 */
public final class DefinitionShape {
  /** The delta rule that maintains a definition. */
  public enum Kind {
    LINEAR,
    AGGREGATE,
    KEYED,
    NOT_INCREMENTAL
  }

  private static final Set<String> LINEAR_NODES =
      Set.of("Project", "Filter", "SubqueryAlias", "Generate", "DataSourceV2Relation", "Join", "Union");

  private final Kind kind;
  private final String reason;
  private final List<ColumnRole> roles;
  private final LogicalPlan augmentedParsed;
  private final KeyedShape keyed;
  private final List<DistinctColumn> distinctColumns;
  private final Map<Integer, Average> averages;

  private DefinitionShape(Kind kind, String reason, List<ColumnRole> roles, LogicalPlan augmentedParsed) {
    this(kind, reason, roles, augmentedParsed, null, List.of(), Map.of());
  }

  private DefinitionShape(
      Kind kind,
      String reason,
      List<ColumnRole> roles,
      LogicalPlan augmentedParsed,
      KeyedShape keyed,
      List<DistinctColumn> distinctColumns,
      Map<Integer, Average> averages) {
    this.kind = kind;
    this.reason = reason;
    this.roles = List.copyOf(roles);
    this.augmentedParsed = augmentedParsed;
    this.keyed = keyed;
    this.distinctColumns = List.copyOf(distinctColumns);
    this.averages = Map.copyOf(averages);
  }

  /**
   * A COUNT(DISTINCT x) column of an AGGREGATE definition, kept with each value of x in a group
   * and its number of source rows, packed in a hidden column ({@link DistinctState}).
   *
   * @param position the column's position in the view
   * @param valueType the type of x
   * @param valueCounts the parsed definition's groups refined by x: the grouping columns, x as
   *     {@value DistinctState#VALUE} and the row count as {@value DistinctState#ROWS}, for the rows
   *     where x is not NULL
   */
  public record DistinctColumn(int position, DataType valueType, LogicalPlan valueCounts) {
    /** The hidden storage column holding the packed value counts. */
    public String stateColumn() {
      return StorageLayout.distinctState(position);
    }

    public StructField stateField() {
      return new StructField(stateColumn(), DataTypes.BinaryType, true, Metadata.empty());
    }
  }

  private static DefinitionShape notIncremental(String reason) {
    return new DefinitionShape(Kind.NOT_INCREMENTAL, reason, List.of(), null);
  }

  public Kind kind() {
    return kind;
  }

  /** Why the definition is not incremental; empty for incremental shapes. */
  public String reason() {
    return reason;
  }

  /** The storage layout this shape needs. */
  public StorageLayout layout() {
    switch (kind) {
      case LINEAR:
      case KEYED:
        return StorageLayout.ROWS;
      case AGGREGATE:
        return StorageLayout.GROUPS;
      default:
        return StorageLayout.PLAIN;
    }
  }

  /** For KEYED: the operator and the keys by which the view's rows are recomputed. */
  public Optional<KeyedShape> keyed() {
    return Optional.ofNullable(keyed);
  }

  /** Roles of the output columns of an AGGREGATE definition, by position. */
  public List<ColumnRole> roles() {
    return roles;
  }

  /** Positions of the grouping columns of an AGGREGATE definition ({@link ColumnRole#KEY}). */
  public List<Integer> keyPositions() {
    return positionsOf(ColumnRole.KEY);
  }

  /** Positions of the SUM columns, which carry a hidden non-null count. */
  public List<Integer> sumPositions() {
    return positionsOf(ColumnRole.SUM);
  }

  /** Positions of the output columns in {@code role}, ascending. */
  private List<Integer> positionsOf(ColumnRole role) {
    List<Integer> positions = new ArrayList<>();
    for (int i = 0; i < roles.size(); i++) {
      if (roles.get(i) == role) {
        positions.add(i);
      }
    }
    return positions;
  }

  /** The COUNT(DISTINCT x) columns of an AGGREGATE definition kept with a hidden state. */
  public List<DistinctColumn> distinctColumns() {
    return distinctColumns;
  }

  /**
   * The AVG columns of an AGGREGATE definition by position, each with the analyzed AVG, kept from a
   * hidden running sum and non-null count ({@link AverageState}).
   */
  public Map<Integer, Average> averages() {
    return averages;
  }

  /** The AVG positions in ascending order. */
  private List<Integer> averagePositions() {
    return averages.keySet().stream().sorted().toList();
  }

  /** The hidden columns the storage table of this shape's layout has, in order, with their types. */
  public List<StructField> hiddenFields() {
    List<StructField> fields = new ArrayList<>();
    for (String column : layout().hiddenColumns(sumPositions())) {
      fields.add(new StructField(column, DataTypes.LongType, true, Metadata.empty()));
    }
    if (layout() == StorageLayout.GROUPS) {
      for (int position : averagePositions()) {
        fields.add(new StructField(StorageLayout.nonNullCount(position), DataTypes.LongType, true, Metadata.empty()));
        fields.add(
            new StructField(
                StorageLayout.runningSum(position), AverageState.sumType(averages.get(position)), true, Metadata.empty()));
      }
      distinctColumns.forEach(d -> fields.add(d.stateField()));
    }
    return fields;
  }

  /** True when some column cannot be maintained from counters, so affected groups are recomputed. */
  public boolean recomputesGroups() {
    return roles.contains(ColumnRole.RECOMPUTE);
  }

  /**
   * For AGGREGATE: the parsed definition with the hidden aggregates appended to its select list
   * ({@code count(*)} as {@value StorageLayout#COUNT}, {@code count(x)} for every {@code sum(x)},
   * {@code count(x)} and the sum of x for every {@code avg(x)}), and 0 in place of each
   * COUNT(DISTINCT), which {@link #distinctColumns()} computes.
   * Otherwise the parsed definition itself.
   */
  public Optional<LogicalPlan> augmentedParsed() {
    return Optional.ofNullable(augmentedParsed);
  }

  /**
   * Classifies a definition.
   *
   * @param parsed the definition as parsed
   * @param analyzed the pinned definition, analyzed
   */
  public static DefinitionShape of(LogicalPlan parsed, LogicalPlan analyzed) {
    DefinitionShape shape = of(parsed, analyzed, io.floe.spark.refresh.SourcePinning.tableReferenceCount(parsed).orElse(-1));
    for (org.apache.spark.sql.catalyst.expressions.Attribute column : io.floe.spark.Scala.list(analyzed.output())) {
      java.util.Optional<String> collation = collation(column.dataType());
      if (collation.isPresent()) {
        // Iceberg keeps no collation, so the storage column is plain STRING, and Spark refuses to
        // match it with the change's collated one.
        return notIncremental("column " + column.name() + " has the collation " + collation.get()
            + ", which its storage table cannot keep, so stored and changed values cannot be matched");
      }
    }
    if (shape.layout() == StorageLayout.ROWS) {
      // The ROWS layout counts equal rows and keys them by a hash of their values; Spark can
      // neither group nor hash a map.
      for (org.apache.spark.sql.catalyst.expressions.Attribute column : io.floe.spark.Scala.list(analyzed.output())) {
        if (holdsMap(column.dataType())) {
          return notIncremental("column " + column.name() + " holds a MAP (" + column.dataType().sql()
              + "), and rows are maintained by comparing their values, which Spark cannot do for maps");
        }
      }
    }
    return shape;
  }

  /** The collation of a string in {@code type} that is not Spark's default byte-wise one, if any. */
  public static java.util.Optional<String> collation(org.apache.spark.sql.types.DataType type) {
    if (type instanceof org.apache.spark.sql.types.StringType string && !string.isUTF8BinaryCollation()) {
      return java.util.Optional.of(string.collationName());
    }
    if (type instanceof org.apache.spark.sql.types.ArrayType array) {
      return collation(array.elementType());
    }
    if (type instanceof org.apache.spark.sql.types.MapType map) {
      return collation(map.keyType()).or(() -> collation(map.valueType()));
    }
    if (type instanceof org.apache.spark.sql.types.StructType struct) {
      return java.util.Arrays.stream(struct.fields()).map(f -> collation(f.dataType()))
          .flatMap(java.util.Optional::stream).findFirst();
    }
    return java.util.Optional.empty();
  }

  private static boolean holdsMap(org.apache.spark.sql.types.DataType type) {
    if (type instanceof org.apache.spark.sql.types.MapType) {
      return true;
    }
    if (type instanceof org.apache.spark.sql.types.ArrayType array) {
      return holdsMap(array.elementType());
    }
    if (type instanceof org.apache.spark.sql.types.StructType struct) {
      return java.util.Arrays.stream(struct.fields()).anyMatch(f -> holdsMap(f.dataType()));
    }
    return false;
  }

  /**
   * @param references how many times the definition names a table, or -1 when it has common
   *     table expressions: a source read twice (a self-join) is maintained when each of its reads
   *     is one of these, so that each takes its own term of the change (a common table expression
   *     read twice reads its tables twice from one reference).
   */
  private static DefinitionShape of(LogicalPlan parsed, LogicalPlan analyzed, int references) {
    if (parsed instanceof UnresolvedWith with) {
      // Common table expressions (a pipeline's temporary views among them) are classified with
      // their bodies inlined, and stay around the main query of the augmented definition.
      LogicalPlan inlinedAnalyzed = new InlineCTE(true, false).apply(analyzed);
      DefinitionShape inner = of(with.child(), inlinedAnalyzed, references);
      if (inner.augmentedParsed == null && OuterJoinDelta.holdsOuterJoin(inlinedAnalyzed)) {
        // An outer join's delta rule takes a term per read: with the expressions inlined, each
        // read of their tables is a reference of its own.
        Optional<LogicalPlan> inlined = CteInlining.inline(parsed);
        if (inlined.isPresent()) {
          return of(inlined.get(), inlinedAnalyzed, io.floe.spark.refresh.SourcePinning.tableReferenceCount(inlined.get()).orElse(-1));
        }
      }
      if (inner.augmentedParsed == null) {
        return inner;
      }
      List<DistinctColumn> distinct = new ArrayList<>();
      for (DistinctColumn column : inner.distinctColumns) {
        distinct.add(
            new DistinctColumn(
                column.position(),
                column.valueType(),
                new UnresolvedWith(column.valueCounts(), with.cteRelations(), with.allowRecursion())));
      }
      return new DefinitionShape(
          inner.kind,
          inner.reason,
          inner.roles,
          new UnresolvedWith(inner.augmentedParsed, with.cteRelations(), with.allowRecursion()),
          inner.keyed,
          distinct,
          inner.averages);
    }
    if (analyzed instanceof Distinct) {
      return ofDistinct(parsed, (Distinct) analyzed, references);
    }
    Optional<KeyedShape.Verdict> verdict = KeyedShape.classify(analyzed);
    if (verdict.isPresent()) {
      if (verdict.get().shape().isPresent()) {
        return new DefinitionShape(Kind.KEYED, "", List.of(), parsed, verdict.get().shape().get(), List.of(), Map.of());
      }
      if (!OuterJoinDelta.mayApply(analyzed)) {
        return notIncremental(verdict.get().reason());
      }
      // Not keyed by its join key: an outer join's own delta rule may still maintain it.
    }
    if (analyzed instanceof Aggregate) {
      Aggregate aggregate = (Aggregate) analyzed;
      Optional<String> notLinear = OuterJoinDelta.problem(aggregate.child(), references);
      if (notLinear.isPresent()) {
        return notIncremental(notLinear.get());
      }
      return ofAggregate(parsed, aggregate);
    }
    Optional<String> notLinear = OuterJoinDelta.problem(analyzed, references);
    if (notLinear.isPresent()) {
      return notIncremental(notLinear.get());
    }
    return new DefinitionShape(Kind.LINEAR, "", List.of(), parsed);
  }

  static Optional<String> linearProblem(LogicalPlan plan, boolean outerJoins) {
    return linearProblem(plan, outerJoins, -1);
  }

  static Optional<String> linearProblem(LogicalPlan plan, boolean outerJoins, int references) {
    return linearProblem(plan, outerJoins, references, false);
  }

  static Optional<String> linearProblem(LogicalPlan plan, boolean outerJoins, int references, boolean recomputedByKey) {
    return linearProblem(plan, outerJoins, references, recomputedByKey, false);
  }

  /**
   * Why {@code plan} is not filters, projections, generators, inner joins (and outer joins when
   * {@code outerJoins}) and UNION ALL over sources each read once, with no subquery expression
   * and no semi or anti join unless {@code recomputedByKey}. A plan whose rows of the touched keys
   * are recomputed whole ({@link KeyedShape}) may hold those and read a source more than once: no
   * delta rule needs a term per read. The plans of its subqueries are not looked at then. With
   * {@code groupedByKey}, it may hold aggregates too: the caller's key, which every read carries,
   * passes through each of them as a grouping column, so the rows of a key come from the source
   * rows of that key alone.
   */
  static Optional<String> linearProblem(
      LogicalPlan plan, boolean outerJoins, int references, boolean recomputedByKey, boolean groupedByKey) {
    List<String> problems = new ArrayList<>();
    List<String> relations = new ArrayList<>();
    plan.foreach(
        node -> {
          String name = node.getClass().getSimpleName();
          if (!LINEAR_NODES.contains(name) && !(groupedByKey && node instanceof Aggregate)) {
            problems.add(operatorName(node) + " is not maintained incrementally yet");
          }
          if (node instanceof Join
              && !(((Join) node).joinType() instanceof Inner$)
              && !(outerJoins && KeyedShape.isOuter(((Join) node).joinType()))
              && !(recomputedByKey && KeyedShape.isSemiOrAnti(((Join) node).joinType()))) {
            problems.add(((Join) node).joinType().sql() + " JOIN is not maintained incrementally yet");
          }
          if (node instanceof Union && (((Union) node).byName() || ((Union) node).allowMissingCol())) {
            problems.add("UNION BY NAME is not maintained incrementally yet");
          }
          if (node instanceof DataSourceV2Relation) {
            relations.add(((DataSourceV2Relation) node).table().name());
          }
          for (Expression expression : Scala.list(node.expressions())) {
            if (!recomputedByKey && expression.exists(e -> e instanceof SubqueryExpression)) {
              problems.add("subqueries in expressions are not maintained incrementally yet");
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    if (!problems.isEmpty()) {
      return Optional.of(problems.get(0));
    }
    if (relations.isEmpty()) {
      return Optional.of("a definition without sources has nothing to maintain");
    }
    if (!recomputedByKey && new java.util.HashSet<>(relations).size() != relations.size() && relations.size() != references) {
      // Each read of a source takes its own term of the change; a read the definition does not
      // name (a common table expression used twice) cannot.
      return Optional.of(
          "a definition reading the same source twice (a self-join) is maintained incrementally only in joins, UNION ALL,"
              + " GROUP BY and DISTINCT without common table expressions");
    }
    return Optional.empty();
  }

  private static String operatorName(LogicalPlan node) {
    String name = node.getClass().getSimpleName();
    switch (name) {
      case "Join":
        return "JOIN";
      case "Aggregate":
        return "a nested aggregate";
      case "Window":
        return "a window function";
      case "Union":
        return "UNION";
      case "Distinct":
      case "Deduplicate":
        return "DISTINCT";
      case "Intersect":
        return "INTERSECT";
      case "Except":
        return "EXCEPT";
      case "Expand":
        return "GROUPING SETS / ROLLUP / CUBE";
      case "LocalRelation":
        return "an inline table (VALUES)";
      case "OneRowRelation":
        return "a SELECT without FROM";
      default:
        return name;
    }
  }

  /**
   * SELECT DISTINCT is a GROUP BY of every column with nothing aggregated: a row is in the view
   * while its hidden count is positive.
   */
  private static DefinitionShape ofDistinct(LogicalPlan parsed, Distinct distinct, int references) {
    Optional<String> notLinear = OuterJoinDelta.problem(distinct.child(), references);
    if (notLinear.isPresent()) {
      return notIncremental(notLinear.get());
    }
    if (!(parsed instanceof Distinct)) {
      return notIncremental("the DISTINCT could not be matched to its parsed form");
    }
    List<String> names = new ArrayList<>();
    Scala.list(distinct.output()).forEach(attribute -> names.add(attribute.name()));
    if (names.stream().map(n -> n.toLowerCase(Locale.ROOT)).distinct().count() != names.size()) {
      return notIncremental("DISTINCT over columns with the same name is not maintained incrementally yet");
    }
    List<Expression> grouping = new ArrayList<>();
    List<NamedExpression> select = new ArrayList<>();
    List<ColumnRole> roles = new ArrayList<>();
    for (String name : names) {
      UnresolvedAttribute column = UnresolvedAttribute.quoted(name);
      grouping.add(column);
      select.add(column);
      roles.add(ColumnRole.KEY);
    }
    select.add(alias(count(List.of(org.apache.spark.sql.catalyst.expressions.Literal$.MODULE$.apply(1))), StorageLayout.COUNT));
    LogicalPlan rows =
        new org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias(
            new org.apache.spark.sql.catalyst.AliasIdentifier("__floe_distinct", Scala.seq()),
            ((Distinct) parsed).child());
    return new DefinitionShape(
        Kind.AGGREGATE, "", roles, new Aggregate(Scala.seq(grouping), Scala.seq(select), rows, Scala.none()));
  }

  private static DefinitionShape ofAggregate(LogicalPlan parsed, Aggregate aggregate) {
    List<Expression> grouping = Scala.list(aggregate.groupingExpressions());
    List<NamedExpression> outputs = Scala.list(aggregate.aggregateExpressions());
    List<Expression> inners = new ArrayList<>();
    for (NamedExpression output : outputs) {
      inners.add(output instanceof Alias ? ((Alias) output).child() : (Expression) (Object) output);
    }
    List<ColumnRole> roles = new ArrayList<>();
    Map<Integer, DataType> distinctTypes = new LinkedHashMap<>();
    Map<Integer, Average> averages = new LinkedHashMap<>();
    for (Expression inner : inners) {
      if (inner instanceof AggregateExpression) {
        AggregateExpression call = (AggregateExpression) inner;
        boolean whole = call.mode() == Complete$.MODULE$ && call.filter().isEmpty();
        boolean plain = whole && !call.isDistinct();
        List<Expression> arguments = Scala.list(call.aggregateFunction().children());
        if (whole && call.isDistinct() && call.aggregateFunction() instanceof Count
            && arguments.size() == 1 && ValueCounts.keeps(arguments.get(0).dataType())) {
          distinctTypes.put(roles.size(), arguments.get(0).dataType());
          roles.add(ColumnRole.COUNT_DISTINCT);
        } else if (plain && call.aggregateFunction() instanceof Count) {
          boolean constant =
              Scala.list(call.aggregateFunction().children()).stream()
                  .allMatch(c -> c.foldable() && c instanceof Literal && ((Literal) c).value() != null);
          roles.add(constant ? ColumnRole.COUNT_ROWS : ColumnRole.COUNT_VALUES);
        } else if (plain && call.aggregateFunction() instanceof Sum) {
          roles.add(ColumnRole.SUM);
        } else if (plain && call.aggregateFunction() instanceof Average average && AverageState.keeps(average)) {
          averages.put(roles.size(), average);
          roles.add(ColumnRole.AVG);
        } else if (whole && call.aggregateFunction() instanceof Min) {
          roles.add(ColumnRole.MIN);
        } else if (whole && call.aggregateFunction() instanceof Max) {
          roles.add(ColumnRole.MAX);
        } else {
          roles.add(ColumnRole.RECOMPUTE);
        }
      } else if (inner.exists(e -> e instanceof AggregateExpression)) {
        roles.add(ColumnRole.RECOMPUTE);
      } else if (grouping.stream().anyMatch(g -> g.semanticEquals(inner))) {
        roles.add(ColumnRole.KEY);
      } else {
        roles.add(ColumnRole.RECOMPUTE);
      }
    }
    if (grouping.isEmpty()) {
      // One group, the whole input, kept with its counters even when they reach zero. Anything but
      // counters, MIN and MAX would be recomputed from every source row: that is a full refresh.
      for (int i = 0; i < outputs.size(); i++) {
        if (roles.get(i) == ColumnRole.RECOMPUTE) {
          return notIncremental(
              "an aggregate without GROUP BY recomputes " + org.apache.spark.sql.catalyst.util.package$.MODULE$.toPrettySQL(inners.get(i), false)
                  + " from every source row; without GROUP BY only COUNT, SUM, AVG, MIN, MAX and COUNT(DISTINCT) are maintained"
                  + " incrementally");
        }
      }
    }
    for (Expression group : grouping) {
      boolean selected = false;
      for (int i = 0; i < outputs.size(); i++) {
        selected |= roles.get(i) == ColumnRole.KEY && inners.get(i).semanticEquals(group);
      }
      if (!selected) {
        return notIncremental("grouping expression " + group.sql() + " is not a column of the view, so rows have no key");
      }
    }
    Optional<LogicalPlan> augmented = augment(parsed, roles, averages);
    Optional<List<DistinctColumn>> distinct = augmented.flatMap(a -> distinctColumns((Aggregate) a, roles, distinctTypes));
    if (augmented.isEmpty() || distinct.isEmpty()) {
      return notIncremental("the select list of the aggregate could not be matched to its parsed form");
    }
    return new DefinitionShape(
        Kind.AGGREGATE, "", roles, withoutDistinctCounts((Aggregate) augmented.get(), roles), null, distinct.get(), averages);
  }

  /**
   * The augmented aggregate with a placeholder 0 for each COUNT(DISTINCT): the column is the size
   * of its value map, computed alongside ({@link DistinctState}), and a DISTINCT aggregate would
   * make Spark expand every input row once per distinct argument.
   */
  private static LogicalPlan withoutDistinctCounts(Aggregate augmented, List<ColumnRole> roles) {
    List<NamedExpression> select = new ArrayList<>(Scala.list(augmented.aggregateExpressions()));
    for (int i = 0; i < roles.size(); i++) {
      if (roles.get(i) == ColumnRole.COUNT_DISTINCT) {
        select.set(i, alias(org.apache.spark.sql.catalyst.expressions.Literal$.MODULE$.apply(0L), "__floe_distinct_" + i));
      }
    }
    return augmented.copy(augmented.groupingExpressions(), Scala.seq(select), augmented.child(), augmented.hint());
  }

  /**
   * For every COUNT(DISTINCT x) column, the parsed aggregate's groups refined by x: grouped by the
   * selected grouping columns and x, over the rows where x is not NULL (COUNT(DISTINCT) skips
   * them). Grouping by the selected key expressions rather than the GROUP BY clause keeps ordinals,
   * aliases and GROUP BY ALL meaning what they did: every grouping expression is selected.
   */
  private static Optional<List<DistinctColumn>> distinctColumns(
      Aggregate augmented, List<ColumnRole> roles, Map<Integer, DataType> types) {
    List<NamedExpression> select = Scala.list(augmented.aggregateExpressions());
    List<NamedExpression> keys = new ArrayList<>();
    List<Expression> grouping = new ArrayList<>();
    for (int i = 0; i < roles.size(); i++) {
      if (roles.get(i) == ColumnRole.KEY) {
        keys.add(select.get(i));
        grouping.add(unaliased(select.get(i)));
      }
    }
    List<DistinctColumn> columns = new ArrayList<>();
    for (Map.Entry<Integer, DataType> entry : types.entrySet()) {
      Expression call = unaliased(select.get(entry.getKey()));
      if (!(call instanceof UnresolvedFunction function)
          || !function.isDistinct()
          || !function.nameParts().last().toLowerCase(Locale.ROOT).equals("count")
          || function.arguments().size() != 1) {
        return Optional.empty();
      }
      Expression value = function.arguments().head();
      List<Expression> refined = new ArrayList<>(grouping);
      refined.add(value);
      List<NamedExpression> output = new ArrayList<>(keys);
      output.add(alias(value, DistinctState.VALUE));
      output.add(alias(count(List.of(org.apache.spark.sql.catalyst.expressions.Literal$.MODULE$.apply(1))), DistinctState.ROWS));
      LogicalPlan rows = new org.apache.spark.sql.catalyst.plans.logical.Filter(new IsNotNull(value), augmented.child());
      columns.add(
          new DistinctColumn(
              entry.getKey(), entry.getValue(), new Aggregate(Scala.seq(refined), Scala.seq(output), rows, Scala.none())));
    }
    return Optional.of(columns);
  }

  private static Expression unaliased(NamedExpression expression) {
    Expression plain = (Expression) (Object) expression;
    if (plain instanceof Alias) {
      return ((Alias) plain).child();
    }
    if (plain instanceof UnresolvedAlias) {
      return ((UnresolvedAlias) plain).child();
    }
    return plain;
  }

  /**
   * Appends the hidden columns to the parsed aggregate's select list, in the order of {@link
   * #hiddenFields()}: the row count, the non-null count of every SUM, then the non-null count and
   * running sum of every AVG ({@code sum(x)} of a DECIMAL x has AVG's sum type already, any other
   * x is summed as DOUBLE, as AVG sums it).
   */
  private static Optional<LogicalPlan> augment(LogicalPlan parsed, List<ColumnRole> roles, Map<Integer, Average> averages) {
    if (parsed instanceof org.apache.spark.sql.catalyst.plans.logical.Project) {
      // Without GROUP BY the parser leaves the aggregates in a projection; the analyzer makes it
      // the aggregate of one group.
      var project = (org.apache.spark.sql.catalyst.plans.logical.Project) parsed;
      parsed = new Aggregate(Scala.seq(), project.projectList(), project.child(), Scala.none());
    }
    if (!(parsed instanceof Aggregate)) {
      return Optional.empty();
    }
    Aggregate aggregate = (Aggregate) parsed;
    List<NamedExpression> select = new ArrayList<>(Scala.list(aggregate.aggregateExpressions()));
    if (select.size() != roles.size()) {
      return Optional.empty();
    }
    List<NamedExpression> augmented = new ArrayList<>(select);
    augmented.add(alias(count(List.of(org.apache.spark.sql.catalyst.expressions.Literal$.MODULE$.apply(1))), StorageLayout.COUNT));
    for (int i = 0; i < roles.size(); i++) {
      if (roles.get(i) != ColumnRole.SUM) {
        continue;
      }
      Optional<UnresolvedFunction> sum = parsedCall(select.get(i), Set.of("sum"));
      if (sum.isEmpty()) {
        return Optional.empty();
      }
      augmented.add(alias(count(Scala.list(sum.get().arguments())), StorageLayout.nonNullCount(i)));
    }
    for (int i = 0; i < roles.size(); i++) {
      if (roles.get(i) != ColumnRole.AVG) {
        continue;
      }
      Optional<UnresolvedFunction> average = parsedCall(select.get(i), Set.of("avg", "mean"));
      if (average.isEmpty() || average.get().arguments().size() != 1) {
        return Optional.empty();
      }
      Expression argument = average.get().arguments().head();
      DataType sumType = AverageState.sumType(averages.get(i));
      Expression summed =
          sumType instanceof org.apache.spark.sql.types.DecimalType
              ? argument
              : new org.apache.spark.sql.catalyst.expressions.Cast(argument, sumType, Scala.none());
      augmented.add(alias(count(List.of(argument)), StorageLayout.nonNullCount(i)));
      augmented.add(alias(function("sum", List.of(summed)), StorageLayout.runningSum(i)));
    }
    return Optional.of(aggregate.copy(aggregate.groupingExpressions(), Scala.seq(augmented), aggregate.child(), aggregate.hint()));
  }

  /** The parsed call of one of the functions {@code names} (lower case) that a select item is. */
  private static Optional<UnresolvedFunction> parsedCall(NamedExpression item, Set<String> names) {
    Expression expression = unaliased(item);
    return expression instanceof UnresolvedFunction function
            && !function.isDistinct()
            && function.filter().isEmpty()
            && names.contains(function.nameParts().last().toLowerCase(Locale.ROOT))
        ? Optional.of(function)
        : Optional.empty();
  }

  private static Expression count(List<Expression> arguments) {
    return function("count", arguments);
  }

  private static Expression function(String name, List<Expression> arguments) {
    return new UnresolvedFunction(
        Scala.seq(name), Scala.seq(arguments), false, Scala.none(), false, Scala.seq(), false);
  }

  private static NamedExpression alias(Expression child, String name) {
    return new Alias(
        child, name, NamedExpression.newExprId(), Scala.seq(), Scala.none(), Scala.seq());
  }

}
