package io.floe.spark.rewrite;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import org.apache.spark.sql.SparkSession;

/**
 * What query rewrite decided for the last query a session analyzed: the MV that answered it, if
 * any, and one line per MV considered. Recorded when {@value RewriteSettings#REPORT} is on, or
 * always for the MV used.
 */
public final class RewriteReport {
  private static final Map<SparkSession, RewriteReport> LAST = Collections.synchronizedMap(new WeakHashMap<>());

  private final List<String> used = new ArrayList<>();
  private final List<String> lines = new ArrayList<>();

  /** Forgets the session's last report; call before running a statement. */
  public static void clear(SparkSession spark) {
    LAST.remove(spark);
  }

  /** The report of the last rewrite attempt in this session since {@link #clear}. */
  public static Optional<RewriteReport> last(SparkSession spark) {
    return Optional.ofNullable(LAST.get(spark));
  }

  static RewriteReport begin(SparkSession spark) {
    return LAST.computeIfAbsent(spark, s -> new RewriteReport());
  }

  synchronized void answeredBy(String mv, String how) {
    if (!used.contains(mv)) {
      used.add(mv);
    }
    lines.add("answered from " + mv + ": " + how);
  }

  synchronized void rejected(String mv, String why) {
    String line = "not answered from " + mv + ": " + why;
    if (!lines.contains(line)) {
      lines.add(line);
    }
  }

  /** The MVs that answered parts of the query, by name. */
  public synchronized List<String> used() {
    return List.copyOf(used);
  }

  /** One line per decision, the MVs used first. */
  public synchronized List<String> lines() {
    List<String> ordered = new ArrayList<>();
    lines.stream().filter(l -> l.startsWith("answered")).forEach(ordered::add);
    lines.stream().filter(l -> !l.startsWith("answered")).forEach(ordered::add);
    return ordered;
  }
}
