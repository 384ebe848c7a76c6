package io.floe.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;

/**
 * One SparkSession per test JVM, on an embedded lakehouse in a temporary folder that is deleted
 * when the JVM exits. Tests isolate themselves by namespace.
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
      EmbeddedLakehouse.planScansInCallingThread();
      SparkSession.Builder builder = SparkSession.builder().master("local[2]").appName("floe-tests");
      EmbeddedLakehouse.sparkConf(warehouse, EmbeddedLakehouse.DEFAULT_CATALOG).forEach(builder::config);
      builder.config("spark.sql.catalog." + EmbeddedLakehouse.DEFAULT_CATALOG + ".metrics-reporter-impl", ScanReports.class.getName());
      session = builder.getOrCreate();
      Path created = warehouse;
      SparkSession started = session;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> discard(started, created), "floe-test-warehouse-cleanup"));
    }
    return session;
  }

  /** Stops the session, so nothing writes to the warehouse any more, then deletes the warehouse. */
  private static void discard(SparkSession session, Path warehouse) {
    session.stop();
    try (Stream<Path> paths = Files.walk(warehouse)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    } catch (IOException | UncheckedIOException e) {
      System.err.println("Could not delete the test warehouse " + warehouse + ": " + e);
    }
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
