package io.floe.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A possibly multi-part name such as {@code lake.urbanride.mv_trips} ({@code catalog.namespace.name}).
 *
 * @param parts the unquoted parts, outermost first: backticks removed and {@code ``} inside backticks turned
 *     into a single backtick; never empty, and no part is empty
 */
public record QualifiedName(List<String> parts) {

    private static final Pattern PLAIN_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public QualifiedName {
        parts = List.copyOf(Objects.requireNonNull(parts, "parts"));
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("A qualified name needs at least one part");
        }
        if (parts.stream().anyMatch(String::isEmpty)) {
            throw new IllegalArgumentException("A qualified name cannot have an empty part: " + parts);
        }
    }

    /** A name from its unquoted parts, outermost first. */
    public static QualifiedName of(String... parts) {
        return new QualifiedName(List.of(parts));
    }

    /**
     * Reads a name written by {@link #toString}: parts separated by {@code .}, a part in backticks
     * taken literally (a dot inside it included, {@code ``} standing for one backtick). An unquoted
     * part is taken as written up to the next {@code .}, so a plain {@code namespace.name} written
     * before names were quoted reads as it always did.
     *
     * @throws IllegalArgumentException when the text is not such a name
     */
    public static QualifiedName parse(String text) {
        List<QualifiedName> names = parseList(text, '.');
        return names.get(0);
    }

    /**
     * Reads names written by {@link #toString} and joined by {@code ,}: a comma inside backticks
     * belongs to its part.
     *
     * @throws IllegalArgumentException when the text is not such a list
     */
    public static List<QualifiedName> parseList(String text) {
        return parseList(text, ',');
    }

    /** The names in {@code text}, separated by {@code separator}, or one name when it is {@code .}. */
    private static List<QualifiedName> parseList(String text, char separator) {
        Objects.requireNonNull(text, "text");
        List<QualifiedName> names = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        int i = 0;
        while (true) {
            StringBuilder part = new StringBuilder();
            if (i < text.length() && text.charAt(i) == '`') {
                i++;
                while (true) {
                    if (i >= text.length()) {
                        throw new IllegalArgumentException("Unterminated `quoted` part in name: " + text);
                    }
                    char c = text.charAt(i++);
                    if (c == '`') {
                        if (i < text.length() && text.charAt(i) == '`') {
                            i++;
                        } else {
                            break;
                        }
                    }
                    part.append(c);
                }
                if (i < text.length() && text.charAt(i) != '.' && text.charAt(i) != separator) {
                    throw new IllegalArgumentException("Expected '.' after a `quoted` part in name: " + text);
                }
            } else {
                while (i < text.length() && text.charAt(i) != '.' && text.charAt(i) != separator) {
                    part.append(text.charAt(i++));
                }
            }
            if (part.length() == 0) {
                throw new IllegalArgumentException("Empty part in name: " + text);
            }
            parts.add(part.toString());
            if (i < text.length() && text.charAt(i) == '.') {
                i++;
                continue;
            }
            names.add(new QualifiedName(parts));
            parts = new ArrayList<>();
            if (i >= text.length()) {
                return names;
            }
            i++; // the separator
        }
    }

    /** The last part: the object's own name. */
    public String name() {
        return parts.get(parts.size() - 1);
    }

    /** All parts but the last (catalog and namespace levels); empty for a one-part name. */
    public List<String> namespace() {
        return parts.subList(0, parts.size() - 1);
    }

    /** The name as SQL: parts joined by {@code .}, each backtick-quoted unless it is a plain identifier. */
    @Override
    public String toString() {
        StringBuilder sql = new StringBuilder();
        for (String part : parts) {
            if (sql.length() > 0) {
                sql.append('.');
            }
            if (PLAIN_IDENTIFIER.matcher(part).matches()) {
                sql.append(part);
            } else {
                sql.append('`').append(part.replace("`", "``")).append('`');
            }
        }
        return sql.toString();
    }
}
