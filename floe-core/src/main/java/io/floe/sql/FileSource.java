package io.floe.sql;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The files a streaming table ingests: {@code read_files('path', format => 'json', key => 'value', ...)}.
 *
 * @param path the folder (or single file) to read, as written; any Hadoop file system URI or a local path
 * @param format {@code json} (JSON lines), {@code csv} (with a header line) or {@code parquet}, lower case
 * @param options the other named arguments, passed to the format's reader
 */
public record FileSource(String path, String format, Map<String, String> options) {

    /** The formats {@code read_files} accepts. */
    public static final Set<String> FORMATS = Set.of("json", "csv", "parquet");

    public FileSource {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(format, "format");
        format = format.toLowerCase(Locale.ROOT);
        options = Map.copyOf(options);
    }
}
