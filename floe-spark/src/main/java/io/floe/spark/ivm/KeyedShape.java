package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Exists;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InSubquery;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.OuterReference;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Except;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Intersect;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.catalyst.plans.logical.Window;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;

/**
 * The shape of a definition whose rows depend only on the source rows sharing a key with them:
 * a GROUP BY filtered by HAVING or over an outer or semi join (key: the grouping columns), window functions with PARTITION BY
 * (key: each window's partition columns), outer joins on an equi-join key (key: the join key),
 * INTERSECT and EXCEPT (key: the view columns every input reads unchanged from a source) and
 * filters by IN or EXISTS subqueries and their join forms, LEFT SEMI and LEFT ANTI JOIN (key: the
 * view columns the subqueries' or joined tables' rows are matched on).
 * A change touches the keys its rows carry, at the old snapshot and the new; the view rows of
 * those keys are replaced by the definition's rows for them at the new snapshot, and no other
 * view row can differ.
 *
 * <p>A key is read from a view row through its key columns, which must therefore be columns of
 * the view, and from a source's changed rows through the source column each key column is equal
 * to (following aliases and equi-join conditions). A source that does not carry the key is
 * allowed; a change to it refreshes in full, since it can touch any key.
 */
public final class KeyedShape {
  /** The operator that makes the definition keyed. */
  public enum Operator {
    HAVING("GROUP BY with HAVING", "group"),
    WINDOW("window functions with PARTITION BY", "partition"),
    OUTER_JOIN("outer join", "join key"),
    SET_OPERATION("INTERSECT or EXCEPT", "key"),
    SEMI_JOIN("IN, NOT IN or EXISTS subquery or semi join", "key"),
    GROUPED_SEMI_JOIN("GROUP BY over an IN, NOT IN or EXISTS subquery or semi join", "group"),
    GROUPED_OUTER_JOIN("GROUP BY over an outer join", "group"),
    GROUPED_AGGREGATE("GROUP BY over an aggregate", "group"),
    JOINED_AGGREGATES("join of aggregates", "join key");

    private final String description;
    private final String unit;

    Operator(String description, String unit) {
      this.description = description;
      this.unit = unit;
    }

    /** What the key of a view row is called for this operator: group, partition or join key. */
    public String unit() {
      return unit;
    }
  }

  /**
   * One column of a key.
   *
   * @param positions the view's output positions holding it; a view row's value is the first
   *     non-null one (a FULL JOIN's key is on the side that matched)
   * @param sourceColumns the column of each source table (by table UUID) equal to it
   */
  public record KeyColumn(List<Integer> positions, Map<String, String> sourceColumns, Map<String, Expression> sourceExpressions) {
    /** A key column some source columns are equal to. */
    public KeyColumn(List<Integer> positions, Map<String, String> sourceColumns) {
      this(positions, sourceColumns, Map.of());
    }

    /**
     * The key value of a changed row of the source table {@code uuid}, as an expression over its
     * columns by name: the column equal to it, or the deterministic expression it is computed by
     * ({@code upper(trim(id))}); empty when the source's rows do not tell it.
     */
    public Optional<Expression> valueIn(String uuid) {
      String column = sourceColumns.get(uuid);
      if (column != null) {
        return Optional.of(new org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute(Scala.seq(List.of(column))));
      }
      return Optional.ofNullable(sourceExpressions.get(uuid));
    }
  }

  /** A view row is recomputed when its values of these columns are those of a changed source row. */
  public record Key(List<KeyColumn> columns) {
    /** Whether a column of it is computed by an expression of source columns, not equal to one. */
    public boolean computed() {
      return columns.stream().anyMatch(column -> !column.sourceExpressions().isEmpty());
    }

    /** The key of one view column at each of {@code positions}, without source columns. */
    static Key ofPositions(List<Integer> positions) {
      List<KeyColumn> columns = new ArrayList<>();
      positions.forEach(p -> columns.add(new KeyColumn(List.of(p), Map.of())));
      return new Key(columns);
    }
  }

  /** Whether a definition is keyed, and if it is not, why. */
  public record Verdict(Optional<KeyedShape> shape, String reason) {}

  private final Operator operator;
  private final List<Key> keys;

  private KeyedShape(Operator operator, List<Key> keys) {
    this.operator = operator;
    this.keys = List.copyOf(keys);
  }

  public Operator operator() {
    return operator;
  }

  /** The keys; a view row is recomputed when any of them is touched (one per window, say). */
  public List<Key> keys() {
    return keys;
  }

  /** The definition and its keys, in terms of the view's columns. */
  public String describe(List<String> viewColumns) {
    List<String> parts = new ArrayList<>();
    for (Key key : keys) {
      List<String> columns = new ArrayList<>();
      for (KeyColumn column : key.columns()) {
        List<String> names = new ArrayList<>();
        column.positions().forEach(p -> names.add(viewColumns.get(p)));
        columns.add(names.size() == 1 ? names.get(0) : "coalesce(" + String.join(", ", names) + ")");
      }
      parts.add("(" + String.join(", ", columns) + ")");
    }
    return operator.description + ", recomputed by " + operator.unit + " " + String.join(" or ", parts);
  }

  /**
   * Classifies an analyzed definition: empty when it has none of the keyed operators (another
   * rule or none applies), otherwise the keyed shape or why it cannot be keyed.
   */
  static Optional<Verdict> classify(LogicalPlan analyzed) {
    LogicalPlan node = belowTopSelect(analyzed);
    boolean filtered = false;
    for (LogicalPlan above = analyzed; above != node; above = above.children().head()) {
      filtered |= above instanceof Filter;
    }
    if (node instanceof Window) {
      return Optional.of(window(analyzed));
    }
    if (node instanceof Aggregate
        && (filtered
            || holdsSemiJoin(((Aggregate) node).child())
            || OuterJoinDelta.holdsOuterJoin(((Aggregate) node).child())
            || holdsAggregate(((Aggregate) node).child()))) {
      return Optional.of(having(analyzed, (Aggregate) node, filtered));
    }
    if (node instanceof Intersect || node instanceof Except) {
      return Optional.of(setOperation(analyzed, node));
    }
    boolean[] outer = {false};
    boolean[] semi = {false};
    boolean[] join = {false};
    boolean[] window = {false};
    boolean[] aggregate = {false};
    analyzed.foreach(
        n -> {
          outer[0] |= n instanceof Join && isOuter(((Join) n).joinType());
          semi[0] |= n instanceof Join && isSemiOrAnti(((Join) n).joinType());
          join[0] |= n instanceof Join;
          window[0] |= n instanceof Window;
          // An aggregate below the top select: the top one is a GROUP BY's own rule.
          aggregate[0] |= n instanceof Aggregate && n != node;
          return scala.runtime.BoxedUnit.UNIT;
        });
    if (outer[0] && !window[0]) {
      return Optional.of(outerJoin(analyzed));
    }
    boolean nested = window[0] || aggregate[0];
    if (!nested && (semi[0] || analyzed.exists(n -> Scala.list(n.expressions()).stream().anyMatch(KeyedShape::hasSubquery)))) {
      return Optional.of(semiJoin(analyzed));
    }
    if (join[0] && aggregate[0] && !window[0] && !semi[0]) {
      return Optional.of(joinedAggregates(analyzed));
    }
    return Optional.empty();
  }

