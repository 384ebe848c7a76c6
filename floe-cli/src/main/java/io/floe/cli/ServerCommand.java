package io.floe.cli;

import io.floe.server.FloeServer;
import io.floe.server.ServerSettings;
import io.floe.server.WarehouseLock;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe server}: a warm Spark session, the refresh scheduler and the HTTP API. */
@Command(
    name = "server",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Serve the lakehouse: scheduled and continuous refreshes, HTTP API, warm Spark.",
    description = {
      "Serve the lakehouse: refresh scheduled views when due and ON CHANGE views when a source moves,",
      "answer the HTTP API and /metrics, and run floe sql statements on one warm Spark session.",
      "One server per warehouse; stop it with SIGTERM or Ctrl-C."
    })
final class ServerCommand implements Callable<Integer> {
  @Mixin LakehouseOptions lakehouse = new LakehouseOptions();

  @Spec CommandSpec spec;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "7878",
      description = "HTTP port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
  int port;

  @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
      description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String bind;

  @Override
  public Integer call() throws InterruptedException {
    Path warehouse = lakehouse.warehouse(LakehouseOptions.floeHome().resolve("warehouse"));
    ServerSettings settings = ServerSettings.of(warehouse, lakehouse.catalog, bind, port, lakehouse.userConf());
    WarehouseLock lock = FloeServer.lockWarehouse(settings);
    FloeServer server;
    try {
      server = FloeServer.start(LakehouseSession.start(lakehouse, warehouse), settings, lock, Clock.systemUTC());
    } catch (RuntimeException e) {
      closeAfterFailure(lock, e);
      throw e;
    }
    server.stopOnSignals();
    spec.commandLine().getOut().printf("floe server on %s (warehouse %s, pid %d); polling every %d s%n",
        server.info().baseUri(), settings.warehouse(), server.info().pid(), settings.pollInterval().toSeconds());
    spec.commandLine().getOut().flush();
    server.awaitStopped();
    return 0;
  }

  private static void closeAfterFailure(WarehouseLock lock, RuntimeException failure) {
    try {
      lock.close();
    } catch (java.io.IOException e) {
      failure.addSuppressed(e);
    }
  }
}
