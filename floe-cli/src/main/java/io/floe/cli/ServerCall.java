package io.floe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.FloeException;
import io.floe.server.ServerInfo;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** One JSON request to a running {@code floe server}, its error answered as one clear line. */
final class ServerCall {
  static final ObjectMapper JSON = new ObjectMapper();

  private ServerCall() {}

  /** Posts {@code body} to {@code path}; the answer's JSON, or the server's error as an exception. */
  static JsonNode post(HttpClient client, ServerInfo server, String path, ObjectNode body)
      throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(server.baseUri().resolve(path))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
        .build();
    HttpResponse<String> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new FloeException("Lost the floe server at " + server.baseUri() + " (" + server.describe()
          + "): " + (e.getMessage() == null ? "the connection closed (" + e.getClass().getSimpleName() + ")" : e.getMessage())
          + "; use --no-server to run without it", e);
    }
    JsonNode answer = JSON.readTree(response.body());
    if (response.statusCode() != 200) {
      throw new FloeException(answer.path("error").asText("floe server answered HTTP " + response.statusCode()));
    }
    return answer;
  }
}
