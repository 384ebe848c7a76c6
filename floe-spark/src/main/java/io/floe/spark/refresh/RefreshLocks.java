package io.floe.spark.refresh;

import io.floe.FloeException;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One refresh of a view at a time in this process. The commit protocol already keeps refreshes of
 * one view in different processes exact (the loser's commit fails and it retries from the winner's
 * state), but the loser has done its work for nothing, and a view's first refresh cannot be
 * validated that way at all. Within one process, as in a server where a scheduled refresh, a
 * request and a {@code CREATE} can meet, the second refresh waits for the first and then starts from
 * what it committed: usually nothing is left to do.
 */
final class RefreshLocks {
  private static final Logger LOG = LoggerFactory.getLogger(RefreshLocks.class);
  private static final ConcurrentMap<String, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

  private RefreshLocks() {}

  /** A held lock on refreshing {@code view} (its quoted name); release it by closing. */
  static Held hold(String view) {
    String key = view.toLowerCase(Locale.ROOT);
    ReentrantLock lock = LOCKS.computeIfAbsent(key, k -> new ReentrantLock());
    try {
      if (!lock.tryLock()) {
        LOG.info("Waiting for the refresh of {} that runs in this process", view);
        long started = System.nanoTime();
        lock.lockInterruptibly();
        LOG.info("The refresh of {} this one waited for ended after {} ms", view,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FloeException("Cannot refresh " + view + ": interrupted while waiting for its refresh in progress", e);
    }
    return new Held(lock);
  }

  /** A held lock; {@link #close} releases it. */
  static final class Held implements AutoCloseable {
    private final ReentrantLock lock;

    private Held(ReentrantLock lock) {
      this.lock = lock;
    }

    @Override
    public void close() {
      lock.unlock();
    }
  }
}
