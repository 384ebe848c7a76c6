package io.floe.cli.output;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How the CLI prints a query result: an aligned text table like Spark's {@code show()}, RFC 4180
 * CSV, or JSON Lines. Use {@link #parse(String)} to read the value of a command-line option.
 */
public enum OutputFormat {
    /** Spark {@code Dataset.show(n, false)} layout. */
    TABLE,
    /** RFC 4180 CSV with a header line. */
    CSV,
    /** JSON Lines, one object per row. */
    JSON;

    /**
     * Reads a format name, ignoring case and surrounding blanks.
     *
     * @throws IllegalArgumentException if {@code text} is null or names no format; the message
     *     lists the valid names so it can be shown to the user as is
     */
    public static OutputFormat parse(String text) {
        if (text != null) {
            String name = text.trim().toUpperCase(Locale.ROOT);
            for (OutputFormat format : values()) {
                if (format.name().equals(name)) {
                    return format;
                }
            }
        }
        throw new IllegalArgumentException(
                "Unknown output format '" + text + "'; expected one of: " + validNames());
    }

    private static String validNames() {
        return Arrays.stream(values())
                .map(format -> format.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.joining(", "));
    }
}
