package io.floe.pipeline;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A pipeline project's settings, read from its {@code floe.yml} or a Spark Declarative Pipelines
 * {@code spark-pipeline.yml}.
 *
 * @param name the pipeline's name; datasets it creates carry it
 * @param root the project folder; globs and relative paths start there
 * @param specFile the file the settings came from
 * @param catalog the catalog unqualified names resolve in, when set
 * @param namespace the namespace unqualified names resolve in, when set
 * @param includes globs, relative to {@code root}, of the files holding the pipeline's statements
 * @param configuration session settings applied while the pipeline runs
 */
public record PipelineSpec(
    String name,
    Path root,
    Path specFile,
    Optional<String> catalog,
    Optional<String> namespace,
    List<String> includes,
    Map<String, String> configuration) {

  public PipelineSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(specFile, "specFile");
    Objects.requireNonNull(catalog, "catalog");
    Objects.requireNonNull(namespace, "namespace");
    includes = List.copyOf(includes);
    configuration = Map.copyOf(configuration);
  }
}
