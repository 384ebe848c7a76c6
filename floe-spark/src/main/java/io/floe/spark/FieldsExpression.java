package io.floe.spark;

import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;

/**
 * A Catalyst expression written in Java: Catalyst's trees are Scala case classes, whose fields
 * Catalyst reads as a {@code Product} to copy, compare and print them. A subclass lists its fields
 * once, and gets the {@code Product} methods and equality from them.
 */
public abstract class FieldsExpression extends Expression {
  /** The fields a Scala case class of this expression would have, children first. */
  protected abstract List<Object> fields();

  @Override
  public final int productArity() {
    return fields().size();
  }

  @Override
  public final Object productElement(int n) {
    List<Object> fields = fields();
    if (n < 0 || n >= fields.size()) {
      throw new IndexOutOfBoundsException(n);
    }
    return fields.get(n);
  }

  @Override
  public final boolean canEqual(Object other) {
    return other != null && other.getClass() == getClass();
  }

  @Override
  public final boolean equals(Object other) {
    return canEqual(other) && fields().equals(((FieldsExpression) other).fields());
  }

  @Override
  public final int hashCode() {
    return java.util.Objects.hash(getClass(), fields());
  }
}
