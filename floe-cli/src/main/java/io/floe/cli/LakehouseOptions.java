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

  static Path floeHome() {
    return Paths.get(System.getProperty("user.home"), ".floe");
  }

  /** Every Spark setting, lowest precedence first: embedded defaults, the file, then --conf. */
  Map<String, String> sparkConf(Path warehouseDir) {
    Map<String, String> user = new LinkedHashMap<>();
    user.putAll(fileProperties());
    user.putAll(conf);
    Map<String, String> settings = new LinkedHashMap<>();
    String catalogPrefix = "spark.sql.catalog." + catalog;
    boolean userDefinesCatalog = user.keySet().stream().anyMatch(k -> k.equals(catalogPrefix) || k.startsWith(catalogPrefix + "."));
    EmbeddedLakehouse.sparkConf(warehouseDir, catalog)
        .forEach(
            (key, value) -> {
              if (!(userDefinesCatalog && (key.equals(catalogPrefix) || key.startsWith(catalogPrefix + ".")))) {
                settings.put(key, value);
              }
            });
    settings.put("spark.sql.session.timeZone", "UTC");
    settings.putAll(user);
    return settings;
  }

  /** The settings the user gave: {@code floe.properties}, then {@code --conf}. */
  Map<String, String> userConf() {
    Map<String, String> user = new LinkedHashMap<>();
    user.putAll(fileProperties());
    user.putAll(conf);
    return user;
  }

  private Map<String, String> fileProperties() {
    Path file = propertiesFile;
    if (file == null) {
      Path local = Paths.get("floe.properties");
      if (!Files.exists(local)) {
        return Map.of();
      }
      file = local;
    }
    Properties properties = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      properties.load(in);
    } catch (IOException e) {
      throw new FloeException("Cannot read properties file " + file + ": " + e.getMessage(), e);
    }
    Map<String, String> map = new LinkedHashMap<>();
    properties.stringPropertyNames().stream().sorted().forEach(k -> map.put(k, properties.getProperty(k).trim()));
    return map;
  }
}
