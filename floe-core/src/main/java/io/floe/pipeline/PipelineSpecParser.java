package io.floe.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.floe.ErrorMessages;
import io.floe.FloeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a pipeline's settings file. Both Floe's {@code floe.yml} and Spark Declarative Pipelines'
 * {@code spark-pipeline.yml} use the same keys: {@code name}, {@code catalog}, {@code database}
 * (or {@code schema}, or {@code namespace}), {@code libraries} (a list of {@code glob: {include: ...}}
 * entries or plain glob strings), {@code configuration} (a map of session settings) and
 * {@code storage} (accepted and unused: Floe keeps its state in the tables it writes).
 */
public final class PipelineSpecParser {
  /** The settings file names a project folder is searched for, in this order. */
  public static final List<String> SPEC_FILES =
      List.of("floe.yml", "floe.yaml", "spark-pipeline.yml", "spark-pipeline.yaml");

  private static final Set<String> KEYS =
      Set.of("name", "catalog", "database", "schema", "namespace", "libraries", "configuration", "storage");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private PipelineSpecParser() {}

  /** Finds the settings file in {@code folder}. */
  public static Path findSpecFile(Path folder) {
    if (Files.isRegularFile(folder)) {
      return folder;
    }
    if (!Files.isDirectory(folder)) {
      throw new FloeException("Pipeline folder " + folder + " does not exist");
    }
    for (String candidate : SPEC_FILES) {
      Path file = folder.resolve(candidate);
      if (Files.isRegularFile(file)) {
        return file;
      }
    }
    throw new FloeException(
        "Pipeline folder " + folder + " has no settings file; create " + String.join(" or ", SPEC_FILES.subList(0, 3)));
  }

  /** Reads the settings in {@code specFile}. */
  public static PipelineSpec read(Path specFile) {
    JsonNode root;
    try {
      root = YAML.readTree(specFile.toFile());
    } catch (IOException e) {
      throw new FloeException("Cannot read pipeline settings " + specFile + ": " + ErrorMessages.firstLine(e.getMessage()), e);
    }
    if (root == null || !root.isObject()) {
      throw new FloeException("Pipeline settings " + specFile + " must be a YAML mapping with at least a name");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!KEYS.contains(key)) {
        throw new FloeException(
            "Pipeline settings " + specFile + ": unknown key '" + key + "'; known keys are " + String.join(", ", KEYS.stream().sorted().toList()));
      }
    }
    String name = text(root, "name", specFile).orElseThrow(
        () -> new FloeException("Pipeline settings " + specFile + " must name the pipeline (name: ...)"));
    Optional<String> namespace = text(root, "namespace", specFile)
        .or(() -> text(root, "database", specFile))
        .or(() -> text(root, "schema", specFile));
    Path folder = specFile.toAbsolutePath().getParent();
    return new PipelineSpec(
        name,
        folder,
        specFile,
        text(root, "catalog", specFile),
        namespace,
        includes(root.get("libraries"), specFile),
        configuration(root.get("configuration"), specFile));
  }

  private static Optional<String> text(JsonNode root, String key, Path specFile) {
    JsonNode node = root.get(key);
    if (node == null || node.isNull()) {
      return Optional.empty();
    }
    if (!node.isValueNode() || node.asText().isBlank()) {
      throw new FloeException("Pipeline settings " + specFile + ": '" + key + "' must be a non-empty text");
    }
    return Optional.of(node.asText().trim());
  }

  private static List<String> includes(JsonNode libraries, Path specFile) {
    List<String> globs = new ArrayList<>();
    if (libraries == null || libraries.isNull()) {
      return globs;
    }
    if (!libraries.isArray()) {
      throw new FloeException("Pipeline settings " + specFile + ": 'libraries' must be a list of globs");
    }
    for (JsonNode library : libraries) {
      if (library.isTextual()) {
        globs.add(library.asText());
      } else if (library.isObject() && library.has("glob") && library.get("glob").has("include")) {
        globs.add(library.get("glob").get("include").asText());
      } else if (library.isObject() && library.has("file") && library.get("file").has("path")) {
        globs.add(library.get("file").get("path").asText());
      } else {
        throw new FloeException(
            "Pipeline settings " + specFile + ": each 'libraries' entry must be a glob text or 'glob: {include: PATTERN}', not " + library);
      }
    }
    return globs;
  }

  private static Map<String, String> configuration(JsonNode node, Path specFile) {
    Map<String, String> configuration = new LinkedHashMap<>();
    if (node == null || node.isNull()) {
      return configuration;
    }
    if (!node.isObject()) {
      throw new FloeException("Pipeline settings " + specFile + ": 'configuration' must be a mapping of settings");
    }
    node.fields().forEachRemaining(e -> {
      if (!e.getValue().isValueNode()) {
        throw new FloeException(
            "Pipeline settings " + specFile + ": configuration '" + e.getKey() + "' must be a single value");
      }
      configuration.put(e.getKey(), e.getValue().asText());
    });
    return configuration;
  }
}
