package io.floe.server;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;

/**
 * The SQL statements that requests run on the server's Spark, each under its own Spark job group, so
 * that a stopping server can wait for them and, past its patience, cancel what is left. A cancelled
 * statement's request is then answered that the server stopped, instead of its connection being
 * cut.
 */
final class RunningStatements {
  private final SparkContext context;
  private final Set<String> groups = ConcurrentHashMap.newKeySet();
  private volatile boolean cancelled;

  RunningStatements(SparkContext context) {
    this.context = context;
  }

  /** Runs {@code statement} on this thread, under a job group of its own. */
  <T> T run(Supplier<T> statement) {
    String group = "floe-sql-" + UUID.randomUUID();
    groups.add(group);
    // Job groups are properties of the running thread, inherited by the threads it starts.
    context.setJobGroup(group, "SQL statement over HTTP", true);
    try {
      return statement.get();
    } finally {
      context.clearJobGroup();
      groups.remove(group);
      synchronized (this) {
        notifyAll();
      }
    }
  }

  /** Whether {@link #cancelAll} was called: a statement failing now failed because of it. */
  boolean cancelled() {
    return cancelled;
  }

  /** Waits until no statement runs, at most {@code millis}; true when none runs. */
  synchronized boolean awaitNone(long millis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    while (!groups.isEmpty()) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }

  /** Cancels the Spark jobs of every running statement; each then fails, and its request is answered. */
  void cancelAll() {
    cancelled = true;
    groups.forEach(context::cancelJobGroup);
  }

  int count() {
    return groups.size();
  }
}
