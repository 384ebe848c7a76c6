package io.floe.cli;

import io.floe.FloeException;
import io.floe.spark.EmbeddedLakehouse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * Starts Spark for a lakehouse. Kept apart from {@link LakehouseOptions} so that commands which
 * talk to a running server never load Spark's classes.
 */
final class LakehouseSession {
  private LakehouseSession() {}

  /** Starts (or joins) the SparkSession for this lakehouse. */
  static SparkSession start(LakehouseOptions lakehouse, Path warehouseDir) {
    Map<String, String> settings = lakehouse.sparkConf(warehouseDir);
    try {
      Files.createDirectories(warehouseDir);
    } catch (java.nio.file.FileAlreadyExistsException e) {
      throw new FloeException("Cannot use warehouse folder " + warehouseDir + ": " + e.getFile() + " is a file", e);
    } catch (java.nio.file.AccessDeniedException e) {
      throw new FloeException("Cannot create warehouse folder " + warehouseDir + ": permission denied on " + e.getFile(), e);
    } catch (IOException e) {
      throw new FloeException("Cannot create warehouse folder " + warehouseDir + ": " + e, e);
    }
    if (!Files.isWritable(warehouseDir)) {
      // The catalog and the tables are written inside it; SQLite's own error would name neither.
      throw new FloeException("Cannot use warehouse folder " + warehouseDir + ": it is not writable");
    }
    if (lakehouse.usesEmbeddedCatalog()) {
      EmbeddedLakehouse.planScansInCallingThread();
    }
    SparkSession.Builder builder = SparkSession.builder().appName("floe");
    if (!settings.containsKey("spark.master")) {
      builder.master("local[*]");
    }
    settings.forEach(builder::config);
    return builder.getOrCreate();
  }
}
