package io.floe.spark.pipeline;

import io.floe.pipeline.PipelineStatement;
import io.floe.sql.CreateMaterializedView;
import io.floe.sql.CreateStreamingTable;
import io.floe.sql.CreateTableFedStreamingTable;
import io.floe.sql.FloeStatement;
import java.util.List;
import java.util.Objects;

/**
 * A dataset a pipeline defines, with where it was defined and what it reads.
 *
 * @param name the fully qualified name ({@code catalog.namespace.name})
 * @param kind what the dataset is
 * @param statement the defining statement
 * @param definition the parsed statement: for a materialized view with the pipeline's temporary
 *     views inlined into its query, for a streaming table over files with its folder resolved
 *     against the project folder, for a streaming table fed by tables as written
 * @param defaultCatalog the catalog unqualified names in the definition resolve in
 * @param defaultNamespace the namespace unqualified names in the definition resolve in
 * @param sources the fully qualified names it reads (none for a streaming table over files; for one
 *     fed by tables, what its own query and the flows into it read)
 * @param definitionHash a digest of everything that defines it; a change means a new definition
 */
public record PipelineDataset(
    String name,
    Kind kind,
    PipelineStatement statement,
    FloeStatement definition,
    String defaultCatalog,
    List<String> defaultNamespace,
    List<String> sources,
    String definitionHash) {

  /** What a pipeline dataset is. */
  public enum Kind {
    MATERIALIZED_VIEW,
    /** A streaming table that loads files ({@code read_files}). */
    STREAMING_TABLE,
    /** A streaming table fed by tables: its own {@code STREAM(...)} query and the flows into it. */
    TABLE_FED_STREAMING_TABLE
  }

  public PipelineDataset {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(statement, "statement");
    Objects.requireNonNull(definition, "definition");
    defaultNamespace = List.copyOf(defaultNamespace);
    sources = List.copyOf(sources);
  }

  /** The materialized view's definition; fails for a streaming table. */
  public CreateMaterializedView materializedView() {
    if (definition instanceof CreateMaterializedView create) {
      return create;
    }
    throw new IllegalStateException(name + " is a " + kind + ", not a materialized view");
  }

  /** The definition of a streaming table fed by tables; fails for other datasets. */
  public CreateTableFedStreamingTable tableFedStreamingTable() {
    if (definition instanceof CreateTableFedStreamingTable create) {
      return create;
    }
    throw new IllegalStateException(name + " is a " + kind + ", not a streaming table fed by tables");
  }

  /** The streaming table's definition; fails for a materialized view. */
  public CreateStreamingTable streamingTable() {
    if (definition instanceof CreateStreamingTable create) {
      return create;
    }
    throw new IllegalStateException(name + " is a " + kind + ", not a streaming table");
  }
}
