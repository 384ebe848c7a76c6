package io.floe.sql;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The files a streaming table ingests: {@code read_files('path', format => 'json', key => 'value', ...)}.
 *
 * @param path the folder (or single file) to read, as written; any Hadoop file system URI or a local path
 * @param format {@code json} (JSON lines), {@code csv} (with a header line) or {@code parquet}, lower case, as
 *     {@code format =>} or the path's extension names it; empty when neither does, and the files' extensions decide
 * @param options the other named arguments, passed to the format's reader
 */
public record FileSource(String path, Optional<String> format, Map<String, String> options) {

    /** The formats {@code read_files} accepts. */
    public static final Set<String> FORMATS = Set.of("json", "csv", "parquet");

    public FileSource {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(format, "format");
        format = format.map(f -> f.toLowerCase(Locale.ROOT));
        options = Map.copyOf(options);
    }

    /** Compression suffixes Spark's readers see through ({@code orders.csv.gz} is CSV). */
    private static final List<String> COMPRESSION = List.of(".gz", ".bz2", ".deflate", ".zst", ".lz4", ".snappy");

    /**
     * The format a file name's extension names: {@code .json}, {@code .jsonl} and {@code .ndjson} are JSON lines,
     * {@code .csv} CSV and {@code .parquet} Parquet, behind any compression suffix; empty for any other name.
     */
    public static Optional<String> formatOfName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        for (String suffix : COMPRESSION) {
            if (lower.endsWith(suffix)) {
                lower = lower.substring(0, lower.length() - suffix.length());
                break;
            }
        }
        if (lower.endsWith(".csv")) {
            return Optional.of("csv");
        }
        if (lower.endsWith(".parquet")) {
            return Optional.of("parquet");
        }
        if (lower.endsWith(".json") || lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) {
            return Optional.of("json");
        }
        return Optional.empty();
    }

    /** A source whose format is known. */
    public FileSource(String path, String format, Map<String, String> options) {
        this(path, Optional.of(format), options);
    }

    /**
     * This source with a relative local path resolved against {@code base}, so that it names one folder wherever it
     * is read from; a URI ({@code s3a://...}, {@code file:/...}) or an absolute path is kept as written.
     */
    public FileSource resolvedAgainst(java.nio.file.Path base) {
        if (path.contains(":") || java.nio.file.Paths.get(path).isAbsolute()) {
            return this;
        }
        return new FileSource(base.resolve(path).normalize().toString(), format, options);
    }

    /** This source with the format its files were found to have. */
    public FileSource withFormat(String format) {
        return new FileSource(path, format, options);
    }
}
