package io.floe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.QueryResult;
import io.floe.server.ServerInfo;
import java.io.IOException;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Statements sent to a running {@code floe server} over {@code POST /api/sql}. One server-side
 * session per instance, so {@code USE} and {@code SET} carry over between statements.
 */
final class RemoteSqlSession implements SqlSession {
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON = ServerCall.JSON;

  private final ServerInfo server;
  private final HttpClient client = HttpClient.newHttpClient();
  private final String sessionId = UUID.randomUUID().toString();

  RemoteSqlSession(ServerInfo server) {
    this.server = server;
  }

  @Override
  public QueryResult run(String sql, OutputFormat format) throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode();
    body.put("sql", sql);
    body.put("format", format == OutputFormat.JSON ? "json" : "rows");
    body.put("session", sessionId);
    // The server resolves a relative read_files path against this folder, as floe sql does alone.
    body.put("directory", java.nio.file.Path.of("").toAbsolutePath().toString());
    JsonNode result = ServerCall.post(client, server, "/api/sql", body);
    return new QueryResult(
        texts(result.path("columns")),
        rows(result.path("rows")),
        texts(result.path("json")),
        result.hasNonNull("scanned") ? java.util.Optional.of(result.get("scanned").asText()) : java.util.Optional.empty(),
        texts(result.path("rewrite-report")));
  }

  @Override
  public void cancel() {
    ObjectNode body = JSON.createObjectNode();
    body.put("session", sessionId);
    try {
      ServerCall.post(client, server, "/api/sql/cancel", body);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static List<List<String>> rows(JsonNode rows) {
    List<List<String>> all = new ArrayList<>();
    rows.forEach(row -> all.add(texts(row)));
    return all;
  }

  private static List<String> texts(JsonNode array) {
    List<String> texts = new ArrayList<>();
    array.forEach(cell -> texts.add(cell.isNull() ? null : cell.asText()));
    return texts;
  }
}
