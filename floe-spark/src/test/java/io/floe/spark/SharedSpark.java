package io.floe.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/**
 * One SparkSession per test JVM, on an embedded lakehouse in a temporary folder. Tests isolate
 * themselves by namespace.
 */
public final class SharedSpark {
  private static SparkSession session;
  private static Path warehouse;

  private SharedSpark() {}

  public static synchronized SparkSession session() {
    if (session == null) {
      try {
        warehouse = Files.createTempDirectory("floe-test-warehouse");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      SparkSession.Builder builder = SparkSession.builder().master("local[2]").appName("floe-tests");
      EmbeddedLakehouse.sparkConf(warehouse, EmbeddedLakehouse.DEFAULT_CATALOG).forEach(builder::config);
      session = builder.getOrCreate();
    }
    return session;
  }

  public static Path warehouse() {
    session();
    return warehouse;
  }

  /** A fresh namespace in the lake catalog, made current. */
  public static String freshNamespace(String prefix) {
    String name = prefix + "_" + Long.toHexString(System.nanoTime());
    session().sql("CREATE NAMESPACE lake." + name);
    session().sql("USE lake." + name);
    return name;
  }
}
