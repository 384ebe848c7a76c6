package io.floe.sql;

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
