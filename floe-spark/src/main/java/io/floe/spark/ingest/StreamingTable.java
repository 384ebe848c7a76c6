package io.floe.spark.ingest;

import io.floe.sql.FileSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;

/**
 * The names a streaming table keeps on disk: the table properties that say which files it ingests, the snapshot
 * summary key of its file log and the columns every Bronze row carries besides its own fields.
 */
public final class StreamingTable {
  /** Table property: the folder the table ingests. */
  public static final String SOURCE_PATH = "floe.ingest.path";

  /**
   * Table property: the files' format, {@code json}, {@code csv} or {@code parquet}. Absent while a table whose
   * {@code read_files} names no format has loaded no file: the first files' extensions decide it.
   */
  public static final String SOURCE_FORMAT = "floe.ingest.format";

  /** Table property prefix of the reader options given to {@code read_files}. */
  public static final String OPTION_PREFIX = "floe.ingest.option.";

  /** Snapshot summary key: the files an ingestion commit loaded, JSON. */
  public static final String FILES_SUMMARY_KEY = "floe.ingest.files";

  /** The file a row came from. */
  public static final String SOURCE_FILE = "_source_file";

  /** The row's line in that file (1-based; for Parquet its row number, 1-based). */
  public static final String SOURCE_LINE = "_source_line";

  /** When the run that loaded the row started. */
  public static final String INGESTED_AT = "_ingested_at";

  /** The raw record when it did not parse or a value did not fit its column; NULL otherwise. */
  public static final String RESCUED_DATA = "_rescued_data";

  /** The columns Floe adds to every streaming table, in order. */
  public static final List<String> METADATA_COLUMNS = List.of(SOURCE_FILE, SOURCE_LINE, INGESTED_AT, RESCUED_DATA);

  private StreamingTable() {}

  /** Whether an Iceberg table is a streaming table. */
  public static boolean isStreamingTable(Table table) {
    return table.properties().containsKey(SOURCE_PATH);
  }

  /** The table properties recording {@code source}. */
  static Map<String, String> properties(FileSource source) {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(SOURCE_PATH, source.path());
    source.format().ifPresent(format -> properties.put(SOURCE_FORMAT, format));
    source.options().forEach((key, value) -> properties.put(OPTION_PREFIX + key, value));
    return properties;
  }

  /** The source a streaming table records. */
  static FileSource source(Table table) {
    Map<String, String> options = new LinkedHashMap<>();
    table.properties().forEach((key, value) -> {
      if (key.startsWith(OPTION_PREFIX)) {
        options.put(key.substring(OPTION_PREFIX.length()), value);
      }
    });
    return new FileSource(
        table.properties().get(SOURCE_PATH), java.util.Optional.ofNullable(table.properties().get(SOURCE_FORMAT)), options);
  }
}
