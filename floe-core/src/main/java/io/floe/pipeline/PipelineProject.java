package io.floe.pipeline;

import io.floe.FloeException;
import io.floe.sql.SqlScript;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * A pipeline project as found on disk: its settings and the statements of its SQL files, in file
 * then statement order. The order carries no meaning for datasets (a dataset may read one defined
 * in a later file); it matters only for {@code SET} and {@code USE}, which apply to the statements
 * after them in the same file.
 */
public final class PipelineProject {
  private final PipelineSpec spec;
  private final List<Path> files;
  private final List<PipelineStatement> statements;

  private PipelineProject(PipelineSpec spec, List<Path> files, List<PipelineStatement> statements) {
    this.spec = spec;
    this.files = List.copyOf(files);
    this.statements = List.copyOf(statements);
  }

  /** Loads the project in {@code folder} (or the one whose settings file {@code folder} is). */
  public static PipelineProject load(Path folder) {
    Objects.requireNonNull(folder, "folder");
    PipelineSpec spec = PipelineSpecParser.read(PipelineSpecParser.findSpecFile(folder));
    List<Path> files = sourceFiles(spec);
    if (files.isEmpty()) {
      throw new FloeException(
          "Pipeline " + spec.name() + " has no SQL files"
              + (spec.includes().isEmpty() ? " under " + spec.root() : " matching " + String.join(", ", spec.includes())));
    }
    List<PipelineStatement> statements = new ArrayList<>();
    for (Path file : files) {
      statements.addAll(statementsOf(spec.root(), file));
    }
    return new PipelineProject(spec, files, statements);
  }

  public PipelineSpec spec() {
    return spec;
  }

  /** The project's SQL files, relative to its folder, sorted. */
  public List<Path> files() {
    return files;
  }

  public List<PipelineStatement> statements() {
    return statements;
  }

  private static List<Path> sourceFiles(PipelineSpec spec) {
    Path root = spec.root();
    List<PathMatcher> matchers =
        (spec.includes().isEmpty() ? List.of("**") : spec.includes()).stream()
            .map(glob -> FileSystems.getDefault().getPathMatcher("glob:" + glob))
            .toList();
    try (Stream<Path> walk = Files.walk(root)) {
      List<Path> matched =
          walk.filter(Files::isRegularFile)
              .map(root::relativize)
              .filter(relative -> !hidden(relative))
              .filter(relative -> matchers.stream().anyMatch(m -> m.matches(relative)))
              .sorted()
              .toList();
      List<Path> sql = new ArrayList<>();
      for (Path file : matched) {
        String name = file.getFileName().toString();
        if (name.endsWith(".sql")) {
          sql.add(file);
        } else if (name.endsWith(".py")) {
          throw new FloeException(
              "Pipeline " + spec.name() + ": " + file + " is a Python definition file; Floe runs SQL pipeline files only");
        }
      }
      return sql;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the files of pipeline " + spec.name() + " in " + root, e);
    }
  }

  private static boolean hidden(Path relative) {
    for (Path part : relative) {
      if (part.toString().startsWith(".")) {
        return true;
      }
    }
    return false;
  }

  private static List<PipelineStatement> statementsOf(Path root, Path file) {
    String text;
    try {
      text = Files.readString(root.resolve(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new FloeException("Cannot read pipeline file " + file + ": " + e.getMessage(), e);
    }
    List<PipelineStatement> statements = new ArrayList<>();
    int searchFrom = 0;
    for (String sql : SqlScript.split(text)) {
      int at = text.indexOf(sql, searchFrom);
      int line = 1 + (int) text.substring(0, Math.max(at, 0)).chars().filter(c -> c == '\n').count();
      statements.add(new PipelineStatement(file, line, sql));
      if (at >= 0) {
        searchFrom = at + sql.length();
      }
    }
    return statements;
  }
}
