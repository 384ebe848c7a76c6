package io.floe.pipeline;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One SQL statement of a pipeline file.
 *
 * @param file the file, relative to the project folder
 * @param line the line the statement starts on (1-based)
 * @param sql the statement's text, without its {@code ;}
 */
public record PipelineStatement(Path file, int line, String sql) {

  public PipelineStatement {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(sql, "sql");
  }

  /** Where the statement is, as {@code file:line}. */
  public String location() {
    return file.toString().replace('\\', '/') + ":" + line;
  }
}
