package io.floe.spark.ingest;

import io.floe.sql.TypedColumn;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What defines a streaming table fed by tables: its declared columns (empty: the flows' columns), comment,
 * table properties and flows (its own query, if it has one, among them under the table's name).
 */
public record StreamingTableDefinition(
    List<TypedColumn> columns, Optional<String> comment, Map<String, String> tableProperties, List<StreamFlow> flows) {

  public StreamingTableDefinition {
    columns = List.copyOf(columns);
    Objects.requireNonNull(comment, "comment");
    tableProperties = Collections.unmodifiableMap(new LinkedHashMap<>(tableProperties));
    flows = List.copyOf(flows);
  }
}
