package io.floe.spark;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.iceberg.SystemConfigs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Spark settings of a zero-setup lakehouse in one folder: local Spark, Iceberg tables on disk
 * and an Iceberg JDBC catalog on a SQLite file inside the folder ({@code catalog.db}), holding
 * both tables and views.
 */
public final class EmbeddedLakehouse {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedLakehouse.class);
  /** Masters whose executors are threads of the driver's JVM: {@code local}, {@code local[4]}, {@code local[*, 3]}. */
  private static final Pattern IN_PROCESS_MASTER = Pattern.compile("local(\\[[^\\]]*\\])?");
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

  /**
   * Makes Iceberg plan scans in the calling thread, unless the JVM was given Iceberg's setting for
   * it ({@code iceberg.scan.plan-in-worker-pool}, or its environment variable). It is a JVM system
   * property, not a Spark setting, read once, when Iceberg plans its first scan: call this before
   * the session reads a table.
   *
   * <p>On Iceberg's worker pool each manifest is read by a worker, and the planning thread polls
   * for their results every 10 milliseconds. A manifest on a local disk reads in a millisecond or
   * two, so the polls, several per scan and a few scans per refresh, cost a small refresh of the
   * embedded lakehouse about a fifth of its time. Against an object store, where fetching a
   * manifest takes longer than a poll, the pool's parallel reads are worth it: this is for a
   * warehouse on a local or shared file system.
   */
  public static void planScansInCallingThread() {
    SystemConfigs.ConfigEntry<Boolean> planInPool = SystemConfigs.SCAN_THREAD_POOL_ENABLED;
    if (System.getProperty(planInPool.propertyKey()) == null && System.getenv(planInPool.envKey()) == null) {
      System.setProperty(planInPool.propertyKey(), "false");
    }
  }

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

  /**
   * Adapts {@code settings}, the embedded defaults with the user's ({@code userKeys}) over them, to
   * the master they name. On a cluster ({@code spark://}, YARN, Kubernetes, or {@code
   * local-cluster}) the executors are other JVMs, often on other machines: they need Floe's classes
   * (the local file system above is one), so Floe's Spark jar is added to {@code spark.jars}; and
   * they must reach the driver, so the embedded default of a driver on the loopback address is
   * dropped unless the user set it.
   */
  public static void adaptToMaster(Map<String, String> settings, Set<String> userKeys) {
    String master = settings.get("spark.master");
    if (master == null || IN_PROCESS_MASTER.matcher(master.strip()).matches()) {
      return;
    }
    for (String key : new String[] {"spark.driver.host", "spark.driver.bindAddress"}) {
      if (!userKeys.contains(key)) {
        settings.remove(key);
      }
    }
    Optional<Path> jar = floeSparkJar();
    if (jar.isEmpty()) {
      LOG.warn("Floe runs from class folders, not its jar, so it cannot add itself to spark.jars for the executors"
          + " of master {}: give them Floe's Spark jar another way", master);
      return;
    }
    String path = jar.get().toString();
    String jars = settings.get("spark.jars");
    if (jars == null || jars.isBlank()) {
      settings.put("spark.jars", path);
    } else if (!java.util.Arrays.asList(jars.split(",")).contains(path)) {
      settings.put("spark.jars", jars + "," + path);
    }
  }

  /** The jar this class was loaded from: Floe's Spark jar, which carries floe-core too. */
  public static Optional<Path> floeSparkJar() {
    CodeSource source = EmbeddedLakehouse.class.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return Optional.empty();
    }
    try {
      Path location = Paths.get(source.getLocation().toURI());
      return Files.isRegularFile(location) ? Optional.of(location) : Optional.empty();
    } catch (URISyntaxException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
