package io.floe.server;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;

/**
 * The SQL statements that requests run on the server's Spark, each under its own Spark job group, so
 * that a stopping server can wait for them and, past its patience, cancel what is left. A cancelled
 * statement's request is then answered that the server stopped, instead of its connection being
 * cut.
 *
 * <p>Spark cancels a job group's running jobs only. A statement cancelled while Spark still analyzes
 * or plans it would start its jobs afterwards and run to the end, so the jobs a cancelled
 * statement starts later are cancelled as they start.
 */
final class RunningStatements {
  /** The local property in which Spark keeps a thread's job group. */
  private static final String JOB_GROUP_PROPERTY = "spark.jobGroup.id";

  private final SparkContext context;
  /** The running statements' job groups, each with the SQL session it runs in ("" for none). */
  private final java.util.Map<String, String> groups = new ConcurrentHashMap<>();
  private final Set<String> cancelledGroups = ConcurrentHashMap.newKeySet();
  /** The job groups of the statements cancelled for any reason, whose jobs are cancelled as they start. */
  private final Set<String> doomedGroups = ConcurrentHashMap.newKeySet();
  private volatile boolean cancelled;

  RunningStatements(SparkContext context) {
    this.context = context;
    context.addSparkListener(
        new SparkListener() {
          @Override
          public void onJobStart(SparkListenerJobStart start) {
            String group = start.properties() == null ? null : start.properties().getProperty(JOB_GROUP_PROPERTY);
            if (group != null && doomedGroups.contains(group)) {
              context.cancelJob(start.jobId(), "its SQL statement was cancelled");
            }
          }
        });
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
    } catch (Exception e) {
      // Spark's exceptions, a cancelled job's SparkException among them, are checked exceptions
      // it throws undeclared.
      if (cancelledGroups.contains(group)) {
        throw new CancelledStatement(e);
      }
      throw RunningStatements.<RuntimeException>rethrow(e);
    } finally {
      context.clearJobGroup();
      groups.remove(group);
      cancelledGroups.remove(group);
      doomedGroups.remove(group);
      synchronized (this) {
        notifyAll();
      }
    }
  }

  /** Throws {@code failure} as it is, checked or not, for the caller's handlers to see unchanged. */
  @SuppressWarnings("unchecked")
  private static <E extends Exception> RuntimeException rethrow(Exception failure) throws E {
    throw (E) failure;
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
    for (String group : groups.keySet()) {
      doomedGroups.add(group);
      context.cancelJobGroup(group);
    }
  }

  /** Cancels the statement SQL session {@code session} is running, if any; returns how many were. */
  int cancelSession(String session) {
    int count = 0;
    for (java.util.Map.Entry<String, String> running : groups.entrySet()) {
      if (!session.isEmpty() && running.getValue().equals(session)) {
        cancelledGroups.add(running.getKey());
        doomedGroups.add(running.getKey());
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
