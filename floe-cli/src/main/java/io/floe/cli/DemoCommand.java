package io.floe.cli;

import io.floe.demo.SeedStories;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code floe demo}: the seed documents' pipelines, end to end, on a fresh demo warehouse. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Tell the seed stories end to end on a fresh demo warehouse.",
    description = {
      "Tell the seed stories on a demo warehouse (default ~/.floe/demo, or --warehouse):",
      "the ride-sharing medallion pipeline, the orders summary MV, and the messy orders lake.",
      "Each run starts over: the demo's namespaces are dropped and rebuilt."
    })
final class DemoCommand implements Callable<Integer> {
  @Mixin LakehouseOptions lakehouse = new LakehouseOptions();

  @Override
  public Integer call() {
    long started = System.nanoTime();
    Path warehouse = lakehouse.warehouse != null ? lakehouse.warehouse : LakehouseOptions.floeHome().resolve("demo");
    SparkSession spark = LakehouseSession.start(lakehouse, warehouse);
    new SeedStories(spark, warehouse, System.out, lakehouse.catalog).tellAll();
    System.out.printf("%nDemo finished in %.1f s (warehouse: %s)%n", (System.nanoTime() - started) / 1e9, warehouse.toAbsolutePath());
    return 0;
  }
}
