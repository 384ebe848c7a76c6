package io.floe.spark.ingest;

import java.util.Objects;

/**
 * One file of a streaming table's folder, as listed: its fully qualified path, size and modification time. A
 * file is identified by its path; size and time tell whether it changed after it was loaded.
 */
public record SourceFile(String path, long size, long modifiedMs) {

  public SourceFile {
    Objects.requireNonNull(path, "path");
  }
}