  /**
   * The node under the definition's top projections, filters and aliases: the aggregate a HAVING
   * filters, the window a filter on its values keeps rows by, or the join or table read itself.
   */
  static LogicalPlan belowTopSelect(LogicalPlan analyzed) {
    LogicalPlan node = analyzed;
    while (node instanceof Project || node instanceof Filter || node instanceof SubqueryAlias) {
      node = node.children().head();
    }
    return node;
  }

  /** Whether {@code e} is computed from more than the row it is in: an aggregate, a window, a subquery. */
  private static boolean notOfOneRow(Expression e) {
    return e instanceof org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression
        || e instanceof org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction
        || e instanceof org.apache.spark.sql.catalyst.expressions.WindowExpression
        || e instanceof SubqueryExpression
        || e instanceof org.apache.spark.sql.catalyst.expressions.Generator;
  }

  private static boolean hasSubquery(Expression expression) {
    return expression.exists(e -> e instanceof SubqueryExpression);
  }

  private static Verdict keyed(Operator operator, List<Key> keys) {
    return new Verdict(Optional.of(new KeyedShape(operator, keys)), "");
  }

  private static Verdict notKeyed(String reason) {
    return new Verdict(Optional.empty(), reason);
  }

  static boolean isOuter(JoinType type) {
    return type instanceof LeftOuter$ || type instanceof RightOuter$ || type instanceof FullOuter$;
  }

  /** A {@code LEFT SEMI JOIN} or {@code LEFT ANTI JOIN}: the join form of EXISTS and NOT EXISTS. */
  static boolean isSemiOrAnti(JoinType type) {
    return type instanceof LeftSemi$ || type instanceof LeftAnti$;
  }

  // GROUP BY ... HAVING

  /**
   * A GROUP BY filtered by HAVING, or over an outer join, a filter by IN or EXISTS or a semi or
   * anti join: either way a group's row depends on its source rows alone, not on a running total
   * of them, and is recomputed from them. Over an outer join the key is the join key among the
   * grouping columns, from each side that keeps unmatched rows; over a semi join it is the grouping
   * columns every table the definition reads carries (the column the semi join matches on). A
   * changed row of any table then tells which groups it touches.
   */
  private static Verdict having(LogicalPlan analyzed, Aggregate aggregate, boolean filtered) {
    LogicalPlan child = aggregate.child();
    boolean semi = holdsSemiJoin(child);
    boolean outer = OuterJoinDelta.holdsOuterJoin(child);
    boolean nested = holdsAggregate(child);
    Optional<String> problem = problemAbove(analyzed, aggregate).or(() -> recomputedInputProblem(child, "GROUP BY", nested));
    if (problem.isPresent()) {
      return notKeyed(problem.get());
    }
    Operator operator =
        filtered ? Operator.HAVING
            : outer ? Operator.GROUPED_OUTER_JOIN
            : semi ? Operator.GROUPED_SEMI_JOIN
            : Operator.GROUPED_AGGREGATE;
    List<Expression> grouping = Scala.list(aggregate.groupingExpressions());
    if (grouping.isEmpty()) {
      return notKeyed(filtered
          ? "an aggregate without GROUP BY always has one row, which HAVING filters; not maintained incrementally yet"
          : "an aggregate without GROUP BY over "
              + (outer ? "an outer join" : semi ? "an IN, NOT IN or EXISTS subquery or a semi join" : "another aggregate")
              + " is not maintained incrementally yet");
    }
    Lineage lineage = new Lineage(analyzed);
    List<KeyColumn> columns = new ArrayList<>();
    for (Expression group : grouping) {
      if (!(group instanceof Attribute)) {
        return notKeyed("grouping by the expression " + group.sql() + " with "
            + (filtered ? "HAVING" : outer ? "an outer join" : semi ? "a semi join" : "an aggregate below")
            + " is not maintained incrementally yet");
      }
      Optional<KeyColumn> column = lineage.keyColumn((Attribute) group);
      if (column.isEmpty()) {
        return notKeyed("grouping column " + group.sql() + " is not a column of the view, so its groups cannot be found");
      }
      columns.add(column.get());
    }
    if (outer) {
      // The join key's grouping columns, as view columns: a group's key is the first non-null one.
      Optional<Key> key = outerJoinKeyAmong(lineage, child, grouping);
      if (key.isEmpty()) {
        return notKeyed((filtered ? "an aggregate with HAVING" : "an aggregate")
            + " over an outer join is maintained incrementally only when it groups by the equi-join key"
            + " shared by every join, from each side that keeps unmatched rows (the left of a LEFT JOIN, both sides of a"
            + " FULL JOIN), so that a changed row of any table tells which group it touches"
            + (filtered ? "; without HAVING, a LEFT or RIGHT JOIN's own delta rule maintains it" : ""));
      }
      return keyed(operator, List.of(key.get()));
    }
    if (semi || nested) {
      // The grouping columns every read carries (over a rollup, through each inner GROUP BY as one
      // of its own grouping columns): a changed row of any table tells the groups it touches by them.
      columns.removeIf(column -> !coversEveryRead(lineage, analyzed, column));
      if (columns.isEmpty()) {
        return notKeyed(semi
            ? semiJoinKeyProblem("an aggregate", "groups by", "group")
            : "an aggregate over another aggregate is maintained incrementally only when it groups by a column"
                + " that every table it reads has and that each inner GROUP BY groups by too, so that a changed row"
                + " of any table tells which group it touches");
      }
    }
    return keyed(operator, List.of(new Key(columns)));
  }

  /**
   * Why {@code input}, under a GROUP BY or window ({@code above}) whose groups or partitions are
   * recomputed by key, cannot be: it must be filters, projections and inner joins with outer joins
   * or with IN, EXISTS and semi-join filters, not both.
   */
  private static Optional<String> recomputedInputProblem(LogicalPlan input, String above) {
    return recomputedInputProblem(input, above, false);
  }

  /**
   * {@link #recomputedInputProblem(LogicalPlan, String)}, where the input may hold aggregates when
   * {@code aggregates}: the caller keys the groups by columns that pass through them.
   */
  private static Optional<String> recomputedInputProblem(LogicalPlan input, String above, boolean aggregates) {
    boolean semi = holdsSemiJoin(input);
    boolean outer = OuterJoinDelta.holdsOuterJoin(input);
    if (semi && outer) {
      return Optional.of("an outer join with an IN, NOT IN or EXISTS subquery or a semi join under " + above
          + " is not maintained incrementally yet");
    }
    return semi
        ? semiJoinProblem(input)
        : outer ? outerJoinProblem(input, aggregates) : DefinitionShape.linearProblem(input, false, -1, false, aggregates);
  }

