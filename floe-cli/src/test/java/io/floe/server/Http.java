package io.floe.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Real HTTP requests to a server on loopback, for tests. */
final class Http {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  private Http() {}

  record Response(int status, String body) {}

  static Response get(URI base, String path) {
    return send(HttpRequest.newBuilder(base.resolve(path)).GET().build());
  }

  static Response post(URI base, String path, String json) {
    return send(HttpRequest.newBuilder(base.resolve(path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json))
        .build());
  }

  private static Response send(HttpRequest request) {
    try {
      HttpResponse<String> response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
      return new Response(response.statusCode(), response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
