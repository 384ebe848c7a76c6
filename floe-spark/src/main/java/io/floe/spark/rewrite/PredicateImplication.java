package io.floe.spark.rewrite;

import io.floe.spark.Scala;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Literal$;

/**
 * Decides whether a query's filter conjuncts imply one conjunct of an MV's filter, so that every
 * row the query keeps is in the MV. Sound, not complete: a conjunct is implied when the query has
 * the same conjunct, or when both compare the same expression with a literal and the query's
 * range lies inside the MV's ({@code x > 10} implies {@code x > 5}; {@code x = 3} implies {@code
 * x IN (1, 3)}).
 */
final class PredicateImplication {
  private PredicateImplication() {}

  static boolean implied(Expression mvConjunct, List<Expression> queryConjuncts) {
    for (Expression q : queryConjuncts) {
      if (q.semanticEquals(mvConjunct) || rangeImplies(q, mvConjunct)) {
        return true;
      }
    }
    return false;
  }

  /** A comparison of an expression with a literal, the expression on the left. */
  private record Bound(Expression subject, String op, Literal value) {}

  private static boolean rangeImplies(Expression q, Expression m) {
    Optional<Bound> query = bound(q);
    if (query.isEmpty()) {
      return false;
    }
    Bound a = query.get();
    if (m instanceof In) {
      In in = (In) m;
      if (!a.op.equals("=") || !in.value().semanticEquals(a.subject)) {
        return false;
      }
      for (Expression option : Scala.list(in.list())) {
        Optional<Literal> constant = constant(option);
        if (constant.isPresent() && compare(a.value, "=", constant.get())) {
          return true;
        }
      }
      return false;
    }
    Optional<Bound> view = bound(m);
    if (view.isEmpty()) {
      return false;
    }
    Bound b = view.get();
    if (!a.subject.semanticEquals(b.subject) || !a.value.dataType().sameType(b.value.dataType())) {
      return false;
    }
    switch (b.op) {
      case ">":
        return a.op.equals(">") && compare(a.value, ">=", b.value)
            || (a.op.equals(">=") || a.op.equals("=")) && compare(a.value, ">", b.value);
      case ">=":
        return (a.op.equals(">") || a.op.equals(">=") || a.op.equals("=")) && compare(a.value, ">=", b.value);
      case "<":
        return a.op.equals("<") && compare(a.value, "<=", b.value)
            || (a.op.equals("<=") || a.op.equals("=")) && compare(a.value, "<", b.value);
      case "<=":
        return (a.op.equals("<") || a.op.equals("<=") || a.op.equals("=")) && compare(a.value, "<=", b.value);
      case "=":
        return a.op.equals("=") && compare(a.value, "=", b.value);
      default:
        return false;
    }
  }

  private static Optional<Bound> bound(Expression e) {
    if (!(e instanceof BinaryComparison)) {
      return Optional.empty();
    }
    BinaryComparison c = (BinaryComparison) e;
    String op = op(c);
    if (op == null) {
      return Optional.empty();
    }
    Optional<Literal> right = constant(c.right());
    Optional<Literal> left = constant(c.left());
    if (right.isPresent() && left.isEmpty()) {
      return Optional.of(new Bound(c.left(), op, right.get()));
    }
    if (left.isPresent() && right.isEmpty()) {
      return Optional.of(new Bound(c.right(), flip(op), left.get()));
    }
    return Optional.empty();
  }

  /** The non-null value of a constant expression ({@code CAST(0 AS BIGINT)} included). */
  private static Optional<Literal> constant(Expression e) {
    if (!e.foldable() || !e.deterministic()) {
      return Optional.empty();
    }
    try {
      Object value = e.eval(null);
      return value == null ? Optional.empty() : Optional.of(Literal$.MODULE$.create(value, e.dataType()));
    } catch (RuntimeException notConstant) {
      // A constant that fails to evaluate (an invalid cast under ANSI) implies nothing.
      return Optional.empty();
    }
  }

  private static String op(BinaryComparison c) {
    if (c instanceof GreaterThan) {
      return ">";
    }
    if (c instanceof GreaterThanOrEqual) {
      return ">=";
    }
    if (c instanceof LessThan) {
      return "<";
    }
    if (c instanceof LessThanOrEqual) {
      return "<=";
    }
    if (c instanceof EqualTo) {
      return "=";
    }
    return null;
  }

  private static String flip(String op) {
    switch (op) {
      case ">":
        return "<";
      case ">=":
        return "<=";
      case "<":
        return ">";
      case "<=":
        return ">=";
      default:
        return op;
    }
  }

  /** Evaluates {@code a op b} on two literals of one type. */
  private static boolean compare(Literal a, String op, Literal b) {
    if (!a.dataType().sameType(b.dataType())) {
      return false;
    }
    Expression comparison;
    switch (op) {
      case ">":
        comparison = new GreaterThan(a, b);
        break;
      case ">=":
        comparison = new GreaterThanOrEqual(a, b);
        break;
      case "<":
        comparison = new LessThan(a, b);
        break;
      case "<=":
        comparison = new LessThanOrEqual(a, b);
        break;
      default:
        comparison = new EqualTo(a, b);
    }
    return Boolean.TRUE.equals(comparison.eval(null));
  }
}
