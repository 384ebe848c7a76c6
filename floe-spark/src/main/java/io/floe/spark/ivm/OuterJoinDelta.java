package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedHint;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.NaturalJoin;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.UsingJoin;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import scala.runtime.AbstractPartialFunction;

/**
 * The delta rule of a LEFT or RIGHT outer join, for the definitions the join key does not key
 * ({@link KeyedShape}): a GROUP BY of the joined table's columns ({@code GROUP BY c.region} over
 * {@code orders o LEFT JOIN customers c}), a DISTINCT, a select list without the key.
 *
 * <p>{@code L ⟕ R} is linear in {@code L}, the side that keeps unmatched rows: each of its rows
 * gives its own rows whatever the others are, so a change of {@code L}'s side is a term like any
 * other. It is not linear in {@code R}: a row of {@code L} stands NULL-padded while nothing in
 * {@code R} matches it and leaves when something does. But a row of {@code L} gives the same rows
 * with {@code R} old and new unless a changed row of {@code R} matches it, on the join's own
 * condition. So with {@code L'} the rows of {@code L} matching some changed row of {@code R}'s side
 * (a semi join with the change),
 *
 * <pre>  L ⟕ R_new − L ⟕ R_old = L' ⟕ R_new − L' ⟕ R_old</pre>
 *
 * and the term of a change read on the side that may not match is the definition with that side
 * read new, minus the same read old, the other side restricted to {@code L'} in both. Everything
 * above the join is linear (projections, filters, inner joins, a GROUP BY's partial aggregates), so
 * the definition's change is those two terms' difference. The semi join needs an equality between
 * the two sides to be a hash join, and a read may sit on the side that may not match of one outer
 * join only: nested in two, its change would change which rows of the inner join's result match.
 * A FULL JOIN keeps unmatched rows on both sides and is left to {@link KeyedShape}.
 */
final class OuterJoinDelta {
  private OuterJoinDelta() {}

  /**
   * Why the analyzed {@code plan}, a definition or the input of its GROUP BY or DISTINCT, is not
   * linear once its LEFT and RIGHT outer joins follow this rule.
   *
   * @param references as for {@link DefinitionShape#linearProblem(LogicalPlan, boolean, int)}: -1
   *     when the definition has common table expressions; the rule needs them inlined ({@link
   *     CteInlining}), each read of their tables a reference of its own
   */
  static Optional<String> problem(LogicalPlan plan, int references) {
    List<Join> outer = outerJoins(plan);
    if (outer.isEmpty()) {
      return DefinitionShape.linearProblem(plan, false, references);
    }
    if (references < 0) {
      // Classified again with its common table expressions inlined (DefinitionShape).
      return Optional.of("an outer join in a recursive common table expression is not maintained incrementally");
    }
    for (Join join : outer) {
      if (join.joinType() instanceof FullOuter$) {
        return Optional.of("a FULL OUTER JOIN is maintained incrementally only when the view selects or groups by its"
            + " equi-join key from both sides, so that a changed row of either table tells which rows it touches");
      }
      if (!joinsOnEquality(join)) {
        return Optional.of(join.joinType().sql() + " JOIN without an equality between its two sides (an equi-join key) that"
            + " every match satisfies (one under OR does not) is not maintained incrementally");
      }
      if (!outerJoins(nullSupplying(join)).isEmpty()) {
        return Optional.of("an outer join on the side of another outer join that may not match (" + join.joinType().sql()
            + " JOIN (... OUTER JOIN ...)) is not maintained incrementally yet");
      }
    }
    return DefinitionShape.linearProblem(plan, true, references);
  }

