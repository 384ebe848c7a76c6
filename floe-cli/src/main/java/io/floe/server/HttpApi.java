package io.floe.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.floe.cli.output.FailureLine;
import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.QueryResult;
import io.floe.cli.output.SparkResults;
import io.floe.schedule.Schedule;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import io.floe.pipeline.PipelineProject;
import io.floe.spark.pipeline.PipelineRun;
import io.floe.spark.pipeline.PipelineRunResult;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's HTTP API: JSON under {@code /api}, Prometheus metrics at {@code /metrics}. Every
 * failure answers with {@code {"error": "..."}} and an HTTP status; none stops the server.
 */
final class HttpApi {
  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_SQL_SESSIONS = 64;
  private static final long STOP_TIMEOUT_MS = 10_000;
  private static final String REFRESH_ENDPOINT = "POST /api/materialized-views/{name}/refresh";
  private static final List<String> REFRESH_OPTIONS = List.of("full", "cascade");
  private static final String SQL_ENDPOINT = "POST /api/sql";
  private static final List<String> SQL_FIELDS = List.of("sql", "session", "format", "directory");
  private static final List<String> SQL_FORMATS = List.of("rows", "json");
  private static final String PIPELINE_ENDPOINT = "POST /api/pipelines/run";
  private static final List<String> PIPELINE_FIELDS =
      List.of("path", "refresh", "full-refresh", "full-refresh-all", "prune");

