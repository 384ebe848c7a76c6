package io.floe.spark.refresh;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Marks the storage tables the current thread may write because it is refreshing them. Spark
 * analyzes and checks a write on the thread that submits it, so a thread-local flag is enough to
 * tell Floe's own refresh commits from a user's writes to a managed storage table.
 */
public final class StorageWriteGuard {
  private static final ThreadLocal<Set<String>> ALLOWED = ThreadLocal.withInitial(HashSet::new);

  private StorageWriteGuard() {}

  /** Runs {@code write} with writes to {@code storageTable} allowed on this thread. */
  public static <T> T allowWritesTo(String storageTableUuid, Supplier<T> write) {
    boolean added = ALLOWED.get().add(storageTableUuid);
    try {
      return write.get();
    } finally {
      if (added) {
        ALLOWED.get().remove(storageTableUuid);
      }
    }
  }

  /** True inside {@link #allowWritesTo} for this table. */
  public static boolean writesAllowed(String storageTableUuid) {
    return ALLOWED.get().contains(storageTableUuid);
  }
}
