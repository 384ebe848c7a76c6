package io.floe.cli;

import io.floe.FloeException;
import io.floe.spark.EmbeddedLakehouse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * Where the lakehouse is and how Spark reaches it, shared by every subcommand. Without
 * configuration this is the embedded lakehouse: local Spark and an Iceberg JDBC catalog on SQLite
 * inside the warehouse folder. Spark and Iceberg properties from {@code floe.properties} and
 * {@code --conf} replace any of that, for example to use a REST, Hive, Nessie or Glue catalog.
 */
final class LakehouseOptions {
  @Option(
      names = {"-w", "--warehouse"},
      paramLabel = "DIR",
      description = "Warehouse folder (default: $FLOE_WAREHOUSE, else ~/.floe/warehouse; for demo: ~/.floe/demo).")
  Path warehouse;

  @Option(
      names = "--catalog",
      paramLabel = "NAME",
      defaultValue = EmbeddedLakehouse.DEFAULT_CATALOG,
      description = "Name of the default catalog (default: ${DEFAULT-VALUE}).")
  String catalog;

  @Option(
      names = "--conf",
      paramLabel = "KEY=VALUE",
      description = "A Spark or Iceberg property; repeat for more. Overrides floe.properties.")
  Map<String, String> conf = new LinkedHashMap<>();

  @Option(
      names = "--properties",
      paramLabel = "FILE",
      description = "Properties file (default: ./floe.properties when present).")
  Path propertiesFile;

  /** The warehouse folder this invocation uses. */
  Path warehouse(Path fallback) {
    if (warehouse != null) {
      return warehouse;
    }
    String fromEnv = System.getenv("FLOE_WAREHOUSE");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return Paths.get(fromEnv);
    }
    return fallback;
  }

  /**
   * The floe server running on {@code warehouse}, which this command then sends its work to, unless
   * {@code noServer}. The server's Spark session has its own settings: a note on {@code err} names
   * those given to this command that therefore do not apply.
   */
  java.util.Optional<io.floe.server.ServerInfo> server(Path warehouse, boolean noServer, java.io.PrintWriter err) {
    java.util.Optional<io.floe.server.ServerInfo> server =
        noServer ? java.util.Optional.empty() : io.floe.server.ServerLocator.find(warehouse);
    if (server.isPresent()) {
      java.util.List<String> unused = new java.util.ArrayList<>();
      if (!conf.isEmpty()) {
        unused.add("--conf");
      }
      propertiesFileInUse().ifPresent(file -> unused.add(propertiesFile != null ? "--properties" : "./" + file));
      if (!EmbeddedLakehouse.DEFAULT_CATALOG.equals(catalog)) {
        unused.add("--catalog");
      }
      if (!unused.isEmpty()) {
        err.println("Note: running on floe server " + server.get().describe() + ", whose Spark session has its own"
            + " settings: " + String.join(", ", unused) + " given here do" + (unused.size() == 1 ? "es" : "")
            + " not apply; add --no-server to run with them on embedded Spark");
        err.flush();
      }
    }
    return server;
  }

  static Path floeHome() {
    return Paths.get(System.getProperty("user.home"), ".floe");
  }

  /** Every Spark setting, lowest precedence first: embedded defaults, the file, then --conf. */
  Map<String, String> sparkConf(Path warehouseDir) {
    Map<String, String> user = userConf();
    Map<String, String> settings = new LinkedHashMap<>();
    String catalogPrefix = "spark.sql.catalog." + catalog;
    boolean userDefinesCatalog = definesCatalog(user);
    EmbeddedLakehouse.sparkConf(warehouseDir, catalog)
        .forEach(
            (key, value) -> {
              if (!(userDefinesCatalog && (key.equals(catalogPrefix) || key.startsWith(catalogPrefix + ".")))) {
                settings.put(key, value);
              }
            });
    settings.put("spark.sql.session.timeZone", "UTC");
    settings.putAll(user);
    EmbeddedLakehouse.adaptToMaster(settings, user.keySet());
    return settings;
  }

  /**
   * Whether the lakehouse's catalog is the embedded one, on SQLite in the warehouse folder: the user
   * defined no catalog of that name ({@link EmbeddedLakehouse#sparkConf}).
   */
  boolean usesEmbeddedCatalog() {
    return !definesCatalog(userConf());
  }

  private boolean definesCatalog(Map<String, String> user) {
    String catalogPrefix = "spark.sql.catalog." + catalog;
    return user.keySet().stream().anyMatch(k -> k.equals(catalogPrefix) || k.startsWith(catalogPrefix + "."));
  }

  /** The settings the user gave: {@code floe.properties}, then {@code --conf}. */
  Map<String, String> userConf() {
    Map<String, String> user = new LinkedHashMap<>();
    user.putAll(fileProperties());
    user.putAll(conf);
    return user;
  }

  /** The properties file this invocation reads: {@code --properties}, else {@code ./floe.properties} when present. */
  private java.util.Optional<Path> propertiesFileInUse() {
    if (propertiesFile != null) {
      return java.util.Optional.of(propertiesFile);
    }
    Path local = Paths.get("floe.properties");
    return Files.exists(local) ? java.util.Optional.of(local) : java.util.Optional.empty();
  }

  private Map<String, String> fileProperties() {
    java.util.Optional<Path> inUse = propertiesFileInUse();
    if (inUse.isEmpty()) {
      return Map.of();
    }
    Path file = inUse.get();
    Properties properties = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      properties.load(in);
    } catch (IOException e) {
      String why = e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage();
      throw new FloeException("Cannot read properties file " + file + ": " + why, e);
    }
    Map<String, String> map = new LinkedHashMap<>();
    properties.stringPropertyNames().stream().sorted().forEach(k -> map.put(k, properties.getProperty(k).trim()));
    return map;
  }
}