  /**
   * Why an aggregate or a window over a semi join is not keyed: over a semi join, its key is the
   * grouping or partition columns every read carries, so that the groups or partitions of a
   * touched value are recomputed together and a changed row of any table tells its value.
   */
  private static String semiJoinKeyProblem(String what, String keyedBy, String unit) {
    return what + " over an IN, NOT IN or EXISTS subquery or a semi or anti join is maintained incrementally only when it "
        + keyedBy + " a column the subquery's or the joined table's rows are matched on, so that a changed row of any"
        + " table it reads tells which " + unit + " it touches";
  }

  /** Whether every read of a source table has a column equal to the view's {@code column}. */
  private static boolean coversEveryRead(Lineage lineage, LogicalPlan analyzed, KeyColumn column) {
    ExprId root = lineage.root(Scala.list(analyzed.output()).get(column.positions().get(0)).exprId());
    return column.sourceColumns().size() == lineage.relationCount() && lineage.coversEveryRead(root);
  }

  // Window functions with PARTITION BY

  private static Verdict window(LogicalPlan analyzed) {
    LogicalPlan node = belowTopSelect(analyzed);
    // Windows computed together, with projections between them; a filter between two windows
    // would let one window's values decide the other's rows.
    List<Window> windows = new ArrayList<>();
    List<Project> between = new ArrayList<>();
    while (node instanceof Window || node instanceof Project || node instanceof SubqueryAlias) {
      if (node instanceof Window) {
        windows.add((Window) node);
      } else if (node instanceof Project) {
        between.add((Project) node);
      }
      node = node.children().head();
    }
    LogicalPlan base = node;
    boolean outer = OuterJoinDelta.holdsOuterJoin(base);
    boolean semi = holdsSemiJoin(base);
    Optional<String> problem = problemAbove(analyzed, base).or(() -> recomputedInputProblem(base, "a window"));
    if (problem.isPresent()) {
      return notKeyed(problem.get());
    }
    Set<ExprId> windowed = new HashSet<>();
    windows.forEach(w -> Scala.list(w.windowExpressions()).forEach(e -> windowed.add(e.exprId())));
    for (int i = between.size() - 1; i >= 0; i--) {
      for (NamedExpression named : Scala.list(between.get(i).projectList())) {
        if (named instanceof Alias && referencesAny(((Alias) named).child(), windowed)) {
          windowed.add(named.exprId());
        }
      }
    }
    Lineage lineage = new Lineage(analyzed);
    List<Key> keys = new ArrayList<>();
    for (Window window : windows) {
      for (Expression expression : Scala.list(window.expressions())) {
        if (referencesAny(expression, windowed)) {
          return notKeyed("a window function over another window function's result is not maintained incrementally yet");
        }
      }
      List<Expression> partitions = Scala.list(window.partitionSpec());
      if (partitions.isEmpty()) {
        return notKeyed("a window function without PARTITION BY spans every row; not maintained incrementally");
      }
      if (outer) {
        Optional<Key> key = outerJoinKeyAmong(lineage, base, partitions);
        if (key.isEmpty()) {
          return notKeyed("a window over an outer join is maintained incrementally only when it is partitioned by the"
              + " equi-join key shared by every join, from each side that keeps unmatched rows (the left of a LEFT JOIN,"
              + " both sides of a FULL JOIN), selected by the view");
        }
        if (!keys.contains(key.get())) {
          keys.add(key.get());
        }
        continue;
      }
      List<KeyColumn> columns = new ArrayList<>();
      for (Expression partition : partitions) {
        if (!(partition instanceof Attribute)) {
          return notKeyed("partitioning a window by the expression " + partition.sql() + " is not maintained incrementally yet");
        }
        Optional<Expression> computed = lineage.computed((Attribute) partition);
        Optional<KeyColumn> column = lineage.keyColumn((Attribute) partition);
        if (computed.isPresent() && (column.isEmpty() || column.get().sourceColumns().isEmpty())) {
          // Computed from one source's columns by a deterministic expression, as the view's column is.
          Optional<KeyColumn> byExpression = lineage.computedKeyColumn((Attribute) partition);
          if (byExpression.isPresent()) {
            columns.add(byExpression.get());
            continue;
          }
        }
        if (column.isEmpty() && computed.isPresent()) {
          // PARTITION BY upper(id): the analyzer computes the expression into a column of its own.
          return notKeyed("partitioning a window by the expression " + shown(computed.get()) + " is not maintained"
              + " incrementally yet: partition by a column the view reads unchanged from a source table");
        }
        if (column.isEmpty()) {
          return notKeyed("window partition column " + partition.sql() + " is not a column of the view, so its partitions cannot be found");
        }
        if (column.get().sourceColumns().isEmpty()) {
          return notKeyed("window partition column " + shown(partition)
              + computed.map(e -> " is computed (" + shown(e) + "),").orElse(" is")
              + " not read unchanged from a source table, so a changed source row cannot tell which partitions it"
              + " touches; partitioning by a computed column is not maintained incrementally yet");
        }
        columns.add(column.get());
      }
      if (semi) {
        columns.removeIf(column -> !coversEveryRead(lineage, analyzed, column));
        if (columns.isEmpty()) {
          return notKeyed(semiJoinKeyProblem("a window", "is partitioned by", "partition"));
        }
      }
      Key key = new Key(columns);
      if (!keys.contains(key)) {
        keys.add(key);
      }
    }
    return keyed(Operator.WINDOW, keys);
  }

  /**
   * The key of an aggregate or a window over the outer joins of {@code base}, grouped or
   * partitioned by {@code columns} (of {@code base}): the join key among them, as columns of the
   * view ({@code lineage}'s), when each of them it takes is one.
   */
  private static Optional<Key> outerJoinKeyAmong(Lineage lineage, LogicalPlan base, List<Expression> columns) {
    List<Attribute> attributes = new ArrayList<>();
    for (Expression column : columns) {
      if (!(column instanceof Attribute)) {
        return Optional.empty();
      }
      attributes.add((Attribute) column);
    }
    Optional<KeyColumn> key = outerJoinKey(base, attributes);
    if (key.isEmpty()) {
      return Optional.empty();
    }
    List<Integer> positions = new ArrayList<>();
    for (int p : key.get().positions()) {
      // The view column holding this very column: an outer join's condition puts both sides'
      // key columns in one class, but the null-supplying side's is NULL where the other is not.
      Optional<Integer> position = lineage.positionOf(attributes.get(p));
      if (position.isEmpty()) {
        return Optional.empty();
      }
      positions.add(position.get());
    }
    return Optional.of(new Key(List.of(new KeyColumn(positions, key.get().sourceColumns()))));
  }