  private final FloeServer server;
  private final SparkSession spark;
  private final Map<String, SparkSession> sqlSessions =
      Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, SparkSession> eldest) {
          return size() > MAX_SQL_SESSIONS;
        }
      });

  HttpApi(FloeServer server, SparkSession spark) {
    this.server = server;
    this.spark = spark;
  }

  /** Starts listening; returns the running Javalin instance. */
  Javalin start(String bind, int port) {
    Javalin app = Javalin.create(config -> {
      config.showJavalinBanner = false;
      config.jetty.defaultHost = bind;
      // The server's own shutdown stops Jetty, after the refresh in flight.
      config.jetty.modifyServer(jetty -> jetty.setStopAtShutdown(false));
    });
    app.get("/api/server", this::describeServer);
    app.get("/api/materialized-views", this::listViews);
    app.get("/api/graph", this::graph);
    app.post("/api/materialized-views/{name}/refresh", this::refresh);
    app.get("/api/refreshes", this::refreshes);
    app.post("/api/sql", this::sql);
    app.post("/api/sql/cancel", this::cancelSql);
    app.post("/api/pipelines/run", this::runPipeline);
    app.get("/metrics", ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
        .result(server.metrics().scrape()));
    app.exception(BadRequest.class, (e, ctx) -> error(ctx, e.status, e.getMessage()));
    app.exception(Exception.class, (e, ctx) -> {
      LOG.error("{} {} failed", ctx.method(), ctx.path(), e);
      error(ctx, HttpStatus.INTERNAL_SERVER_ERROR, FailureLine.of(e));
    });
    app.error(404, ctx -> {
      String type = ctx.res().getContentType();
      if (type == null || !type.startsWith("application/json")) {
        error(ctx, HttpStatus.NOT_FOUND, "No such endpoint: " + ctx.method() + " " + ctx.path());
      }
    });
    app.start(port);
    // Graceful from now on, so that the request waiting for the refresh in flight still gets its
    // answer. Not before: when the start fails, Javalin stops Jetty, and a graceful stop of a
    // server that never started fails and hides why the start failed.
    app.jettyServer().server().setStopTimeout(STOP_TIMEOUT_MS);
    return app;
  }

  /** A client error: the message and status it answers with. */
  static final class BadRequest extends RuntimeException {
    final HttpStatus status;

    BadRequest(HttpStatus status, String message) {
      super(message);
      this.status = status;
    }
  }

  private void describeServer(Context ctx) throws JsonProcessingException {
    ServerInfo info = server.info();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("pid", info.pid());
    body.put("warehouse", info.warehouse());
    body.put("catalog", server.settings().catalog());
    body.put("started-at", info.startedAt().toString());
    body.put("poll-interval-seconds", server.settings().pollInterval().toSeconds());
    json(ctx, body);
  }

  private void listViews(Context ctx) throws JsonProcessingException {
    List<Map<String, Object>> views = new ArrayList<>();
    for (ViewStatus view : server.views().scan()) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("name", view.name());
      entry.put("fresh", view.freshness().fresh());
      entry.put("freshness", view.freshness().describe());
      entry.put("stale-reasons", view.freshness().staleReasons());
      entry.put("unrecorded-commits", view.freshness().unrecordedCommits());
      entry.put("schedule", view.schedule().map(Schedule::toSql).orElse(null));
      entry.put("next-refresh", server.scheduler().nextFireTime(view).map(Instant::toString).orElse(null));
      entry.put("last-refresh-type", view.lastRefreshType().orElse(null));
      entry.put("last-refresh-time", view.lastRefresh().map(Instant::toString).orElse(null));
      entry.put("sources", view.sources());
      view.error().ifPresent(error -> entry.put("error", error));
      views.add(entry);
    }
    json(ctx, Map.of("materialized-views", views));
  }

  private void graph(Context ctx) throws JsonProcessingException {
    List<ViewStatus> views = server.views().scan();
    Set<String> mvs = new LinkedHashSet<>();
    views.forEach(v -> mvs.add(v.name()));
    Map<String, Map<String, Object>> nodes = new LinkedHashMap<>();
    List<Map<String, Object>> edges = new ArrayList<>();
    for (ViewStatus view : views) {
      for (String source : view.sources()) {
        nodes.computeIfAbsent(source, name -> node(name, mvs.contains(name) ? "materialized-view" : "table", null));
        Map<String, Object> edge = new LinkedHashMap<>();
        edge.put("from", source);
        edge.put("to", view.name());
        edges.add(edge);
      }
      nodes.put(view.name(), node(view.name(), "materialized-view", view.freshness().fresh()));
    }
    nodes.values().stream().filter(n -> n.get("kind").equals("materialized-view") && !n.containsKey("fresh"))
        .forEach(n -> n.put("fresh", null));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("nodes", new ArrayList<>(nodes.values()));
    body.put("edges", edges);
    json(ctx, body);
  }

  private static Map<String, Object> node(String name, String kind, Boolean fresh) {
    Map<String, Object> node = new LinkedHashMap<>();
    node.put("name", name);
    node.put("kind", kind);
    if (fresh != null) {
      node.put("fresh", fresh);
    }
    return node;
  }

  private void refresh(Context ctx) throws Exception {
    String name = ctx.pathParam("name");
    Map<String, Boolean> options = refreshOptions(ctx);
    ScheduledRefresh.Outcome outcome =
        server.refreshNow(name, options.getOrDefault("full", false), options.getOrDefault("cascade", false));
    switch (outcome.result()) {
      case REFRESHED:
        break;
      case INVALID_NAME:
        throw badRequest(outcome.error());
      case NO_SUCH_VIEW:
        throw new BadRequest(HttpStatus.NOT_FOUND, outcome.error());
      default:
        error(ctx, HttpStatus.INTERNAL_SERVER_ERROR, outcome.error());
        return;
    }
    List<Map<String, Object>> refreshed = new ArrayList<>();
    outcome.refreshed().forEach(row -> refreshed.add(jsonValues(row)));
    json(ctx, Map.of("refreshed", refreshed));
  }

  /**
   * The {@code full} and {@code cascade} options of a refresh, each given once: {@code ?full=true}
   * ({@code true} or {@code false} in any case; a bare {@code ?full} is {@code true}) or
   * {@code {"full": true}} in a JSON object body. Any other parameter, field or value is refused,
   * so that a mistyped option never runs a different refresh than the one asked for.
   */
  private static Map<String, Boolean> refreshOptions(Context ctx) {
    Map<String, Boolean> options = new LinkedHashMap<>();
    for (Map.Entry<String, List<String>> param : ctx.queryParamMap().entrySet()) {
      String name = param.getKey();
      if (!REFRESH_OPTIONS.contains(name)) {
        throw badRequest("Unknown query parameter '" + name + "': " + REFRESH_ENDPOINT + " accepts "
            + String.join(" and ", REFRESH_OPTIONS));
      }
      if (param.getValue().size() > 1) {
        throw badRequest(name + " is given " + param.getValue().size() + " times; give it once");
      }
      String value = param.getValue().get(0);
      if (!value.isEmpty() && !value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
        throw badRequest(name + " must be true or false but is '" + value + "'");
      }
      options.put(name, value.isEmpty() || value.equalsIgnoreCase("true"));
    }
    if (ctx.body().isBlank()) {
      return options;
    }
    JsonNode body = objectBody(ctx, REFRESH_ENDPOINT, REFRESH_OPTIONS, "{\"full\": true}");
    for (String name : REFRESH_OPTIONS) {
      JsonNode value = body.get(name);
      if (value == null) {
        continue;
      }
      if (!value.isBoolean()) {
        throw badRequest(name + " must be true or false (a JSON boolean) but is " + value);
      }
      if (options.containsKey(name)) {
        throw badRequest(name + " is given both as a query parameter and in the body; give it once");
      }
      options.put(name, value.booleanValue());
    }
    return options;
  }

  /**
   * Runs a pipeline project on the server's warm Spark, in a session of its own (a run sets the
   * session's catalog and namespace per dataset), and answers each dataset's outcome.
   */
  private void runPipeline(Context ctx) throws JsonProcessingException, InterruptedException {
    JsonNode body = objectBody(ctx, PIPELINE_ENDPOINT, PIPELINE_FIELDS, "{\"path\": \"...\"}");
    String path = text(body, "path", "");
    if (path.isBlank()) {
      throw badRequest("Give the project folder as {\"path\": \"...\"}");
    }
    List<String> refresh = texts(body, "refresh");
    List<String> fullRefresh = texts(body, "full-refresh");
    boolean fullRefreshAll = flag(body, "full-refresh-all");
    boolean prune = flag(body, "prune");
    if (server.stopping()) {
      throw new BadRequest(HttpStatus.SERVICE_UNAVAILABLE, "floe server is shutting down");
    }
    PipelineRunResult result;
    try {
      LOG.info("Running pipeline {} over HTTP", path);
      result = server.runOnRefreshThread(() ->
          PipelineRun.of(
                  (org.apache.spark.sql.classic.SparkSession) spark.newSession(),
                  PipelineProject.load(java.nio.file.Path.of(path)))
              .refresh(refresh)
              .fullRefresh(fullRefresh)
              .fullRefreshAll(fullRefreshAll)
              .prune(prune)
              .run());
    } catch (BadRequest e) {
      throw e;
    } catch (RuntimeException e) {
      LOG.info("Pipeline run over HTTP failed: {}", path, e);
      throw new BadRequest(HttpStatus.BAD_REQUEST, e.getMessage());
    }
    LOG.info("Pipeline {} over HTTP finished in {} ms", path, result.durationMs());
    List<Map<String, Object>> datasets = new ArrayList<>();
    for (PipelineRun.DatasetOutcome outcome : result.datasets()) {
      Map<String, Object> dataset = new LinkedHashMap<>();
      dataset.put("dataset", outcome.dataset());
      dataset.put("state", outcome.state().name());
      dataset.put("detail", outcome.detail());
      outcome.refresh().ifPresent(r -> dataset.put("refresh-type", r.type().name()));
      datasets.add(dataset);
    }
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("pipeline", result.pipeline());
    answer.put("succeeded", result.succeeded());
    answer.put("duration-ms", result.durationMs());
    answer.put("datasets", datasets);
    json(ctx, answer);
  }

  /** An array-of-strings field of a JSON object body, empty when absent; refuses any other value. */
  private static List<String> texts(JsonNode body, String field) {
    JsonNode array = body.get(field);
    List<String> texts = new ArrayList<>();
    if (array == null) {
      return texts;
    }
    if (!array.isArray()) {
      throw badRequest(field + " must be a JSON array of dataset names but is " + kind(array));
    }
    for (JsonNode item : array) {
      if (!item.isTextual() || item.textValue().isBlank()) {
        throw badRequest(field + " must hold dataset names as JSON strings but holds " + kind(item));
      }
      texts.add(item.textValue());
    }
    return texts;
  }

  /** A boolean field of a JSON object body, false when absent; refuses any other value. */
  private static boolean flag(JsonNode body, String field) {
    JsonNode value = body.get(field);
    if (value == null) {
      return false;
    }
    if (!value.isBoolean()) {
      throw badRequest(field + " must be true or false (a JSON boolean) but is " + kind(value));
    }
    return value.booleanValue();
  }

  private void refreshes(Context ctx) throws JsonProcessingException {
    StringBuilder sql = new StringBuilder("SHOW REFRESHES");
    String mv = ctx.queryParam("mv");
    if (mv != null && !mv.isBlank()) {
      if (!mv.matches("[A-Za-z0-9_.`]+")) {
        throw new BadRequest(HttpStatus.BAD_REQUEST, "Invalid materialized view name '" + mv + "'");
      }
      sql.append(" FOR ").append(mv);
    }
    String limit = ctx.queryParam("limit");
    if (limit != null) {
      if (!limit.matches("\\d{1,9}")) {
        throw new BadRequest(HttpStatus.BAD_REQUEST, "limit must be a whole number but is '" + limit + "'");
      }
      sql.append(" LIMIT ").append(limit);
    }
    List<Row> rows;
    try {
      rows = spark.newSession().sql(sql.toString()).collectAsList();
    } catch (Exception e) { // Spark's AnalysisException is checked but undeclared
      throw new BadRequest(HttpStatus.BAD_REQUEST, FailureLine.of(e));
    }
    List<Map<String, Object>> refreshes = new ArrayList<>();
    for (Row row : rows) {
      Map<String, Object> values = new LinkedHashMap<>();
      for (String field : row.schema().fieldNames()) {
        values.put(field, row.getAs(field));
      }
      refreshes.add(jsonValues(values));
    }
    json(ctx, Map.of("refreshes", refreshes));
  }

  private void sql(Context ctx) throws JsonProcessingException {
    JsonNode body = objectBody(ctx, SQL_ENDPOINT, SQL_FIELDS, "{\"sql\": \"...\"}");
    String sql = text(body, "sql", "");
    if (sql.isBlank()) {
      throw badRequest("Give the statement as {\"sql\": \"...\"}");
    }
    String formatName = text(body, "format", "rows");
    if (!SQL_FORMATS.contains(formatName)) {
      throw badRequest("format must be " + String.join(" or ", SQL_FORMATS) + " but is '" + formatName + "'");
    }
    String sessionId = text(body, "session", "");
    String directory = text(body, "directory", "");
    if (!directory.isEmpty() && !java.nio.file.Path.of(directory).isAbsolute()) {
      throw badRequest("directory must be an absolute path but is '" + directory + "'");
    }
    if (server.stopping()) {
      throw new BadRequest(HttpStatus.SERVICE_UNAVAILABLE, "floe server is shutting down");
    }
    OutputFormat format = formatName.equals("json") ? OutputFormat.JSON : OutputFormat.TABLE;
    SparkSession session = sessionId.isEmpty()
        ? spark.newSession()
        : sqlSessions.computeIfAbsent(sessionId, id -> spark.newSession());
    if (!directory.isEmpty()) {
      // A relative read_files path is the client's, as it would be without a server.
      session.conf().set(io.floe.spark.ingest.FileIngestion.BASE_DIRECTORY, directory);
    }
    long started = System.nanoTime();
    QueryResult result;
    LOG.info("Statement over HTTP: {}", sql.length() > 200 ? sql.substring(0, 200) + "..." : sql);
    try {
      result = server.statements().run(sessionId, () -> SparkResults.run(session, sql, format));
    } catch (Exception e) { // Spark's AnalysisException is checked but undeclared
      if (e instanceof RunningStatements.CancelledStatement) {
        LOG.info("Statement over HTTP cancelled by its client: {}", sql);
        throw new BadRequest(HttpStatus.BAD_REQUEST, "Statement cancelled");
      }
      if (server.statements().cancelled()) {
        LOG.info("Statement over HTTP cancelled by the server's stop: {}", sql);
        throw new BadRequest(HttpStatus.SERVICE_UNAVAILABLE,
            "Statement cancelled: the floe server stopped before it finished; run it again");
      }
      LOG.info("Statement over HTTP failed: {}", sql, e);
      throw new BadRequest(HttpStatus.BAD_REQUEST, FailureLine.of(e));
    }
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("columns", result.columns());
    if (format == OutputFormat.JSON) {
      answer.put("json", result.jsonLines());
    } else {
      answer.put("rows", result.rows());
    }
    result.scanned().ifPresent(scanned -> answer.put("scanned", scanned));
    if (!result.rewriteReport().isEmpty()) {
      answer.put("rewrite-report", result.rewriteReport());
    }
    answer.put("elapsed-ms", (System.nanoTime() - started) / 1_000_000);
    json(ctx, answer);
  }

  /** Cancels the statement a SQL session is running ({@code {"session": "..."}}); answers how many were. */
  private void cancelSql(Context ctx) throws JsonProcessingException {
    JsonNode body = objectBody(ctx, "POST /api/sql/cancel", List.of("session"), "{\"session\": \"...\"}");
    String sessionId = text(body, "session", "");
    if (sessionId.isEmpty()) {
      throw badRequest("Give the session whose statement to cancel as {\"session\": \"...\"}");
    }
    json(ctx, Map.of("cancelled", server.statements().cancelSession(sessionId)));
  }

  private static JsonNode body(Context ctx) {
    try {
      return JSON.readTree(ctx.body());
    } catch (JsonProcessingException e) {
      throw new BadRequest(HttpStatus.BAD_REQUEST, "The request body is not JSON: " + e.getOriginalMessage());
    }
  }

  /**
   * A request's JSON object body, refusing any other JSON value and any field but {@code fields},
   * which are named in the error together with {@code example}.
   */
  private static JsonNode objectBody(Context ctx, String endpoint, List<String> fields, String example) {
    JsonNode body = body(ctx);
    if (!body.isObject()) {
      throw badRequest("The request body must be a JSON object such as " + example + " but is "
          + kind(body));
    }
    body.fieldNames().forEachRemaining(field -> {
      if (!fields.contains(field)) {
        throw badRequest("Unknown field '" + field + "' in the request body: " + endpoint + " accepts "
            + String.join(", ", fields));
      }
    });
    return body;
  }

  /** A string field of a JSON object body; refuses any other JSON value, {@code null} included. */
  private static String text(JsonNode body, String field, String absent) {
    JsonNode value = body.get(field);
    if (value == null) {
      return absent;
    }
    if (!value.isTextual()) {
      throw badRequest(field + " must be a JSON string but is " + kind(value));
    }
    return value.textValue();
  }

  /** What kind of JSON value a node is, for an error message: {@code an array}, {@code the number 42}. */
  private static String kind(JsonNode value) {
    switch (value.getNodeType()) {
      case ARRAY:
        return "an array";
      case OBJECT:
        return "an object";
      case NUMBER:
        return "the number " + value;
      case BOOLEAN:
        return value.toString();
      case NULL:
        return "null";
      case MISSING:
        return "empty";
      default:
        return value.toString();
    }
  }

  private static BadRequest badRequest(String message) {
    return new BadRequest(HttpStatus.BAD_REQUEST, message);
  }

  /** Values Jackson writes as they are; anything else as its text. */
  private static Map<String, Object> jsonValues(Map<String, Object> row) {
    Map<String, Object> values = new LinkedHashMap<>();
    row.forEach((key, value) -> values.put(key,
        value == null || value instanceof Number || value instanceof Boolean || value instanceof String
            ? value : String.valueOf(value)));
    return values;
  }

  private static void json(Context ctx, Object body) throws JsonProcessingException {
    ctx.contentType("application/json").result(JSON.writeValueAsString(body));
  }

  private static void error(Context ctx, HttpStatus status, String message) {
    try {
      ctx.status(status).contentType("application/json").result(JSON.writeValueAsString(Map.of("error", message)));
    } catch (JsonProcessingException e) {
      ctx.status(status).result(message);
    }
  }
}
