package io.floe.cli.output;

import java.util.List;
import java.util.Optional;

/**
 * A statement's result as text, ready for {@link ResultFormatter}: the columns and rows with every
 * cell as Spark's {@code show()} prints it, or, for {@link OutputFormat#JSON}, Spark's JSON line
 * per row.
 */
public record QueryResult(
    List<String> columns,
    List<List<String>> rows,
    List<String> jsonLines,
    Optional<String> scanned,
    List<String> rewriteReport) {

  public QueryResult {
    columns = List.copyOf(columns);
    rows = rows.stream().map(row -> java.util.Collections.unmodifiableList(new java.util.ArrayList<>(row))).toList();
    jsonLines = List.copyOf(jsonLines);
    java.util.Objects.requireNonNull(scanned, "scanned");
    rewriteReport = List.copyOf(rewriteReport);
  }

  /** A result without scan statistics or rewrite report. */
  public QueryResult(List<String> columns, List<List<String>> rows, List<String> jsonLines) {
    this(columns, rows, jsonLines, Optional.empty(), List.of());
  }

  /** How many rows the statement returned. */
  public int rowCount() {
    return jsonLines.isEmpty() ? rows.size() : jsonLines.size();
  }
}