  /** An expression as a user wrote it: its columns by name, without the tables they come from. */
  private static String shown(Expression expression) {
    return Scala.replaceAttributes(expression, attribute -> attribute.withQualifier(Scala.seq(List.<String>of()))).sql();
  }

  // INTERSECT and EXCEPT, ALL or not

  /**
   * A row of {@code A INTERSECT B} or {@code A EXCEPT B} (and their ALL forms, nested or not) is
   * there, and as often as it is, by the rows of the inputs equal to it alone. So any view column
   * that each input reads unchanged from a source column keys it: a change touches the rows whose
   * values in those columns a changed row carries. Columns an input computes (an expression, a
   * cast to the other input's type) carry no key and are left out of it.
   */
  private static Verdict setOperation(LogicalPlan analyzed, LogicalPlan top) {
    Optional<String> problem = problemAbove(analyzed, top);
    for (LogicalPlan input : setOperationInputs(top)) {
      problem = problem.or(() -> DefinitionShape.linearProblem(input, false));
    }
    if (problem.isPresent()) {
      return notKeyed(problem.get());
    }
    return keyedByCoveringColumns(
        analyzed,
        Operator.SET_OPERATION,
        "INTERSECT and EXCEPT are maintained incrementally only when the view selects a column that every input"
            + " reads unchanged from a source table");
  }

  /** The inputs of a tree of INTERSECT and EXCEPT operators: the plans under it that are neither. */
  private static List<LogicalPlan> setOperationInputs(LogicalPlan plan) {
    if (!(plan instanceof Intersect || plan instanceof Except)) {
      return List.of(plan);
    }
    List<LogicalPlan> inputs = new ArrayList<>();
    Scala.list(plan.children()).forEach(child -> inputs.addAll(setOperationInputs(child)));
    return inputs;
  }

  // Filters by IN and EXISTS subqueries (semi and anti joins)

  /**
   * A row that {@code WHERE k IN (SELECT x FROM s ...)} or {@code WHERE EXISTS (SELECT ... FROM s
   * WHERE s.x = k ...)} keeps or drops is decided by the rows of {@code s} whose {@code x} equals
   * its {@code k} alone, and so is one that {@code NOT EXISTS} keeps or drops: the view columns
   * equal to the matched columns in every source key it. So is one that {@code NOT IN} keeps or
   * drops, while the subquery stays as empty and as free of NULLs as it was ({@link
   * #guardedNotIn}). A scalar subquery is not keyed, nor an IN whose NULL (no match, a NULL among
   * the subquery's values) could be told from FALSE (under NOT, or in a projected value).
   */
  private static Verdict semiJoin(LogicalPlan analyzed) {
    Optional<String> problem = semiJoinProblem(analyzed);
    if (problem.isPresent()) {
      return notKeyed(problem.get());
    }
    return keyedByCoveringColumns(
        analyzed,
        Operator.SEMI_JOIN,
        "an IN, NOT IN or EXISTS subquery or a semi or anti join is maintained incrementally only when the view selects a column"
            + " its rows are matched on (IN's value, or one side of an equality between the subquery's or the joined table"
            + " and the outer one) and every other table the definition reads is joined on that column too, so that a"
            + " changed row of any of them tells which view rows it touches" + matchedThroughCast(analyzed));
  }

