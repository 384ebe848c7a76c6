package io.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import io.floe.spark.EmbeddedLakehouse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class LakehouseOptionsTest {
  private static LakehouseOptions parse(String... args) {
    SqlCommand command = new SqlCommand();
    new CommandLine(command).parseArgs(args);
    return command.lakehouse;
  }

  @Test
  void embeddedLakehouseIsASqliteJdbcCatalogInsideTheWarehouse(@TempDir Path warehouse) {
    Map<String, String> conf = parse().sparkConf(warehouse);
    assertThat(conf)
        .containsEntry("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
        .containsEntry("spark.sql.catalog.lake.type", "jdbc")
        .containsEntry("spark.sql.catalog.lake.uri", "jdbc:sqlite:" + warehouse.toAbsolutePath().normalize().resolve("catalog.db"))
        .containsEntry("spark.sql.defaultCatalog", "lake");
    assertThat(conf.get("spark.sql.extensions")).contains("io.floe.spark.FloeSparkSessionExtensions");
  }

  @Test
  void aCatalogFromThePropertiesFileReplacesTheEmbeddedOne(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("floe.properties");
    Files.writeString(
        file,
        "spark.sql.catalog.lake=org.apache.iceberg.spark.SparkCatalog\n"
            + "spark.sql.catalog.lake.type=rest\n"
            + "spark.sql.catalog.lake.uri=http://127.0.0.1:8181\n");
    Map<String, String> conf =
        parse("--properties", file.toString(), "--conf", "spark.sql.shuffle.partitions=8").sparkConf(dir.resolve("wh"));
    assertThat(conf)
        .containsEntry("spark.sql.catalog.lake.type", "rest")
        .containsEntry("spark.sql.catalog.lake.uri", "http://127.0.0.1:8181")
        .doesNotContainKey("spark.sql.catalog.lake.jdbc.schema-version")
        .doesNotContainKey("spark.sql.catalog.lake.warehouse")
        .containsEntry("spark.sql.shuffle.partitions", "8");
  }

  @Test
  void onlyTheEmbeddedCatalogHasItsScansPlannedInTheCallingThread(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("floe.properties");
    Files.writeString(file, "spark.sql.catalog.lake=org.apache.iceberg.spark.SparkCatalog\nspark.sql.catalog.lake.type=rest\n");

    assertThat(parse().usesEmbeddedCatalog()).isTrue();
    assertThat(parse("--conf", "spark.sql.shuffle.partitions=8").usesEmbeddedCatalog()).isTrue();
    assertThat(parse("--properties", file.toString()).usesEmbeddedCatalog()).isFalse();
    assertThat(parse("--conf", "spark.sql.catalog.lake.uri=thrift://metastore:9083").usesEmbeddedCatalog()).isFalse();
  }

  @Test
  void commandLineConfOverridesThePropertiesFile(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("floe.properties");
    Files.writeString(file, "spark.sql.shuffle.partitions=16\n");
    Map<String, String> conf =
        parse("--properties", file.toString(), "--conf", "spark.sql.shuffle.partitions=2").sparkConf(dir);
    assertThat(conf).containsEntry("spark.sql.shuffle.partitions", "2");
  }

  @Test
  void aClusterMasterGetsFloesJarAndADriverItsExecutorsCanReach(@TempDir Path dir) {
    Map<String, String> local = parse("--conf", "spark.master=local[2]").sparkConf(dir);
    assertThat(local)
        .containsEntry("spark.driver.host", "127.0.0.1")
        .containsEntry("spark.driver.bindAddress", "127.0.0.1")
        .doesNotContainKey("spark.jars");

    String floeJar = EmbeddedLakehouse.floeSparkJar().orElseThrow().toString();
    Map<String, String> cluster =
        parse("--conf", "spark.master=spark://spark-master:7077", "--conf", "spark.jars=/opt/jobs/udfs.jar").sparkConf(dir);
    assertThat(cluster)
        .doesNotContainKey("spark.driver.host")
        .doesNotContainKey("spark.driver.bindAddress")
        .containsEntry("spark.jars", "/opt/jobs/udfs.jar," + floeJar);

    Map<String, String> pinned =
        parse("--conf", "spark.master=local-cluster[2,1,1024]", "--conf", "spark.driver.host=10.0.0.5").sparkConf(dir);
    assertThat(pinned)
        .containsEntry("spark.driver.host", "10.0.0.5")
        .doesNotContainKey("spark.driver.bindAddress")
        .containsEntry("spark.jars", floeJar);
  }
}
