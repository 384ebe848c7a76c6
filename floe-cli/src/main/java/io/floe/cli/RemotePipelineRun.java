package io.floe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.server.ServerInfo;
import io.floe.spark.pipeline.PipelineEvent;
import io.floe.spark.pipeline.PipelineRun;
import io.floe.spark.pipeline.PipelineRunResult;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A pipeline run on a running {@code floe server}'s warm Spark: the project folder goes over HTTP,
 * the datasets' outcomes come back. Loads no Spark class here.
 */
final class RemotePipelineRun {
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON = ServerCall.JSON;

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
    JsonNode answer = ServerCall.post(client, server, "/api/pipelines/run", body);
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
