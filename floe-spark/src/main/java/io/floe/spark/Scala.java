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
}
