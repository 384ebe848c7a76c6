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
 * any, and one line per MV considered since the session's report was last cleared (the newest
 * 200 lines). {@code floe sql} clears it before each statement and prints it when {@value
 * RewriteSettings#REPORT} is on.
 */
public final class RewriteReport {
  private static final Map<SparkSession, RewriteReport> LAST = Collections.synchronizedMap(new WeakHashMap<>());

  /** Keeps a session that never clears its report from growing without bound. */
  private static final int MAX_LINES = 200;

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
    add("answered from " + mv + ": " + how);
  }

  private void add(String line) {
    if (lines.size() >= MAX_LINES) {
      lines.remove(0);
    }
    lines.add(line);
  }

  synchronized void failed(String error) {
    add("rewrite failed, the query was computed from its tables: " + error);
  }

  synchronized void rejected(String mv, String why) {
    String line = "not answered from " + mv + ": " + why;
    if (!lines.contains(line)) {
      add(line);
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
