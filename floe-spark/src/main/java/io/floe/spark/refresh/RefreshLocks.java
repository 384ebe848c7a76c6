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
  /** The locks of the views whose refresh runs or waits, each with how many refreshes use it. */
  private static final ConcurrentMap<String, Users> LOCKS = new ConcurrentHashMap<>();

  private RefreshLocks() {}

  /** A view's lock and the refreshes holding or waiting for it; changed only inside the map's compute. */
  private static final class Users {
    final ReentrantLock lock = new ReentrantLock();
    int count;
  }

  /** A held lock on refreshing {@code view} (its quoted name); release it by closing. */
  static Held hold(String view) {
    String key = view.toLowerCase(Locale.ROOT);
    Users users =
        LOCKS.compute(
            key,
            (k, existing) -> {
              Users u = existing == null ? new Users() : existing;
              u.count++;
              return u;
            });
    try {
      if (!users.lock.tryLock()) {
        LOG.info("Waiting for the refresh of {} that runs in this process", view);
        long started = System.nanoTime();
        users.lock.lockInterruptibly();
        LOG.info("The refresh of {} this one waited for ended after {} ms", view,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      }
    } catch (InterruptedException e) {
      leave(key);
      Thread.currentThread().interrupt();
      throw new FloeException("Cannot refresh " + view + ": interrupted while waiting for its refresh in progress", e);
    }
    return new Held(key, users.lock);
  }

  /** Whether a refresh of {@code view} holds or waits for its lock; otherwise the lock is gone. */
  static boolean inUse(String view) {
    return LOCKS.containsKey(view.toLowerCase(Locale.ROOT));
  }

  /** One refresh less uses {@code key}'s lock; the last one removes it, so the map stays small. */
  private static void leave(String key) {
    LOCKS.computeIfPresent(key, (k, users) -> --users.count == 0 ? null : users);
  }

  /** A held lock; {@link #close} releases it. */
  static final class Held implements AutoCloseable {
    private final String key;
    private final ReentrantLock lock;

    private Held(String key, ReentrantLock lock) {
      this.key = key;
      this.lock = lock;
    }

    @Override
    public void close() {
      try {
        lock.unlock();
      } finally {
        leave(key);
      }
    }
  }
}
