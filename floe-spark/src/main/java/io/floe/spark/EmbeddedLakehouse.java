package io.floe.spark;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Spark settings of a zero-setup lakehouse in one folder: local Spark, Iceberg tables on disk
 * and an Iceberg JDBC catalog on a SQLite file inside the folder ({@code catalog.db}), holding
 * both tables and views.
 */
public final class EmbeddedLakehouse {
  /** The catalog name Floe uses unless told otherwise. */
  public static final String DEFAULT_CATALOG = "lake";

  public static final String EXTENSIONS =
      "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,"
          + FloeSparkSessionExtensions.class.getName();

  /**
   * How many classes Spark keeps compiled for its generated code, a setting read once per JVM. A
   * refresh of a Silver view and a Gold view with {@code COUNT(DISTINCT)} runs about 160 distinct
   * generated classes; Spark's default of 100 evicts each before its next use, so every refresh
   * compiled all of them again, which took about a third of a small refresh. Reused classes are
   * compiled once per JVM.
   */
  public static final String CODEGEN_CACHE = "spark.sql.codegen.cache.maxEntries";

  static final String CODEGEN_CACHE_ENTRIES = "1000";

  private EmbeddedLakehouse() {}

  /** Settings for a catalog named {@code catalogName} in {@code warehouse}. */
  public static Map<String, String> sparkConf(Path warehouse, String catalogName) {
    Path root = warehouse.toAbsolutePath().normalize();
    String prefix = "spark.sql.catalog." + catalogName;
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.sql.extensions", EXTENSIONS);
    conf.put(prefix, "org.apache.iceberg.spark.SparkCatalog");
    conf.put(prefix + ".type", "jdbc");
    conf.put(prefix + ".uri", "jdbc:sqlite:" + root.resolve("catalog.db"));
    conf.put(prefix + ".jdbc.schema-version", "V1");
    conf.put(prefix + ".warehouse", root.toUri().toString());
    // Several processes (a server, a shell, a job) share the warehouse: read table state fresh.
    conf.put(prefix + ".cache-enabled", "false");
    conf.put("spark.sql.defaultCatalog", catalogName);
    // Small local data: few shuffle partitions keep each job's fixed cost low.
    conf.put("spark.sql.shuffle.partitions", "4");
    conf.put("spark.default.parallelism", "4");
    conf.put(CODEGEN_CACHE, CODEGEN_CACHE_ENTRIES);
    conf.put("spark.ui.enabled", "false");
    conf.put("spark.ui.showConsoleProgress", "false");
    conf.put("spark.sql.warehouse.dir", root.resolve("spark-warehouse").toUri().toString());
    // Local files without a chmod process per created file (see LocalFileSystem).
    conf.put("spark.hadoop.fs.file.impl", LocalFileSystem.class.getName());
    conf.put("spark.driver.host", "127.0.0.1");
    conf.put("spark.driver.bindAddress", "127.0.0.1");
    return conf;
  }
}
