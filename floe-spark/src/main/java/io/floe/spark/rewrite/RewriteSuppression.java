package io.floe.spark.rewrite;

import java.util.function.Supplier;

/**
 * Turns query rewrite off on the current thread while Floe computes a definition: a refresh must
 * read the sources themselves, and a definition must never be rewritten to read the MV it defines.
 * Spark analyzes a plan on the thread that submits it, so a thread-local flag covers every plan a
 * refresh or a CREATE analyzes.
 */
public final class RewriteSuppression {
  private static final ThreadLocal<Integer> DEPTH = ThreadLocal.withInitial(() -> 0);

  private RewriteSuppression() {}

  /** Runs {@code work} with rewrite off on this thread. */
  public static <T> T withoutRewrite(Supplier<T> work) {
    DEPTH.set(DEPTH.get() + 1);
    try {
      return work.get();
    } finally {
      DEPTH.set(DEPTH.get() - 1);
    }
  }

  /** True inside {@link #withoutRewrite} on this thread. */
  public static boolean suppressed() {
    return DEPTH.get() > 0;
  }
}