  /**
   * For a reason: the first match of a semi join or subquery that compares a column through a
   * CAST (Spark casts one side where the two columns' types differ), which no key can follow.
   */
  private static String matchedThroughCast(LogicalPlan analyzed) {
    List<String> found = new ArrayList<>();
    analyzed.foreach(
        node -> {
          for (Expression expression : Scala.list(node.expressions())) {
            expression.foreach(
                e -> {
                  List<Expression> compared = new ArrayList<>();
                  if (e instanceof EqualTo equality && (node instanceof Join || isCorrelated(equality))) {
                    compared.add(equality.left());
                    compared.add(equality.right());
                  } else if (e instanceof InSubquery in) {
                    compared.addAll(Scala.list(in.values()));
                  } else if (e instanceof SubqueryExpression subquery) {
                    String inner = matchedThroughCast(subquery.plan());
                    if (!inner.isEmpty()) {
                      found.add(inner.substring(2));
                    }
                  }
                  for (Expression side : compared) {
                    if (side instanceof org.apache.spark.sql.catalyst.expressions.Cast cast) {
                      Expression child = cast.child() instanceof OuterReference outer ? (Expression) outer.e() : cast.child();
                      if (child instanceof Attribute attribute) {
                        found.add(attribute.name() + " is matched through a CAST from " + attribute.dataType().sql()
                            + " to " + cast.dataType().sql());
                      }
                    }
                  }
                  return scala.runtime.BoxedUnit.UNIT;
                });
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    return found.isEmpty() ? "" : "; " + found.get(0) + " (the columns' types differ): give both columns one type";
  }

  private static boolean isCorrelated(EqualTo equality) {
    return equality.exists(e -> e instanceof OuterReference);
  }

  /**
   * Why {@code plan} is not filters, projections, inner, semi and anti joins and UNION ALL, with IN
   * and EXISTS subqueries only where {@link #keyedFilter} allows them, each over such a plan
   * without subqueries.
   */
  private static Optional<String> semiJoinProblem(LogicalPlan plan) {
    Optional<String> problem = DefinitionShape.linearProblem(plan, false, -1, true);
    List<LogicalPlan> subqueries = new ArrayList<>();
    plan.foreach(
        node -> {
          for (Expression expression : Scala.list(node.expressions())) {
            if (hasSubquery(expression) && !(node instanceof Filter && keyedFilter(expression))) {
              subqueries.add(null);
            }
            expression.foreach(
                e -> {
                  if (e instanceof SubqueryExpression) {
                    subqueries.add(((SubqueryExpression) e).plan());
                  }
                  return scala.runtime.BoxedUnit.UNIT;
                });
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    if (problem.isEmpty() && subqueries.contains(null)) {
      problem = Optional.of(
          "a subquery is maintained incrementally only as IN, EXISTS or NOT IN in WHERE, under AND, OR or (for EXISTS) NOT;"
              + " a NOT IN of several values or correlated with the outer query, and scalar subqueries, depend on every row"
              + " of the subquery");
    }
    for (LogicalPlan subquery : subqueries) {
      if (subquery != null) {
        problem = problem.or(() -> DefinitionShape.linearProblem(subquery, false));
      }
    }
    return problem;
  }

  /** Whether {@code plan} holds a semi or anti join, or a subquery expression. */
  private static boolean holdsSemiJoin(LogicalPlan plan) {
    return plan.exists(
        n -> (n instanceof Join && isSemiOrAnti(((Join) n).joinType()))
            || Scala.list(n.expressions()).stream().anyMatch(KeyedShape::hasSubquery));
  }

  /**
   * Whether a filter condition holding subqueries keeps a row exactly when the row has a match
   * (or, for NOT EXISTS, none): IN and EXISTS under AND and OR, EXISTS under NOT, where a NULL
   * result drops the row like FALSE does.
   */
  private static boolean keyedFilter(Expression condition) {
    if (condition instanceof And || condition instanceof Or) {
      return keyedFilter(condition.children().head()) && keyedFilter(condition.children().last());
    }
    if (condition instanceof Not && condition.children().head() instanceof Exists) {
      return true;
    }
    if (condition instanceof Not && condition.children().head() instanceof InSubquery in) {
      return guardedNotIn(in);
    }
    if (condition instanceof Exists || condition instanceof InSubquery) {
      return true;
    }
    return !hasSubquery(condition);
  }

  /**
   * Whether a {@code NOT IN} keeps a row by the subquery rows matched on its value, as long as the
   * subquery neither gains nor loses its NULLs nor empties or fills ({@link NotInGuard}, checked at
   * each refresh): one value, and a subquery that does not depend on the outer row.
   *
   * <p>{@code x NOT IN (subquery)} is FALSE when a subquery row equals x; otherwise it is NULL (the
   * row is dropped) when x is NULL and the subquery has a row, or when the subquery holds a NULL;
   * otherwise TRUE. Beyond the rows matching x, a row's fate depends only on whether the subquery
   * is empty and whether it holds a NULL, the same for every row. Of several values, a row with a
   * NULL in one depends on the subquery rows matching another, which no one key follows.
   */
  static boolean guardedNotIn(InSubquery in) {
    return in.values().size() == 1
        && in.query().outerAttrs().isEmpty()
        && !in.query().plan().exists(node -> Scala.list(node.expressions()).stream().anyMatch(e -> e.exists(x -> x instanceof OuterReference)));
  }

  /** The source reads inside a guarded {@code NOT IN}'s subquery ({@link #guardedNotIn}), by their attributes. */
  private static Set<ExprId> notInReads(LogicalPlan analyzed) {
    Set<ExprId> reads = new HashSet<>();
    for (LogicalPlan subquery : NotInGuard.subqueries(analyzed)) {
      subquery.foreachWithSubqueries(
          node -> {
            if (node instanceof DataSourceV2Relation) {
              Scala.list(node.output()).forEach(a -> reads.add(a.exprId()));
            }
            return scala.runtime.BoxedUnit.UNIT;
          });
    }
    return reads;
  }

  /**
   * Keyed by {@code operator} on the view columns equal, in every row, to a column of every read
   * of a source table (a table read twice, by each of its reads); not keyed, for {@code
   * withoutKey}, when there is none.
   */
  private static Verdict keyedByCoveringColumns(LogicalPlan analyzed, Operator operator, String withoutKey) {
    Lineage lineage = new Lineage(analyzed);
    List<Attribute> output = Scala.list(analyzed.output());
    List<KeyColumn> columns = new ArrayList<>();
    for (int i = 0; i < output.size(); i++) {
      ExprId root = lineage.root(output.get(i).exprId());
      Optional<Map<String, String>> sourceColumns = lineage.sourceColumns(root);
      if (sourceColumns.isPresent() && sourceColumns.get().size() == lineage.relationCount() && lineage.coversEveryRead(root)) {
        columns.add(new KeyColumn(List.of(i), sourceColumns.get()));
      }
    }
    return columns.isEmpty() ? notKeyed(withoutKey) : keyed(operator, List.of(new Key(columns)));
  }

  /**
   * The source columns of {@code analyzed} (a definition of this shape) equal, in every row they
   * give the view, to a column of {@code key}: by attribute of a source read, the index of that key
   * column. A view row of a keyed shape depends on the source rows of its key alone, so filtering
   * these reads to some key values leaves the view rows of those values as they are. A key column
   * spread over view columns of several classes has no such reads.
   *
   * <p>Nor are the reads inside a {@code NOT IN}'s subquery: a row whose value is NULL is dropped
   * because the subquery has rows, of any value, which a narrowed read could leave out.
   */
  static Map<ExprId, Integer> keyReads(LogicalPlan analyzed, Key key) {
    if (key.computed()) {
      // Reads are narrowed by the values of source columns equal to the key; a computed key has none.
      return Map.of();
    }
    Lineage lineage = new Lineage(analyzed);
    List<Attribute> output = Scala.list(analyzed.output());
    Set<ExprId> wholeReads = notInReads(analyzed);
    Map<ExprId, Integer> reads = new HashMap<>();
    for (int c = 0; c < key.columns().size(); c++) {
      Set<ExprId> roots = new HashSet<>();
      key.columns().get(c).positions().forEach(p -> roots.add(lineage.keyRoot(output.get(p).exprId())));
      if (roots.size() == 1) {
        for (ExprId read : lineage.readAttributes(roots.iterator().next())) {
          if (!wholeReads.contains(read)) {
            reads.put(read, c);
          }
        }
      }
    }
    return reads;
  }

  /**
   * The window partition columns of {@code analyzed} (a definition of this shape) computed by the
   * expression of a computed column of {@code key}: by attribute, as the window's input has it, the
   * index of that key column. A window partition holds the source rows of its key value alone, so
   * the window's input can be filtered to some values of these columns, and it then computes the
   * partitions of those values as it would over every row.
   */
  static Map<ExprId, Integer> computedPartitions(LogicalPlan analyzed, Key key) {
    if (!key.computed()) {
      return Map.of();
    }
    Lineage lineage = new Lineage(analyzed);
    Map<ExprId, Integer> partitions = new HashMap<>();
    analyzed.foreach(
        node -> {
          if (node instanceof Window window) {
            for (Expression partition : Scala.list(window.partitionSpec())) {
              Optional<Expression> expanded =
                  partition instanceof Attribute attribute ? lineage.inSourceColumns(attribute) : Optional.empty();
              if (expanded.isEmpty() || !lineage.ofKnownTables(expanded.get())) {
                continue;
              }
              Expression byName = lineage.byName(expanded.get());
              for (int c = 0; c < key.columns().size(); c++) {
                if (key.columns().get(c).sourceExpressions().containsValue(byName)) {
                  partitions.put(((Attribute) partition).exprId(), c);
                }
              }
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    return partitions;
  }

  /** Subqueries in the nodes from the top of {@code plan} down to {@code below}, excluded. */
  private static Optional<String> problemAbove(LogicalPlan plan, LogicalPlan below) {
    for (LogicalPlan node = plan; node != below; node = node.children().head()) {
      for (Expression expression : Scala.list(node.expressions())) {
        if (expression.exists(e -> e instanceof org.apache.spark.sql.catalyst.expressions.SubqueryExpression)) {
          return Optional.of("subqueries in expressions are not maintained incrementally yet");
        }
      }
    }
    return Optional.empty();
  }

  private static boolean referencesAny(Expression expression, Set<ExprId> ids) {
    for (Attribute attribute : Scala.list(expression.references().toSeq())) {
      if (ids.contains(attribute.exprId())) {
        return true;
      }
    }
    return false;
  }

  // Outer joins on an equi-join key

  /**
   * Outer joins on an equi-join key, of tables and of aggregates ({@code (SELECT day, COUNT(*) ...
   * GROUP BY day) t FULL JOIN (SELECT day, SUM(amount) ... GROUP BY day) p ON t.day = p.day}):
   * the key must pass through each aggregate as a grouping column, which it does when every read
   * has a column equal to it, so the rows of a key come from the source rows of that key alone.
   */
  private static Verdict outerJoin(LogicalPlan analyzed) {
    return joinedOnKey(
        analyzed,
        Operator.OUTER_JOIN,
        "an outer join is maintained incrementally only on an equi-join key shared by every join and selected"
            + " from each side that keeps unmatched rows (the left of a LEFT JOIN, both sides of a FULL JOIN)"
            + (holdsAggregate(analyzed) ? ", which every aggregate it joins groups by" : ""));
  }

  /**
   * Inner joins of aggregates on an equi-join key they all group by ({@code (SELECT day, COUNT(*)
   * ... GROUP BY day) t JOIN (SELECT day, SUM(amount) ... GROUP BY day) p ON t.day = p.day}), or of
   * an aggregate and tables: as for {@link #outerJoin}, the rows of a key come from the source rows
   * of that key alone, and are recomputed from them.
   */
  private static Verdict joinedAggregates(LogicalPlan analyzed) {
    return joinedOnKey(
        analyzed,
        Operator.JOINED_AGGREGATES,
        "a join of aggregates is maintained incrementally only on an equi-join key shared by every join, which every"
            + " aggregate groups by, and selected");
  }

  /**
   * {@code analyzed} keyed by the equi-join key its joins share, as {@code operator}; or, when it
   * has none, not keyed for the reason {@code notKeyed}.
   */
  private static Verdict joinedOnKey(LogicalPlan analyzed, Operator operator, String notKeyed) {
    Optional<String> problem = outerJoinProblem(analyzed, true);
    if (problem.isPresent()) {
      return notKeyed(problem.get());
    }
    Optional<KeyColumn> key = outerJoinKey(analyzed, Scala.list(analyzed.output()));
    if (key.isPresent()) {
      return keyed(operator, List.of(new Key(List.of(key.get()))));
    }
    return notKeyed(notKeyed);
  }

  private static boolean holdsAggregate(LogicalPlan plan) {
    return plan.exists(n -> n instanceof Aggregate);
  }

  /**
   * Why {@code plan} is not filters, projections, inner and outer joins over sources each read
   * once, and aggregates when {@code aggregates} (the caller checks that its key passes through them).
   */
  private static Optional<String> outerJoinProblem(LogicalPlan plan, boolean aggregates) {
    Optional<String> problem = DefinitionShape.linearProblem(plan, true, -1, false, aggregates);
    if (problem.isEmpty() && plan.exists(n -> n instanceof Union)) {
      return Optional.of("UNION ALL with an outer join is not maintained incrementally yet");
    }
    return problem;
  }

  /**
   * The equi-join key of {@code plan}'s outer joins as a key column over {@code columns} (the
   * plan's output, or the columns an aggregate over it groups by): the positions among them of the
   * key's columns, enough of them that every row has the key from a side that keeps unmatched rows.
   */
  private static Optional<KeyColumn> outerJoinKey(LogicalPlan plan, List<Attribute> columns) {
    List<Join> joins = new ArrayList<>();
    plan.foreach(
        n -> {
          if (n instanceof Join) {
            joins.add((Join) n);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    Lineage lineage = new Lineage(plan);
    LogicalPlan tree = plan;
    while (!(tree instanceof Join)) {
      tree = tree.children().head();
    }
    // Candidate keys: the classes of the first join's equality conditions.
    for (EqualTo equality : equalities(joins.get(0))) {
      ExprId candidate = lineage.root(((Attribute) equality.left()).exprId());
      boolean everyJoin = joins.stream().allMatch(j -> equalities(j).stream().anyMatch(e -> lineage.root(((Attribute) e.left()).exprId()).equals(candidate)));
      Optional<Map<String, String>> sourceColumns = lineage.sourceColumns(candidate);
      if (!everyJoin || sourceColumns.isEmpty() || sourceColumns.get().size() != lineage.relationCount()) {
        continue;
      }
      List<Integer> positions = new ArrayList<>();
      Set<String> covered = new HashSet<>();
      for (int i = 0; i < columns.size(); i++) {
        Optional<Set<String>> origins = lineage.keyOrigins(columns.get(i), candidate);
        if (origins.isPresent()) {
          positions.add(i);
          covered.addAll(origins.get());
        }
      }
      if (!positions.isEmpty() && covers(tree, covered)) {
        return Optional.of(new KeyColumn(positions, sourceColumns.get()));
      }
    }
    return Optional.empty();
  }

  /** The conjuncts of a join's condition equating a column of one side with one of the other. */
  private static List<EqualTo> equalities(Join join) {
    List<EqualTo> result = new ArrayList<>();
    if (join.condition().isEmpty()) {
      return result;
    }
    for (Expression conjunct : conjuncts(join.condition().get())) {
      if (conjunct instanceof EqualTo
          && ((EqualTo) conjunct).left() instanceof Attribute
          && ((EqualTo) conjunct).right() instanceof Attribute) {
        Attribute left = (Attribute) ((EqualTo) conjunct).left();
        Attribute right = (Attribute) ((EqualTo) conjunct).right();
        boolean across =
            (join.left().outputSet().contains(left) && join.right().outputSet().contains(right))
                || (join.left().outputSet().contains(right) && join.right().outputSet().contains(left));
        if (across) {
          result.add((EqualTo) conjunct);
        }
      }
    }
    return result;
  }

  private static List<Expression> conjuncts(Expression condition) {
    List<Expression> result = new ArrayList<>();
    if (condition instanceof And) {
      result.addAll(conjuncts(((And) condition).left()));
      result.addAll(conjuncts(((And) condition).right()));
    } else {
      result.add(condition);
    }
    return result;
  }

  /** True when every row of {@code plan} has values from at least one of the {@code sources}. */
  private static boolean covers(LogicalPlan plan, Set<String> sources) {
    if (plan instanceof Join) {
      Join join = (Join) plan;
      JoinType type = join.joinType();
      if (type instanceof LeftOuter$) {
        return covers(join.left(), sources);
      }
      if (type instanceof RightOuter$) {
        return covers(join.right(), sources);
      }
      if (type instanceof FullOuter$) {
        return covers(join.left(), sources) && covers(join.right(), sources);
      }
      return covers(join.left(), sources) || covers(join.right(), sources);
    }
    if (plan instanceof DataSourceV2Relation) {
      return Lineage.uuid((DataSourceV2Relation) plan).map(sources::contains).orElse(false);
    }
    return plan.children().size() == 1 && covers(plan.children().head(), sources);
  }

  /**
   * Which attributes of a plan are equal in every row: through aliases of a column, equality
   * conditions of joins and filters, grouping columns selected by an aggregate, and the columns
   * at one position of the inputs of UNION ALL, INTERSECT and EXCEPT (equal to the input row a row
   * comes from or stands for); and which source table column each attribute reads.
   */
  private static final class Lineage {
    private final Map<ExprId, ExprId> parent = new HashMap<>();
    private final Map<ExprId, String[]> relationColumns = new LinkedHashMap<>();
    private final Map<ExprId, Expression> aliases = new HashMap<>();
    private final Set<String> relations = new LinkedHashSet<>();
    /** The read of a source table (in plan order) each of its attributes comes from. */
    private final Map<ExprId, Integer> readOf = new HashMap<>();
    private int reads;
    private final List<Attribute> output;

    Lineage(LogicalPlan plan) {
      this.output = Scala.list(plan.output());
      plan.foreachWithSubqueries(
          node -> {
            if (node instanceof DataSourceV2Relation) {
              Optional<String> uuid = uuid((DataSourceV2Relation) node);
              relations.add(uuid.orElse("?" + relations.size()));
              int read = reads++;
              for (Attribute attribute : Scala.list(node.output())) {
                readOf.put(attribute.exprId(), read);
                uuid.ifPresent(u -> relationColumns.put(attribute.exprId(), new String[] {u, attribute.name()}));
              }
            }
            List<NamedExpression> named = new ArrayList<>();
            if (node instanceof Project) {
              named.addAll(Scala.list(((Project) node).projectList()));
            } else if (node instanceof Aggregate) {
              named.addAll(Scala.list(((Aggregate) node).aggregateExpressions()));
            }
            for (NamedExpression expression : named) {
              if (expression instanceof Alias) {
                Expression child = ((Alias) expression).child();
                aliases.put(expression.exprId(), child);
                if (child instanceof Attribute) {
                  union(expression.exprId(), ((Attribute) child).exprId());
                }
              }
            }
            if (node instanceof Intersect || node instanceof Except || node instanceof Union) {
              // A row of the result has the values of the input rows it comes from (UNION ALL) or
              // stands for (INTERSECT, EXCEPT), column by column.
              List<LogicalPlan> inputs = Scala.list(node.children());
              List<Attribute> first = Scala.list(inputs.get(0).output());
              for (LogicalPlan input : inputs.subList(1, inputs.size())) {
                List<Attribute> other = Scala.list(input.output());
                for (int i = 0; i < first.size(); i++) {
                  union(first.get(i).exprId(), other.get(i).exprId());
                }
              }
            }
            List<Expression> conditions = new ArrayList<>();
            // A filter over a window's result (WHERE rn = 1 AND k = code) keeps view rows whose
            // columns are equal, but a partition's other rows, which decide its window values, need
            // not be: such equalities say nothing of the source rows of a partition.
            if (node instanceof Filter && !node.exists(n -> n instanceof Window)) {
              conditions.addAll(conjuncts(((Filter) node).condition()));
            } else if (node instanceof Join && ((Join) node).condition().isDefined()) {
              conditions.addAll(conjuncts(((Join) node).condition().get()));
            }
            for (Expression condition : conditions) {
              if (condition instanceof EqualTo) {
                Optional<Attribute> left = attribute(((EqualTo) condition).left());
                Optional<Attribute> right = attribute(((EqualTo) condition).right());
                if (left.isPresent() && right.isPresent()) {
                  union(left.get().exprId(), right.get().exprId());
                }
              }
              // A row passes IN only with a subquery row whose values equal its own.
              condition.foreach(
                  e -> {
                    if (e instanceof InSubquery) {
                      List<Expression> values = Scala.list(((InSubquery) e).values());
                      List<Attribute> matched = Scala.list(((InSubquery) e).query().plan().output());
                      for (int i = 0; i < values.size() && i < matched.size(); i++) {
                        Optional<Attribute> value = attribute(values.get(i));
                        if (value.isPresent()) {
                          union(value.get().exprId(), matched.get(i).exprId());
                        }
                      }
                    }
                    return scala.runtime.BoxedUnit.UNIT;
                  });
            }
            return scala.runtime.BoxedUnit.UNIT;
          });
    }

    /** The attribute an expression is, seen from inside a subquery too (an outer reference). */
    private static Optional<Attribute> attribute(Expression expression) {
      if (expression instanceof OuterReference && ((OuterReference) expression).e() instanceof Attribute) {
        return Optional.of((Attribute) ((OuterReference) expression).e());
      }
      return expression instanceof Attribute ? Optional.of((Attribute) expression) : Optional.empty();
    }

    static Optional<String> uuid(DataSourceV2Relation relation) {
      if (relation.table() instanceof org.apache.iceberg.spark.source.SparkTable) {
        return Optional.of(((org.apache.iceberg.spark.source.SparkTable) relation.table()).table().uuid().toString());
      }
      return Optional.empty();
    }

    int relationCount() {
      return relations.size();
    }

    /** Whether class {@code root} has a column of every read of a source table. */
    boolean coversEveryRead(ExprId root) {
      Set<Integer> covered = new HashSet<>();
      readOf.forEach((id, read) -> {
        if (root(id).equals(root)) {
          covered.add(read);
        }
      });
      return covered.size() == reads;
    }

    /** The attributes of source reads in class {@code root}. */
    List<ExprId> readAttributes(ExprId root) {
      List<ExprId> attributes = new ArrayList<>();
      readOf.keySet().forEach(id -> {
        if (root(id).equals(root)) {
          attributes.add(id);
        }
      });
      return attributes;
    }

    /**
     * The class of {@code id}; for a column computed as the coalesce of columns of one class (a
     * FULL JOIN's key, {@code coalesce(t.day, p.day)} or {@code USING (day)}), that class: the
     * column is equal to them wherever one is not NULL, and NULL where all are.
     */
    ExprId keyRoot(ExprId id) {
      Expression computed = aliases.get(id);
      if (computed instanceof Coalesce) {
        Set<ExprId> roots = new HashSet<>();
        for (Expression child : Scala.list(computed.children())) {
          Optional<Attribute> column = attribute(child);
          if (column.isEmpty()) {
            return root(id);
          }
          roots.add(keyRoot(column.get().exprId()));
        }
        if (roots.size() == 1) {
          return roots.iterator().next();
        }
      }
      return root(id);
    }

    ExprId root(ExprId id) {
      ExprId current = id;
      while (parent.containsKey(current)) {
        current = parent.get(current);
      }
      return current;
    }

    private void union(ExprId a, ExprId b) {
      ExprId ra = root(a);
      ExprId rb = root(b);
      if (!ra.equals(rb)) {
        parent.put(ra, rb);
      }
    }

    /**
     * The source columns of a class, by table UUID, when no source has two different columns in
     * it (their values could differ on rows that matched nothing). A table read twice may have the
     * same column in it twice.
     */
    Optional<Map<String, String>> sourceColumns(ExprId root) {
      Map<String, String> columns = new LinkedHashMap<>();
      for (Map.Entry<ExprId, String[]> entry : relationColumns.entrySet()) {
        if (root(entry.getKey()).equals(root)) {
          String known = columns.get(entry.getValue()[0]);
          if (known != null && !known.equals(entry.getValue()[1])) {
            return Optional.empty();
          }
          columns.put(entry.getValue()[0], entry.getValue()[1]);
        }
      }
      return Optional.of(columns);
    }

    /**
     * The expression {@code attribute} is computed by, following aliases of aliases; empty for a
     * source column or one read from one.
     */
    Optional<Expression> computed(Attribute attribute) {
      Expression definition = aliases.get(attribute.exprId());
      if (definition == null) {
        return Optional.empty();
      }
      return definition instanceof Attribute ? computed((Attribute) definition) : Optional.of(definition);
    }

    /**
     * {@code expression} with every column replaced by its definition, down to the columns of
     * source reads; empty when a column is neither (an aggregate's or a window's result).
     */
    Optional<Expression> inSourceColumns(Expression expression) {
      if (expression instanceof Attribute attribute) {
        if (readOf.containsKey(attribute.exprId())) {
          return Optional.of(attribute);
        }
        Expression definition = aliases.get(attribute.exprId());
        return definition == null ? Optional.empty() : inSourceColumns(definition);
      }
      List<Expression> children = new ArrayList<>();
      for (Expression child : Scala.list(expression.children())) {
        Optional<Expression> expanded = inSourceColumns(child);
        if (expanded.isEmpty()) {
          return Optional.empty();
        }
        children.add(expanded.get());
      }
      return Optional.of(expression.withNewChildren(Scala.seq(children)));
    }

    /**
     * The key column of a window partition computed by a deterministic expression of the columns
     * of one read of one source table ({@code PARTITION BY upper(trim(id))}): a view column computed
     * by the same expression holds it, and a changed row of that table tells its value by the
     * expression over its columns. Empty otherwise.
     */
    Optional<KeyColumn> computedKeyColumn(Attribute partition) {
      Optional<Expression> expanded = inSourceColumns(partition);
      if (expanded.isEmpty() || !expanded.get().deterministic() || expanded.get() instanceof Attribute
          || expanded.get().exists(KeyedShape::notOfOneRow)) {
        return Optional.empty();
      }
      Set<Integer> readsUsed = new HashSet<>();
      Set<String> tables = new HashSet<>();
      expanded.get().foreach(
          e -> {
            if (e instanceof Attribute attribute) {
              readsUsed.add(readOf.get(attribute.exprId()));
              String[] column = relationColumns.get(attribute.exprId());
              tables.add(column == null ? null : column[0]);
            }
            return scala.runtime.BoxedUnit.UNIT;
          });
      // One read of one table in the whole definition: a UNION's column is its first input's
      // attribute, and a join's other side could hold the key's rows under other values.
      if (reads != 1 || readsUsed.size() != 1 || tables.size() != 1 || tables.contains(null)) {
        return Optional.empty();
      }
      Expression canonical = expanded.get().canonicalized();
      for (int i = 0; i < output.size(); i++) {
        Optional<Expression> viewColumn = inSourceColumns(output.get(i));
        if (viewColumn.isPresent() && viewColumn.get().canonicalized().equals(canonical)) {
          return Optional.of(new KeyColumn(List.of(i), Map.of(), Map.of(tables.iterator().next(), byName(expanded.get()))));
        }
      }
      return Optional.empty();
    }

    /**
     * An expression over source columns (as {@link #inSourceColumns} gives it) with each column
     * by its name in its table, as a changed row of that table is read.
     */
    Expression byName(Expression inSourceColumns) {
      return Scala.replaceAttributes(
          inSourceColumns,
          attribute ->
              new org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute(
                  Scala.seq(List.of(relationColumns.get(attribute.exprId())[1]))));
    }

    /** Whether every column of an expression over source columns comes from a known table. */
    boolean ofKnownTables(Expression inSourceColumns) {
      return Scala.list(inSourceColumns.references().toSeq()).stream().allMatch(a -> relationColumns.containsKey(a.exprId()));
    }

    /** The key column equal to {@code attribute}: the first view column in its class. */
    /** The position of the view column whose value is {@code attribute} itself, selected or renamed. */
    Optional<Integer> positionOf(Attribute attribute) {
      for (int i = 0; i < output.size(); i++) {
        ExprId id = output.get(i).exprId();
        while (!id.equals(attribute.exprId()) && aliases.get(id) instanceof Attribute renamed) {
          id = renamed.exprId();
        }
        if (id.equals(attribute.exprId())) {
          return Optional.of(i);
        }
      }
      return Optional.empty();
    }

    Optional<KeyColumn> keyColumn(Attribute attribute) {
      ExprId root = root(attribute.exprId());
      for (int i = 0; i < output.size(); i++) {
        if (root(output.get(i).exprId()).equals(root)) {
          return Optional.of(new KeyColumn(List.of(i), sourceColumns(root).orElse(Map.of())));
        }
      }
      return Optional.empty();
    }

    /**
     * The source tables whose key value a column carries when it is the key of class {@code
     * root} (a column of it, or a COALESCE of such columns), empty when it is not.
     */
    Optional<Set<String>> keyOrigins(Expression expression, ExprId root) {
      if (expression instanceof Attribute) {
        ExprId id = ((Attribute) expression).exprId();
        if (!root(id).equals(root)) {
          return aliases.containsKey(id) ? keyOrigins(aliases.get(id), root) : Optional.empty();
        }
        if (relationColumns.containsKey(id)) {
          return Optional.of(Set.of(relationColumns.get(id)[0]));
        }
        return aliases.containsKey(id) ? keyOrigins(aliases.get(id), root) : Optional.empty();
      }
      if (expression instanceof Alias) {
        return keyOrigins(((Alias) expression).child(), root);
      }
      if (expression instanceof Coalesce) {
        Set<String> origins = new HashSet<>();
        for (Expression child : Scala.list(expression.children())) {
          Optional<Set<String>> childOrigins = keyOrigins(child, root);
          if (childOrigins.isEmpty()) {
            return Optional.empty();
          }
          origins.addAll(childOrigins.get());
        }
        return Optional.of(origins);
      }
      return Optional.empty();
    }
  }
}
