package io.floe.refresh;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.mv.OnViolation;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes the {@code floe.expectations} JSON of a storage snapshot summary:
 * {@code [{"name": "valid_amount", "on-violation": "DROP_ROW", "passed": 470, "failed": 7}]}.
 */
public final class ExpectationResultParser {
  /** Snapshot summary key of a refresh's expectation counts. */
  public static final String SUMMARY_KEY = "floe.expectations";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ExpectationResultParser() {}

  public static String toJson(List<ExpectationResult> results) {
    ArrayNode root = MAPPER.createArrayNode();
    for (ExpectationResult result : results) {
      ObjectNode node = root.addObject();
      node.put("name", result.name());
      node.put("on-violation", result.onViolation().name());
      node.put("passed", result.passed());
      node.put("failed", result.failed());
    }
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write expectation results JSON", e);
    }
  }

  public static List<ExpectationResult> fromJson(String json) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid expectation results JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isArray()) {
      throw new IllegalArgumentException("Invalid expectation results JSON: not an array: " + json);
    }
    List<ExpectationResult> results = new ArrayList<>();
    for (JsonNode node : root) {
      results.add(
          new ExpectationResult(
              node.path("name").asText(),
              OnViolation.valueOf(node.path("on-violation").asText()),
              node.path("passed").asLong(),
              node.path("failed").asLong()));
    }
    return results;
  }
}
