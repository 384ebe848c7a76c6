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
  /** The running statements' job groups, each with the SQL session it runs in ("" for none). */
  private final java.util.Map<String, String> groups = new ConcurrentHashMap<>();
  private final Set<String> cancelledGroups = ConcurrentHashMap.newKeySet();
  private volatile boolean cancelled;

  RunningStatements(SparkContext context) {
    this.context = context;
  }

  /**
   * Runs {@code statement} of SQL session {@code session} ("" for none) on this thread, under a job
   * group of its own.
   *
   * @throws CancelledStatement when {@link #cancelSession} cancelled it
   */
  <T> T run(String session, Supplier<T> statement) {
    String group = "floe-sql-" + UUID.randomUUID();
    groups.put(group, session);
    // Job groups are properties of the running thread, inherited by the threads it starts.
    context.setJobGroup(group, "SQL statement over HTTP", true);
    try {
      return statement.get();
    } catch (RuntimeException e) {
      if (cancelledGroups.contains(group)) {
        throw new CancelledStatement(e);
      }
      throw e;
    } finally {
      context.clearJobGroup();
      groups.remove(group);
      cancelledGroups.remove(group);
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
    groups.keySet().forEach(context::cancelJobGroup);
  }

  /** Cancels the statement SQL session {@code session} is running, if any; returns how many were. */
  int cancelSession(String session) {
    int count = 0;
    for (java.util.Map.Entry<String, String> running : groups.entrySet()) {
      if (!session.isEmpty() && running.getValue().equals(session)) {
        cancelledGroups.add(running.getKey());
        context.cancelJobGroup(running.getKey());
        count++;
      }
    }
    return count;
  }

  /** A statement its client cancelled. */
  static final class CancelledStatement extends RuntimeException {
    CancelledStatement(Throwable cause) {
      super("Statement cancelled", cause);
    }
  }

  int count() {
    return groups.size();
  }
}
