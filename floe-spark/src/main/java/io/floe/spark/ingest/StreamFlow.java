package io.floe.spark.ingest;

import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A flow of a streaming table fed by tables: a query over one table read with {@code STREAM(source)} whose
 * results the table appends, and the checkpoint of that source it last read. A streaming table's own
 * {@code AS} query is its implicit flow, named after the table; {@code CREATE FLOW} adds others.
 *
 * <p>Flows live in the streaming table's properties, so the table alone says how to refresh it:
 *
 * <table>
 *   <tr><td>{@value #FLOWS}</td><td>the flow names, comma-separated (marks a streaming table fed by tables)</td></tr>
 *   <tr><td>{@code floe.flow.<name>.query}</td><td>the query as written</td></tr>
 *   <tr><td>{@code floe.flow.<name>.by-name}</td><td>{@code true}: columns match by name, else by position</td></tr>
 *   <tr><td>{@code floe.flow.<name>.catalog}, {@code .namespace}</td><td>where the query's names resolve</td></tr>
 *   <tr><td>{@code floe.flow.<name>.checkpoint}</td><td>the source snapshot id the flow last read; absent before
 *   its first run</td></tr>
 * </table>
 *
 * <p>A refresh sets the checkpoints in the same metadata commit that publishes the rows it appends (see
 * {@link CheckpointCommit}), so rows and checkpoint move together or not at all.
 *
 * @param name the flow's name, lower case
 * @param query the query as written
 * @param byName whether its columns match the table's by name (else by position)
 * @param defaultCatalog the catalog unqualified names resolve in
 * @param defaultNamespace the namespace unqualified names resolve in
 * @param checkpoint the source snapshot the flow last read, empty before its first run
 */
public record StreamFlow(
    String name,
    String query,
    boolean byName,
    String defaultCatalog,
    List<String> defaultNamespace,
    Optional<Long> checkpoint) {

  /** Table property listing a streaming table's flows; present on every streaming table fed by tables. */
  public static final String FLOWS = "floe.stream.flows";

  /** Table property (as in Spark Declarative Pipelines): ignore source commits that update or delete rows. */
  public static final String SKIP_CHANGE_COMMITS = "skipChangeCommits";

  private static final String PREFIX = "floe.flow.";

  public StreamFlow {
    Objects.requireNonNull(name, "name");
    name = name.toLowerCase(Locale.ROOT);
    Objects.requireNonNull(query, "query");
    Objects.requireNonNull(defaultCatalog, "defaultCatalog");
    defaultNamespace = List.copyOf(defaultNamespace);
    Objects.requireNonNull(checkpoint, "checkpoint");
    if (name.isEmpty() || name.contains(",")) {
      throw new IllegalArgumentException("Invalid flow name '" + name + "'");
    }
  }

  /** Whether a table's properties mark it as a streaming table fed by tables. */
  public static boolean isTableFed(Map<String, String> properties) {
    return properties.containsKey(FLOWS);
  }

  /** The flows recorded in a table's properties, in their recorded order. */
  public static List<StreamFlow> all(Map<String, String> properties) {
    List<StreamFlow> flows = new ArrayList<>();
    for (String name : names(properties)) {
      String query = properties.get(key(name, "query"));
      if (query == null) {
        throw new IllegalStateException("Flow " + name + " has no " + key(name, "query") + " property");
      }
      String namespace = properties.getOrDefault(key(name, "namespace"), "");
      String checkpoint = properties.get(checkpointKey(name));
      flows.add(
          new StreamFlow(
              name,
              query,
              Boolean.parseBoolean(properties.getOrDefault(key(name, "by-name"), "true")),
              properties.getOrDefault(key(name, "catalog"), ""),
              namespace.isEmpty() ? List.of() : QualifiedName.parse(namespace).parts(),
              checkpoint == null ? Optional.empty() : Optional.of(Long.parseLong(checkpoint))));
    }
    return flows;
  }

  /** The flow names a table's properties list. */
  public static List<String> names(Map<String, String> properties) {
    String list = properties.getOrDefault(FLOWS, "");
    return list.isBlank() ? List.of() : Arrays.asList(list.split(","));
  }

  /** The property holding a flow's checkpoint. */
  static String checkpointKey(String flow) {
    return key(flow, "checkpoint");
  }

  /** Every property a flow can have, for removing it. */
  static List<String> keys(String flow) {
    return List.of(key(flow, "query"), key(flow, "by-name"), key(flow, "catalog"), key(flow, "namespace"), checkpointKey(flow));
  }

  /** The properties defining this flow, its checkpoint excluded. */
  Map<String, String> definitionProperties() {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(key(name, "query"), query);
    properties.put(key(name, "by-name"), Boolean.toString(byName));
    properties.put(key(name, "catalog"), defaultCatalog);
    properties.put(
        key(name, "namespace"), defaultNamespace.isEmpty() ? "" : new QualifiedName(defaultNamespace).toString());
    return properties;
  }

  /** Whether {@code other} defines the same flow (checkpoints aside). */
  boolean sameDefinition(StreamFlow other) {
    return definitionProperties().equals(other.definitionProperties());
  }

  StreamFlow withCheckpoint(Optional<Long> snapshotId) {
    return new StreamFlow(name, query, byName, defaultCatalog, defaultNamespace, snapshotId);
  }

  private static String key(String flow, String field) {
    return PREFIX + flow + "." + field;
  }

  /**
   * The columns of a table fed by {@code flows} once they are defined: {@code table}'s, then the new
   * ones each flow by name produces (all of the first flow's when the table has none yet), as
   * {@code produced} (by flow name) gives them.
   */
  public static org.apache.spark.sql.types.StructType tableColumns(
      org.apache.spark.sql.types.StructType table, List<StreamFlow> flows,
      Map<String, org.apache.spark.sql.types.StructType> produced) {
    List<org.apache.spark.sql.types.StructField> fields = new ArrayList<>(Arrays.asList(table.fields()));
    java.util.Set<String> names = new java.util.HashSet<>();
    fields.forEach(f -> names.add(f.name().toLowerCase(Locale.ROOT)));
    for (StreamFlow flow : flows) {
      if (!fields.isEmpty() && !flow.byName()) {
        continue;
      }
      for (org.apache.spark.sql.types.StructField field : produced.get(flow.name()).fields()) {
        if (names.add(field.name().toLowerCase(Locale.ROOT))) {
          fields.add(field);
        }
      }
    }
    return new org.apache.spark.sql.types.StructType(fields.toArray(new org.apache.spark.sql.types.StructField[0]));
  }

  /**
   * Why this flow, inserting by position and producing {@code produced}, does not fit a table whose
   * columns are {@code table} and, once its flows are defined, {@code columns} ({@link
   * #tableColumns}); empty when it fits or inserts by name. The text follows the flow's name.
   */
  public Optional<String> columnCountProblem(
      org.apache.spark.sql.types.StructType produced, org.apache.spark.sql.types.StructType table,
      org.apache.spark.sql.types.StructType columns) {
    if (byName || produced.fields().length == columns.fields().length) {
      return Optional.empty();
    }
    boolean widened = columns.fields().length > table.fields().length && table.fields().length > 0;
    return Optional.of("produces " + produced.fields().length + " columns " + Arrays.toString(produced.fieldNames())
        + " but the table " + (widened ? "would have, with the columns its flows by name add, " : "has ")
        + columns.fields().length + " " + Arrays.toString(columns.fieldNames())
        + "; match them or use INSERT INTO ... BY NAME");
  }
}
