package io.floe.spark.ivm;

import io.floe.spark.Plans;
import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedHint;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.NaturalJoin;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.UsingJoin;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import scala.runtime.AbstractPartialFunction;

/**
 * The delta rule of an outer join (LEFT, RIGHT or FULL), for the definitions the join key does not key
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
 *
 * <p>A FULL JOIN keeps unmatched rows on both sides, so a read on either side is on a side that
 * may not match, and the same two terms hold with the other side restricted: pairs and unmatched
 * rows of that side change only for its rows in {@code L'}; a changed row of {@code R} stands
 * unmatched in {@code L ⟗ R} exactly when it matches nothing in {@code L'}, since any row of
 * {@code L} it matches is in {@code L'}; and the unchanged rows of {@code R} that match nothing in
 * {@code L'} stand alike in both terms. So each term reads of {@code R} only its rows matching
 * {@code L'} and its changed rows matching nothing there (the rows inserted, in the term of the new
 * snapshot, and those deleted, in the old's).
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
      if (!joinsOnEquality(join)) {
        return Optional.of(join.joinType().sql() + " JOIN without an equality between its two sides (an equi-join key) that"
            + " every match satisfies (one under OR does not) is not maintained incrementally");
      }
      for (LogicalPlan side : mayNotMatch(join)) {
        if (!outerJoins(side).isEmpty()) {
          return Optional.of("an outer join on the side of another outer join that may not match (" + join.joinType().sql()
              + " JOIN (... OUTER JOIN ...)) is not maintained incrementally yet");
        }
      }
    }
    return DefinitionShape.linearProblem(plan, true, references);
  }

  /**
   * Whether an analyzed definition that {@link KeyedShape} could not key may still follow this
   * rule: an outer join under the definition or under its GROUP BY without HAVING, with no window,
   * aggregate below the joins, semi join or subquery that would need keys. {@link #problem} then
   * says whether it does.
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
          // An aggregate below the joins is recomputed by key, or not at all.
          keyedOnly[0] |= (n instanceof Aggregate && n != node)
              || n instanceof org.apache.spark.sql.catalyst.plans.logical.Window
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
   *
   * <p>Under a FULL JOIN the read's own side is restricted too, to its rows matching a row of the
   * other side's restricted rows, and its changed rows matching none (which stand unmatched): the
   * relation named {@code changeMarker} stands for those changed rows, for the caller to replace by
   * the rows inserted in the term of the new snapshot and by those deleted in the term of the old.
   * Its other rows stand alike, unmatched or matched outside the restriction, in both terms.
   *
   * <p>{@code keptCondition}, given the semi join of the kept side with the changed rows, may give
   * a condition on the kept side that the semi join implies (its key among the changed rows'
   * keys), which filters the kept side's read so that its scan skips the files holding none.
   */
  static Optional<Restricted> restricted(
      LogicalPlan marked,
      String marker,
      String changeMarker,
      Function<LogicalPlan, LogicalPlan> changedRows,
      boolean broadcast,
      Function<LogicalPlan, List<String>> columnNames,
      Function<Join, Optional<Expression>> keptCondition) {
    List<Join> found = joinsNotMatching(marked, marker);
    if (found.isEmpty()) {
      return Optional.empty();
    }
    if (found.size() > 1) {
      throw new IllegalStateException("a read on the side that may not match of " + found.size() + " outer joins");
    }
    Join join = found.get(0);
    // The changed read's side; the other is the one restricted (for a FULL JOIN, either may be).
    boolean changedOnRight = !holdsMarker(join.left(), marker);
    LogicalPlan nullSide = changedOnRight ? join.right() : join.left();
    LogicalPlan changedSide = replaceMarker(nullSide, marker, changedRows);
    if (broadcast) {
      // A few changed rows against the whole kept side: probe it without a shuffle.
      changedSide = new UnresolvedHint("BROADCAST", Scala.seq(List.of()), changedSide);
    }
    LogicalPlan kept = changedOnRight ? join.left() : join.right();
    JoinType semi = semi(join.joinType(), kept, changedSide, columnNames);
    Join matching = new Join(kept, changedSide, semi, join.condition(), join.hint());
    Optional<Expression> narrowing = keptCondition.apply(matching);
    if (narrowing.isPresent()) {
      // Implied by the semi join, so it changes which rows are read, not the result.
      matching = new Join(
          new org.apache.spark.sql.catalyst.plans.logical.Filter(narrowing.get(), kept), changedSide, semi, join.condition(),
          join.hint());
    }
    LogicalPlan side = nullSide;
    if (outerType(join.joinType()) instanceof FullOuter$) {
      LogicalPlan changedOnly =
          replaceMarker(nullSide, marker, alias -> alias.withNewChildren(Scala.seq(List.of(Plans.relation(List.of(changeMarker))))));
      side = new Union(
          Scala.seq(List.of(
              new Join(nullSide, matching, semi, join.condition(), join.hint()),
              new Join(changedOnly, matching, anti(semi), join.condition(), join.hint()))),
          false, false);
    }
    Join rewritten =
        changedOnRight
            ? new Join(matching, side, join.joinType(), join.condition(), join.hint())
            : new Join(side, matching, join.joinType(), join.condition(), join.hint());
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
   * An equality the semi join of {@link #restricted} matches on: a column of the kept side, as
   * parsed (to filter the parsed kept side by), and the expression of the changed rows it equals,
   * as analyzed (to compute over the analyzed changed rows).
   */
  record KeyPair(Expression kept, Expression changed) {}

  /**
   * The equalities of {@code matching}, a semi join as {@link #restricted} builds it, between a
   * plain column of the kept side and an expression of the changed rows, read from {@code
   * analyzed}, that join analyzed. Empty when the analyzed condition does not line up with the
   * parsed one.
   */
  static List<KeyPair> keyPairs(Join matching, Join analyzed) {
    List<KeyPair> pairs = new ArrayList<>();
    if (analyzed.condition().isEmpty()) {
      return pairs;
    }
    List<Expression> resolved = conjuncts(analyzed.condition().get());
    // The parsed equalities, null where a conjunct is none.
    List<EqualTo> parsed = new ArrayList<>();
    if (matching.joinType() instanceof UsingJoin using) {
      // Spark matches USING columns by equalities in the order of the columns, the name on each side.
      for (String name : Scala.list(using.usingColumns())) {
        UnresolvedAttribute column = new UnresolvedAttribute(Scala.seq(List.of(name)));
        parsed.add(new EqualTo(column, column));
      }
    } else if (matching.condition().isDefined()) {
      for (Expression conjunct : conjuncts(matching.condition().get())) {
        parsed.add(conjunct instanceof EqualTo equality ? equality : null);
      }
    }
    if (parsed.size() != resolved.size()) {
      return pairs;
    }
    for (int i = 0; i < resolved.size(); i++) {
      if (!(resolved.get(i) instanceof EqualTo equality) || parsed.get(i) == null) {
        continue;
      }
      for (boolean keptLeft : new boolean[] {true, false}) {
        Expression keptSide = keptLeft ? equality.left() : equality.right();
        Expression changedSide = keptLeft ? equality.right() : equality.left();
        Expression parsedKept = keptLeft ? parsed.get(i).left() : parsed.get(i).right();
        if (keptSide instanceof org.apache.spark.sql.catalyst.expressions.Attribute column
            && analyzed.left().outputSet().contains(column)
            && parsedKept instanceof UnresolvedAttribute
            && !changedSide.references().isEmpty()
            && changedSide.references().subsetOf(analyzed.right().outputSet())) {
          pairs.add(new KeyPair(parsedKept, changedSide));
          break;
        }
      }
    }
    return pairs;
  }

  /**
   * Whether the read named {@code marker} in {@code marked} is on a side of an outer join that may
   * not match: its term then reads the join's other side, restricted by a semi join.
   */
  static boolean onSideThatMayNotMatch(LogicalPlan marked, String marker) {
    return !joinsNotMatching(marked, marker).isEmpty();
  }

  private static List<Join> joinsNotMatching(LogicalPlan marked, String marker) {
    List<Join> found = new ArrayList<>();
    marked.foreach(
        node -> {
          if (node instanceof Join join
              && KeyedShape.isOuter(outerType(join.joinType()))
              && mayNotMatch(join).stream().anyMatch(side -> holdsMarker(side, marker))) {
            found.add(join);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    return found;
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

  /**
   * The sides of an outer join whose columns are NULL where nothing matches: a LEFT JOIN's right
   * side, a RIGHT JOIN's left side, both sides of a FULL JOIN.
   */
  private static List<LogicalPlan> mayNotMatch(Join join) {
    JoinType type = outerType(join.joinType());
    if (type instanceof FullOuter$) {
      return List.of(join.left(), join.right());
    }
    return List.of(type instanceof RightOuter$ ? join.left() : join.right());
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

  /** The anti join matching on what the semi join {@code semi} matches on. */
  private static JoinType anti(JoinType semi) {
    return semi instanceof UsingJoin using ? new UsingJoin(LeftAnti$.MODULE$, using.usingColumns()) : LeftAnti$.MODULE$;
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
