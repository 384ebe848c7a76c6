package io.floe.spark.ingest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The files a streaming table has loaded. Each ingestion commit carries the files it loaded in its snapshot
 * summary ({@value StreamingTable#FILES_SUMMARY_KEY}: {@code [["file:/in/a.json", 1024, 1764547200000], ...]}),
 * so the data and the record of having loaded it are published together or not at all. The loaded set is the
 * union over main's history; when old snapshots were expired, the files named by the rows' own
 * {@value StreamingTable#SOURCE_FILE} column complete it.
 */
final class FileLog {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private FileLog() {}

  static String toJson(List<SourceFile> files) {
    ArrayNode root = MAPPER.createArrayNode();
    for (SourceFile file : files) {
      root.addArray().add(file.path()).add(file.size()).add(file.modifiedMs());
    }
    try {
      return MAPPER.writeValueAsString(root);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write the ingested file log", e);
    }
  }

  static List<SourceFile> fromJson(String json) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("Invalid " + StreamingTable.FILES_SUMMARY_KEY + " JSON: " + e.getOriginalMessage(), e);
    }
    List<SourceFile> files = new ArrayList<>();
    for (JsonNode file : root) {
      files.add(new SourceFile(file.get(0).asText(), file.get(1).asLong(), file.get(2).asLong()));
    }
    return files;
  }

  /** The files loaded by main's current snapshot and its ancestors, by normalized path. */
  static Map<String, SourceFile> loaded(SparkSession spark, Table table, String sparkName) {
    Map<String, SourceFile> loaded = new LinkedHashMap<>();
    Snapshot snapshot = table.currentSnapshot();
    boolean complete = true;
    while (snapshot != null) {
      String json = snapshot.summary().get(StreamingTable.FILES_SUMMARY_KEY);
      if (json != null) {
        for (SourceFile file : fromJson(json)) {
          loaded.putIfAbsent(normalize(file.path()), file);
        }
      }
      Long parent = snapshot.parentId();
      snapshot = parent == null ? null : table.snapshot(parent);
      if (parent != null && snapshot == null) {
        complete = false;
      }
    }
    if (!complete) {
      for (Row row : spark.sql("SELECT DISTINCT " + StreamingTable.SOURCE_FILE + " FROM " + sparkName).collectAsList()) {
        if (!row.isNullAt(0)) {
          loaded.putIfAbsent(normalize(row.getString(0)), new SourceFile(row.getString(0), -1, -1));
        }
      }
    }
    return loaded;
  }

  /**
   * One spelling per file: {@code file:///a} and {@code file:/a} are the same file. The spelling is
   * Hadoop's path text, not its URI: {@code file:/in/my file.json}, as listings give it, so that
   * normalizing twice changes nothing (a URI's {@code %20} would become {@code %2520}).
   */
  static String normalize(String path) {
    return new Path(new Path(path).toUri().normalize()).toString().replaceFirst("^file:///", "file:/");
  }
}
