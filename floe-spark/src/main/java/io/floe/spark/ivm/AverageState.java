package io.floe.spark.ivm;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import scala.runtime.AbstractPartialFunction;

/**
 * The hidden state that keeps AVG(x) incremental: per group, the running sum of x in AVG's own sum
 * type ({@code DOUBLE}, or {@code DECIMAL(p + 10, s)} for a {@code DECIMAL(p, s)} x) and the count
 * of non-null x. A change adds its rows' sums and counts and subtracts those it deletes; the
 * column is then Spark's own AVG result expression evaluated over the two, so it divides and
 * rounds exactly as a full refresh's AVG does (and is NULL when no value is left).
 */
public final class AverageState {
  private AverageState() {}

  /** Whether AVG over values of this type is kept from a sum and a count: numeric types. */
  static boolean keeps(Average average) {
    return average.child().dataType() instanceof NumericType;
  }

  /** The type of the hidden running sum: AVG's own sum buffer type. */
  public static DataType sumType(Average average) {
    return average.sumDataType();
  }

  /**
   * {@code average}'s result evaluated over a running {@code sum} and non-null {@code count}, as
   * Spark's AVG evaluates its aggregation buffer.
   */
  public static Expression evaluate(Average average, Expression sum, Expression count) {
    Expression typedSum = sum.dataType().sameType(average.sumDataType()) ? sum : new Cast(sum, average.sumDataType(), io.floe.spark.Scala.none());
    Expression typedCount = count.dataType().sameType(DataTypes.LongType) ? count : new Cast(count, DataTypes.LongType, io.floe.spark.Scala.none());
    AttributeReference sumBuffer = average.sum();
    AttributeReference countBuffer = average.count();
    return average.evaluateExpression().transformUp(
        new AbstractPartialFunction<Expression, Expression>() {
          @Override
          public boolean isDefinedAt(Expression e) {
            return e instanceof AttributeReference a
                && (a.exprId().equals(sumBuffer.exprId()) || a.exprId().equals(countBuffer.exprId()));
          }

          @Override
          public Expression apply(Expression e) {
            return ((AttributeReference) e).exprId().equals(sumBuffer.exprId()) ? typedSum : typedCount;
          }
        });
  }

  /** {@link #evaluate} over columns: the view column of an AVG from its hidden sum and count. */
  static Column value(Average average, Column sum, Column count) {
    return ExpressionUtils.column(
        evaluate(average, ExpressionUtils.expression(sum.cast(average.sumDataType())), ExpressionUtils.expression(count.cast(DataTypes.LongType))));
  }
}
