package io.floe.mv;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.sql.Expectation;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes a materialized view's {@code floe.expectations} property:
 * {@code [{"name": "valid_amount", "expression": "amount IS NOT NULL", "on-violation": "DROP_ROW"}]}.
 */
public final class ExpectationsParser {
  /** View property holding the view's expectations. */
  public static final String PROPERTY = "floe.expectations";

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ExpectationsParser() {}

  public static String toJson(List<Expectation> expectations) {
    ArrayNode root = MAPPER.createArrayNode();
    for (Expectation expectation : expectations) {
      ObjectNode node = root.addObject();
      node.put("name", expectation.name());
      node.put("expression", expectation.expression());
      node.put("on-violation", expectation.onViolation().name());
    }
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write expectations JSON", e);
    }
  }

  public static List<Expectation> fromJson(String json) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid " + PROPERTY + " JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isArray()) {
      throw new IllegalArgumentException("Invalid " + PROPERTY + " JSON: not an array: " + json);
    }
    List<Expectation> expectations = new ArrayList<>();
    for (JsonNode node : root) {
      expectations.add(
          new Expectation(
              node.path("name").asText(),
              node.path("expression").asText(),
              OnViolation.valueOf(node.path("on-violation").asText())));
    }
    return expectations;
  }
}
