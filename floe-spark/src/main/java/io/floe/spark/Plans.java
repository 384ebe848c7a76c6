package io.floe.spark;

import java.util.List;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** Small pieces of Catalyst plans that Floe builds in several places. */
public final class Plans {
  private Plans() {}

  /** An unresolved, batch read of the table or view named by {@code parts}, without options. */
  public static UnresolvedRelation relation(List<String> parts) {
    return relation(parts, CaseInsensitiveStringMap.empty());
  }

  /** An unresolved, batch read of the table or view named by {@code parts}, with read {@code options}. */
  public static UnresolvedRelation relation(List<String> parts, CaseInsensitiveStringMap options) {
    return new UnresolvedRelation(Scala.seq(parts), options, false);
  }
}
