package io.floe.mv;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes the {@code refresh-state} JSON of a storage snapshot.
 *
 * <pre>{@code
 * {"view-version-id": 1, "refresh-start-timestamp-ms": 1733000000000,
 *  "source-states": [
 *    {"type": "table", "namespace": ["db"], "name": "trips", "uuid": "...", "snapshot-id": 42, "schema-id": 0},
 *    {"type": "view",  "namespace": ["db"], "name": "silver", "uuid": "...", "version-id": 3}]}
 * }</pre>
 *
 * Optional fields ({@code snapshot-id}, {@code ref}, {@code schema-id}) are written only when
 * present.
 */
public final class RefreshStateParser {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private RefreshStateParser() {}

  public static String toJson(RefreshState state) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("view-version-id", state.viewVersionId());
    root.put("refresh-start-timestamp-ms", state.refreshStartTimestampMs());
    writeSourceStates(root.putArray("source-states"), state.sourceStates());
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write refresh-state JSON", e);
    }
  }

  /** A JSON array of source states, each written as in {@code source-states}. */
  public static String sourceStatesToJson(List<SourceState> states) {
    ArrayNode array = MAPPER.createArrayNode();
    writeSourceStates(array, states);
    try {
      return MAPPER.writeValueAsString(array);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write source states as JSON", e);
    }
  }

  private static void writeSourceStates(ArrayNode sources, List<SourceState> states) {
    for (SourceState source : states) {
      ObjectNode node = sources.addObject();
      node.put("type", source.type() == SourceState.Type.TABLE ? "table" : "view");
      ArrayNode namespace = node.putArray("namespace");
      source.namespace().forEach(namespace::add);
      node.put("name", source.name());
      node.put("uuid", source.uuid());
      source.snapshotId().ifPresent(id -> node.put("snapshot-id", id));
      source.ref().ifPresent(ref -> node.put("ref", ref));
      source.schemaId().ifPresent(id -> node.put("schema-id", id));
      source.versionId().ifPresent(id -> node.put("version-id", id));
    }
  }

  public static RefreshState fromJson(String json) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid refresh-state JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("Invalid refresh-state JSON: not an object: " + json);
    }
    int viewVersion = required(root, "view-version-id").asInt();
    long startMs = required(root, "refresh-start-timestamp-ms").asLong();
    List<SourceState> sources = new ArrayList<>();
    for (JsonNode node : required(root, "source-states")) {
      String type = required(node, "type").asText();
      List<String> namespace = new ArrayList<>();
      JsonNode ns = required(node, "namespace");
      if (ns.isArray()) {
        ns.forEach(level -> namespace.add(level.asText()));
      } else {
        namespace.addAll(List.of(ns.asText().split("\\.")));
      }
      String name = required(node, "name").asText();
      String uuid = required(node, "uuid").asText();
      SourceState source;
      switch (type) {
        case "table":
          source =
              SourceState.table(
                  namespace,
                  name,
                  uuid,
                  node.hasNonNull("snapshot-id") ? node.get("snapshot-id").asLong() : null,
                  node.hasNonNull("schema-id") ? node.get("schema-id").asInt() : null);
          if (node.hasNonNull("ref")) {
            source = source.withRef(node.get("ref").asText());
          }
          break;
        case "view":
          source = SourceState.view(namespace, name, uuid, required(node, "version-id").asInt());
          break;
        default:
          throw new IllegalArgumentException(
              "Invalid refresh-state JSON: unknown source type '" + type + "' for " + name);
      }
      sources.add(source);
    }
    return new RefreshState(viewVersion, startMs, sources);
  }

  private static JsonNode required(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("Invalid refresh-state JSON: missing '" + field + "' in " + node);
    }
    return value;
  }
}
