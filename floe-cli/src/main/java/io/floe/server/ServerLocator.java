package io.floe.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Finds the {@code floe server} running on a warehouse, for commands that would rather use its
 * warm Spark session than start their own. Loads no Spark class.
 */
public final class ServerLocator {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  private ServerLocator() {}

  /**
   * The server named by the warehouse's lock file when it answers on its address for the same
   * warehouse; empty when there is none (no file, a server that has stopped, another one now on
   * that port).
   */
  public static Optional<ServerInfo> find(Path warehouse) {
    Optional<ServerInfo> recorded = WarehouseLock.recordedHolder(warehouse);
    if (recorded.isEmpty()) {
      return Optional.empty();
    }
    ServerInfo info = recorded.get();
    HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    HttpRequest request = HttpRequest.newBuilder(info.baseUri().resolve("/api/server")).timeout(TIMEOUT).GET().build();
    try {
      HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        return Optional.empty();
      }
      JsonNode body = new ObjectMapper().readTree(response.body());
      boolean same = body.path("pid").asLong() == info.pid()
          && body.path("warehouse").asText().equals(info.warehouse());
      return same ? Optional.of(info) : Optional.empty();
    } catch (IOException notAnswering) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }
}
