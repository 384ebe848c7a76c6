package io.floe.spark;

import java.util.List;
import java.util.Optional;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/** Conversions between Java and the Scala collections of Catalyst's API. */
public final class Scala {
  private Scala() {}

  public static <T> Seq<T> seq(List<T> list) {
    return CollectionConverters.asScala(list).toList();
  }

  @SafeVarargs
  public static <T> Seq<T> seq(T... items) {
    return seq(List.of(items));
  }

  /** An immutable Scala set, as Catalyst's {@code InSet} takes its values. */
  public static <T> scala.collection.immutable.Set<T> set(java.util.Set<T> set) {
    return CollectionConverters.asScala(set).toSet();
  }

  public static <T> List<T> list(scala.collection.Seq<T> seq) {
    return CollectionConverters.asJava(seq);
  }

  public static <T> Option<T> some(T value) {
    return Option.apply(value);
  }

  public static <T> Option<T> none() {
    return Option.empty();
  }

  public static <T> Optional<T> optional(Option<T> option) {
    return option.isDefined() ? Optional.of(option.get()) : Optional.empty();
  }

  /**
   * {@code expression} with every attribute in it replaced by {@code replacement}'s expression for
   * it, bottom up: an attribute of a replacement is not replaced again.
   */
  public static org.apache.spark.sql.catalyst.expressions.Expression replaceAttributes(
      org.apache.spark.sql.catalyst.expressions.Expression expression,
      java.util.function.Function<
              org.apache.spark.sql.catalyst.expressions.Attribute, org.apache.spark.sql.catalyst.expressions.Expression>
          replacement) {
    return expression.transformUp(
        new scala.runtime.AbstractPartialFunction<
            org.apache.spark.sql.catalyst.expressions.Expression, org.apache.spark.sql.catalyst.expressions.Expression>() {
          @Override
          public boolean isDefinedAt(org.apache.spark.sql.catalyst.expressions.Expression e) {
            return e instanceof org.apache.spark.sql.catalyst.expressions.Attribute;
          }

          @Override
          public org.apache.spark.sql.catalyst.expressions.Expression apply(
              org.apache.spark.sql.catalyst.expressions.Expression e) {
            return replacement.apply((org.apache.spark.sql.catalyst.expressions.Attribute) e);
          }
        });
  }
}
