package io.floe.spark.command;

import io.floe.FloeException;
import io.floe.mv.MaterializedViewProperties;
import io.floe.spark.refresh.ExpectationCheck;
import io.floe.spark.refresh.StorageCompaction;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * An MV's {@code TBLPROPERTIES}: properties of its storage table, set at {@code CREATE} and changed
 * by {@code ALTER MATERIALIZED VIEW ... SET | UNSET TBLPROPERTIES}. Floe keeps a few of them itself,
 * and reads some (compaction, quarantine) whose values it checks before they are set.
 */
final class StorageProperties {
  /** The PARTITIONED BY items as written, so a replacement can compare them. */
  static final String PARTITIONED_BY = MaterializedViewProperties.PARTITIONED_BY;

  /** Storage properties Floe keeps: the MV that owns the table, whether it is managed, its partitioning. */
  private static final Set<String> KEPT = MaterializedViewProperties.STORAGE_KEPT;

  /** Properties Floe reads that take true or false. */
  private static final Set<String> BOOLEANS = Set.of(ExpectationCheck.QUARANTINE_PROPERTY, StorageCompaction.ENABLED);

  /**
   * Properties Floe reads that take a positive whole number: its compaction's, and the snapshot
   * expiry's it runs after each refresh (a bad value would fail every expiry, with a warning only).
   */
  private static final List<String> COUNTS =
      List.of(StorageCompaction.DELETE_FILES, StorageCompaction.SMALL_FILES, StorageCompaction.SMALL_FILE_BYTES,
          org.apache.iceberg.TableProperties.MAX_SNAPSHOT_AGE_MS, org.apache.iceberg.TableProperties.MIN_SNAPSHOTS_TO_KEEP,
          org.apache.iceberg.TableProperties.MAX_REF_AGE_MS);

  private StorageProperties() {}

  static boolean kept(String key) {
    return KEPT.contains(key);
  }

  /**
   * Refuses values Floe could not use, in an error that starts {@code "Cannot <action>: "}: a format
   * version before 2 (an incremental refresh writes row-level deletes, which version 1 lacks), a
   * boolean other than true or false (a typo would silently mean false), a count that is not a
   * positive whole number.
   */
  static void check(String action, Map<String, String> properties) {
    properties.forEach((key, value) -> {
      String v = value.strip().toLowerCase(Locale.ROOT);
      if (key.equals("format-version")) {
        checkFormatVersion(action, value);
      }
      if (BOOLEANS.contains(key) && !v.equals("true") && !v.equals("false")) {
        throw refused(action, key, value, "must be true or false");
      }
      if (COUNTS.contains(key) && positive(v) <= 0) {
        throw refused(action, key, value, "must be a positive whole number");
      }
    });
  }

  private static void checkFormatVersion(String action, String version) {
    int number;
    try {
      number = Integer.parseInt(version.strip());
    } catch (NumberFormatException e) {
      throw refused(action, "format-version", version, "is not a number");
    }
    if (number < 2) {
      throw new FloeException(
          "Cannot " + action + ": TBLPROPERTIES 'format-version' = '" + version
              + "': its storage table needs Iceberg format version 2 or later, whose row-level deletes an incremental"
              + " refresh writes");
    }
  }

  private static long positive(String value) {
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static FloeException refused(String action, String key, String value, String problem) {
    return new FloeException("Cannot " + action + ": TBLPROPERTIES '" + key + "' = '" + value + "' " + problem);
  }
}
