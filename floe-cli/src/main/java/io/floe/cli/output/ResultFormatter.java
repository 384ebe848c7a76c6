package io.floe.cli.output;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Renders a query result whose cells are already text into one of the {@link OutputFormat}s.
 *
 * <p>Every row must have exactly one cell per column; a {@code null} cell is SQL NULL. The result
 * is the whole output, each line ending in {@code "\n"}, ready to print without a further newline.
 */
public final class ResultFormatter {

    /** Spark's {@code show()} never makes a column narrower than this. */
    private static final int MINIMUM_COLUMN_WIDTH = 3;

    private static final JsonFactory JSON = new ObjectMapper().getFactory();

    private ResultFormatter() {}

    /**
     * Formats {@code rows} under {@code columns}.
     *
     * <ul>
     *   <li>{@link OutputFormat#TABLE}: the layout of Spark's {@code Dataset.show(n, false)}: border,
     *       header, border, rows, border; cells left-aligned and padded to the column's display
     *       width (at least 3; East Asian wide characters count 2); null prints as {@code NULL};
     *       newlines, tabs and other meta characters print escaped ({@code \n}) as Spark does, so
     *       a cell never breaks the grid. No columns gives an empty string.
     *   <li>{@link OutputFormat#CSV}: header line, then one line per row; a field is quoted when
     *       it contains a comma, quote, CR or LF, with quotes doubled. Null is an empty field and
     *       the empty string is {@code ""}, so the two stay distinguishable.
     *   <li>{@link OutputFormat#JSON}: JSON Lines, one object per row with keys in column order and
     *       every value a JSON string, or JSON {@code null}.
     * </ul>
     *
     * @throws IllegalArgumentException if a row's size differs from the number of columns
     */
    public static String format(List<String> columns, List<List<String>> rows, OutputFormat format) {
        Objects.requireNonNull(columns, "columns");
        Objects.requireNonNull(rows, "rows");
        Objects.requireNonNull(format, "format");
        for (int r = 0; r < rows.size(); r++) {
            List<String> row = Objects.requireNonNull(rows.get(r), "row " + r);
            if (row.size() != columns.size()) {
                throw new IllegalArgumentException(
                        "Row " + r + " has " + row.size() + " cells but there are " + columns.size() + " columns");
            }
        }
        switch (format) {
            case TABLE:
                return table(columns, rows);
            case CSV:
                return csv(columns, rows);
            case JSON:
                return jsonLines(columns, rows);
            default:
                throw new AssertionError(format);
        }
    }

    /**
     * Formats an elapsed time for a status line: below one second as whole milliseconds
     * ({@code 12 ms}), otherwise as seconds with two decimals ({@code 1.23 s}).
     *
     * @throws IllegalArgumentException if {@code millis} is negative
     */
    public static String formatDuration(long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("Negative duration: " + millis + " ms");
        }
        if (millis < 1000) {
            return millis + " ms";
        }
        // Locale.ROOT: the decimal separator must not follow the user's locale.
        return String.format(Locale.ROOT, "%.2f s", millis / 1000.0);
    }

    private static String table(List<String> columns, List<List<String>> rows) {
        if (columns.isEmpty()) {
            return "";
        }
        int columnCount = columns.size();
        String[] header = new String[columnCount];
        int[] widths = new int[columnCount];
        for (int c = 0; c < columnCount; c++) {
            header[c] = tableCell(columns.get(c));
            widths[c] = Math.max(MINIMUM_COLUMN_WIDTH, DisplayWidth.of(header[c]));
        }
        String[][] body = new String[rows.size()][columnCount];
        for (int r = 0; r < rows.size(); r++) {
            for (int c = 0; c < columnCount; c++) {
                body[r][c] = tableCell(rows.get(r).get(c));
                widths[c] = Math.max(widths[c], DisplayWidth.of(body[r][c]));
            }
        }

        StringBuilder border = new StringBuilder("+");
        for (int width : widths) {
            border.append("-".repeat(width)).append('+');
        }
        border.append('\n');

        StringBuilder out = new StringBuilder();
        out.append(border);
        appendTableLine(out, header, widths);
        out.append(border);
        for (String[] line : body) {
            appendTableLine(out, line, widths);
        }
        out.append(border);
        return out.toString();
    }

    private static void appendTableLine(StringBuilder out, String[] cells, int[] widths) {
        out.append('|');
        for (int c = 0; c < cells.length; c++) {
            out.append(cells[c]).append(" ".repeat(widths[c] - DisplayWidth.of(cells[c]))).append('|');
        }
        out.append('\n');
    }

    /** The text Spark's {@code show()} prints for a cell or column name. */
    private static String tableCell(String value) {
        if (value == null) {
            return "NULL";
        }
        // Same replacements as Spark's SchemaUtils.escapeMetaCharacters.
        return value.replace("\n", "\\n")
                .replace("\r", "\\r")
                .replace("\t", "\\t")
                .replace("\f", "\\f")
                .replace("\b", "\\b")
                .replace("\u000B", "\\v")
                .replace("\u0007", "\\a");
    }

    private static String csv(List<String> columns, List<List<String>> rows) {
        StringBuilder out = new StringBuilder();
        appendCsvLine(out, columns);
        for (List<String> row : rows) {
            appendCsvLine(out, row);
        }
        return out.toString();
    }

    private static void appendCsvLine(StringBuilder out, List<String> fields) {
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            String field = fields.get(i);
            if (field == null) {
                continue;
            }
            if (field.isEmpty() || needsQuotes(field)) {
                out.append('"').append(field.replace("\"", "\"\"")).append('"');
            } else {
                out.append(field);
            }
        }
        out.append('\n');
    }

    private static boolean needsQuotes(String field) {
        for (int i = 0; i < field.length(); i++) {
            char ch = field.charAt(i);
            if (ch == ',' || ch == '"' || ch == '\r' || ch == '\n') {
                return true;
            }
        }
        return false;
    }

    private static String jsonLines(List<String> columns, List<List<String>> rows) {
        StringWriter out = new StringWriter();
        try {
            for (List<String> row : rows) {
                // A generator per row: each object must end up on its own line.
                try (JsonGenerator json = JSON.createGenerator(out)) {
                    json.writeStartObject();
                    for (int c = 0; c < columns.size(); c++) {
                        String value = row.get(c);
                        if (value == null) {
                            json.writeNullField(columns.get(c));
                        } else {
                            json.writeStringField(columns.get(c), value);
                        }
                    }
                    json.writeEndObject();
                }
                out.write('\n');
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Writing to a StringWriter failed", e);
        }
        return out.toString();
    }
}
