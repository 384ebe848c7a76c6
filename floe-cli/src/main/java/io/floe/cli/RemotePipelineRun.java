package io.floe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.FloeException;
import io.floe.server.ServerInfo;
import io.floe.spark.pipeline.PipelineEvent;
import io.floe.spark.pipeline.PipelineRun;
import io.floe.spark.pipeline.PipelineRunResult;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pipeline run on a running {@code floe server}'s warm Spark: the project folder goes over HTTP,
 * the datasets' outcomes come back. Loads no Spark class here.
 */
final class RemotePipelineRun {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ServerInfo server;
  private final HttpClient client = HttpClient.newHttpClient();

  RemotePipelineRun(ServerInfo server) {
    this.server = server;
  }

  PipelineRunResult run(Path folder, List<String> refresh, List<String> fullRefresh, boolean fullRefreshAll, boolean prune)
      throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode();
    body.put("path", folder.toAbsolutePath().normalize().toString());
    ArrayNode refreshNode = body.putArray("refresh");
    refresh.forEach(refreshNode::add);
    ArrayNode fullNode = body.putArray("full-refresh");
    fullRefresh.forEach(fullNode::add);
    body.put("full-refresh-all", fullRefreshAll);
    body.put("prune", prune);
    HttpRequest request = HttpRequest.newBuilder(server.baseUri().resolve("/api/pipelines/run"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
        .build();
    HttpResponse<String> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new FloeException("Lost the floe server at " + server.baseUri() + " (" + server.describe()
          + "): " + e.getMessage() + "; use --no-server to run without it", e);
    }
    JsonNode answer = JSON.readTree(response.body());
    if (response.statusCode() != 200) {
      throw new FloeException(answer.path("error").asText("floe server answered HTTP " + response.statusCode()));
    }
    List<PipelineRun.DatasetOutcome> outcomes = new ArrayList<>();
    for (JsonNode dataset : answer.path("datasets")) {
      outcomes.add(new PipelineRun.DatasetOutcome(
          dataset.path("dataset").asText(),
          PipelineEvent.State.valueOf(dataset.path("state").asText()),
          Optional.empty(),
          dataset.path("detail").asText("")));
    }
    return new PipelineRunResult(answer.path("pipeline").asText(), outcomes, answer.path("duration-ms").asLong());
  }
}
