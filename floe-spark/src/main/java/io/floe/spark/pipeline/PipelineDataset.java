package io.floe.spark.pipeline;

import io.floe.pipeline.PipelineStatement;
import io.floe.sql.CreateMaterializedView;
import java.util.List;
import java.util.Objects;

/**
 * A dataset a pipeline defines: a materialized view, with where it was defined and what it reads.
 *
 * @param name the fully qualified name ({@code catalog.namespace.name})
 * @param statement the defining statement
 * @param definition the parsed statement, with temporary views of the pipeline inlined into its query
 * @param defaultCatalog the catalog unqualified names in the definition resolve in
 * @param defaultNamespace the namespace unqualified names in the definition resolve in
 * @param sources the fully qualified names it reads
 * @param definitionHash a digest of everything that defines it; a change means a new definition
 */
public record PipelineDataset(
    String name,
    PipelineStatement statement,
    CreateMaterializedView definition,
    String defaultCatalog,
    List<String> defaultNamespace,
    List<String> sources,
    String definitionHash) {

  public PipelineDataset {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(statement, "statement");
    Objects.requireNonNull(definition, "definition");
    defaultNamespace = List.copyOf(defaultNamespace);
    sources = List.copyOf(sources);
  }
}
