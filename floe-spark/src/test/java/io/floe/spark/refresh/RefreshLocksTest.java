package io.floe.spark.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.FloeException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** One refresh of a view at a time in a process, and no lock kept for views nobody refreshes. */
class RefreshLocksTest {
  @Test
  void aSecondHolderWaitsForTheFirstAndTheLockGoesWithTheLastOne() throws Exception {
    String view = "`lake`.`locks`.`Waits`";
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      RefreshLocks.Held first = RefreshLocks.hold(view);
      AtomicBoolean secondHeld = new AtomicBoolean();
      CountDownLatch asked = new CountDownLatch(1);
      Future<?> second =
          pool.submit(
              () -> {
                asked.countDown();
                // Another spelling of the same name: locks are by name in any case.
                try (RefreshLocks.Held held = RefreshLocks.hold(view.toLowerCase(java.util.Locale.ROOT))) {
                  secondHeld.set(true);
                }
              });
      asked.await();
      Thread.sleep(200);
      assertThat(secondHeld).isFalse();
      first.close();
      second.get(30, TimeUnit.SECONDS);
      assertThat(secondHeld).isTrue();
      assertThat(RefreshLocks.inUse(view)).isFalse();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aHolderInterruptedWhileWaitingLeavesNoLockBehind() throws Exception {
    String view = "`lake`.`locks`.`interrupted`";
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (RefreshLocks.Held first = RefreshLocks.hold(view)) {
      CountDownLatch asked = new CountDownLatch(1);
      Future<?> waiting =
          pool.submit(
              () -> {
                asked.countDown();
                RefreshLocks.hold(view).close();
                return null;
              });
      asked.await();
      Thread.sleep(200);
      pool.shutdownNow();
      assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS))
          .hasCauseInstanceOf(FloeException.class)
          .hasMessageContaining("interrupted while waiting");
      assertThat(RefreshLocks.inUse(view)).isTrue();
    }
    assertThat(RefreshLocks.inUse(view)).isFalse();
  }
}