  /**
   * Whether an analyzed definition that {@link KeyedShape} could not key may still follow this
   * rule: an outer join under the definition or under its GROUP BY without HAVING, with no window,
   * semi join or subquery that would need keys. {@link #problem} then says whether it does.
   */
  static boolean mayApply(LogicalPlan analyzed) {
    LogicalPlan node = KeyedShape.belowTopSelect(analyzed);
    if (node instanceof Aggregate) {
      for (LogicalPlan above = analyzed; above != node; above = above.children().head()) {
        if (above instanceof org.apache.spark.sql.catalyst.plans.logical.Filter) {
          return false;
        }
      }
    }
    boolean[] keyedOnly = {false};
    analyzed.foreach(
        n -> {
          keyedOnly[0] |= n instanceof org.apache.spark.sql.catalyst.plans.logical.Window
              || (n instanceof Join && KeyedShape.isSemiOrAnti(((Join) n).joinType()))
              || Scala.list(n.expressions()).stream()
                  .anyMatch(e -> e.exists(x -> x instanceof org.apache.spark.sql.catalyst.expressions.SubqueryExpression));
          return scala.runtime.BoxedUnit.UNIT;
        });
    return !keyedOnly[0] && !outerJoins(analyzed).isEmpty();
  }

  /**
   * The parsed definition {@code marked}, whose read that changed is the relation named {@code
   * marker}, with the outer join whose side that may not match holds that read restricted: the
   * other side keeps only its rows matching a row of {@code changedRows} (that side with the read
   * replaced by what {@code changedRows} gives for the marker). The marker stays in place for the
   * caller to replace by the read at the new and at the old snapshot. Empty when no outer join has
   * the read on its side that may not match: the term is linear. With {@code broadcast} (a small
   * change), the changed rows are broadcast to the semi join.
   */
  static Optional<Restricted> restricted(
      LogicalPlan marked,
      String marker,
      Function<LogicalPlan, LogicalPlan> changedRows,
      boolean broadcast,
      Function<LogicalPlan, List<String>> columnNames) {
    List<Join> found = new ArrayList<>();
    marked.foreach(
        node -> {
          if (node instanceof Join join && isLeftOrRight(join.joinType()) && holdsMarker(nullSupplying(join), marker)) {
            found.add(join);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    if (found.isEmpty()) {
      return Optional.empty();
    }
    if (found.size() > 1) {
      throw new IllegalStateException("a read on the side that may not match of " + found.size() + " outer joins");
    }
    Join join = found.get(0);
    boolean left = outerType(join.joinType()) instanceof LeftOuter$;
    LogicalPlan nullSide = nullSupplying(join);
    LogicalPlan changedSide = replaceMarker(nullSide, marker, changedRows);
    if (broadcast) {
      // A few changed rows against the whole kept side: probe it without a shuffle.
      changedSide = new UnresolvedHint("BROADCAST", Scala.seq(List.of()), changedSide);
    }
    LogicalPlan kept = left ? join.left() : join.right();
    Join matching =
        new Join(kept, changedSide, semi(join.joinType(), kept, changedSide, columnNames), join.condition(), join.hint());
    Join rewritten =
        left
            ? new Join(matching, nullSide, join.joinType(), join.condition(), join.hint())
            : new Join(nullSide, matching, join.joinType(), join.condition(), join.hint());
    return Optional.of(new Restricted(
        marked.transformUp(
            new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
              @Override
              public boolean isDefinedAt(LogicalPlan node) {
                return node == join;
              }

              @Override
              public LogicalPlan apply(LogicalPlan node) {
                return rewritten;
              }
            }),
        matching));
  }

  /**
   * A definition with an outer join restricted for the change of its side that may not match, and
   * the restricted kept side: its rows matching a changed row.
   */
  record Restricted(LogicalPlan plan, LogicalPlan matching) {}

  /**
   * {@code plan} with each marker relation, with the alias it was given ({@code SubqueryAlias}
   * over the relation), replaced by {@code replacement} of that alias node.
   */
  static LogicalPlan replaceMarker(LogicalPlan plan, String marker, Function<LogicalPlan, LogicalPlan> replacement) {
    return plan.transformUp(
        new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
          @Override
          public boolean isDefinedAt(LogicalPlan node) {
            return node instanceof SubqueryAlias alias && isMarker(alias.child(), marker);
          }

          @Override
          public LogicalPlan apply(LogicalPlan node) {
            return replacement.apply(node);
          }
        });
  }

  private static boolean holdsMarker(LogicalPlan plan, String marker) {
    return plan.exists(node -> isMarker(node, marker));
  }

  private static boolean isMarker(LogicalPlan node, String marker) {
    return node instanceof UnresolvedRelation relation
        && relation.multipartIdentifier().size() == 1
        && relation.multipartIdentifier().head().equals(marker);
  }

  /** Whether an analyzed or parsed plan holds an outer join. */
  static boolean holdsOuterJoin(LogicalPlan plan) {
    return !outerJoins(plan).isEmpty();
  }

  /** The outer joins of an analyzed or parsed plan ({@code USING} and {@code NATURAL} ones too). */
  private static List<Join> outerJoins(LogicalPlan plan) {
    List<Join> joins = new ArrayList<>();
    plan.foreach(
        node -> {
          if (node instanceof Join join && KeyedShape.isOuter(outerType(join.joinType()))) {
            joins.add(join);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    return joins;
  }

  /** The join type a {@code USING} or {@code NATURAL} join of a parsed plan stands for. */
  private static JoinType outerType(JoinType type) {
    if (type instanceof UsingJoin using) {
      return using.tpe();
    }
    if (type instanceof NaturalJoin natural) {
      return natural.tpe();
    }
    return type;
  }

  private static boolean isLeftOrRight(JoinType type) {
    JoinType outer = outerType(type);
    return outer instanceof LeftOuter$ || outer instanceof RightOuter$;
  }

  /**
   * The semi join matching on what {@code type} matches on: its condition, or its USING columns;
   * a NATURAL join's common column names (of {@code kept} and {@code other}, by {@code
   * columnNames}) as USING columns, Spark having no natural semi join.
   */
  private static JoinType semi(
      JoinType type, LogicalPlan kept, LogicalPlan other, Function<LogicalPlan, List<String>> columnNames) {
    if (type instanceof UsingJoin using) {
      return new UsingJoin(LeftSemi$.MODULE$, using.usingColumns());
    }
    if (type instanceof NaturalJoin) {
      List<String> names = columnNames.apply(other).stream().map(n -> n.toLowerCase(java.util.Locale.ROOT)).toList();
      List<String> common =
          columnNames.apply(kept).stream().filter(n -> names.contains(n.toLowerCase(java.util.Locale.ROOT))).toList();
      return new UsingJoin(LeftSemi$.MODULE$, Scala.seq(common));
    }
    return LeftSemi$.MODULE$;
  }

  /** The side of a LEFT or RIGHT outer join whose columns are NULL where nothing matches. */
  private static LogicalPlan nullSupplying(Join join) {
    return outerType(join.joinType()) instanceof RightOuter$ ? join.left() : join.right();
  }

  /** Whether an analyzed join's condition has an equality of an expression of each side. */
  private static boolean joinsOnEquality(Join join) {
    if (join.condition().isEmpty()) {
      return false;
    }
    for (Expression conjunct : conjuncts(join.condition().get())) {
      if (conjunct instanceof EqualTo || conjunct instanceof EqualNullSafe) {
        Expression a = ((BinaryComparison) conjunct).left();
        Expression b = ((BinaryComparison) conjunct).right();
        if (of(a, join.left()) && of(b, join.right()) || of(a, join.right()) && of(b, join.left())) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean of(Expression expression, LogicalPlan side) {
    return !expression.references().isEmpty() && expression.references().subsetOf(side.outputSet());
  }

  private static List<Expression> conjuncts(Expression condition) {
    List<Expression> result = new ArrayList<>();
    if (condition instanceof And and) {
      result.addAll(conjuncts(and.left()));
      result.addAll(conjuncts(and.right()));
    } else {
      result.add(condition);
    }
    return result;
  }
}
