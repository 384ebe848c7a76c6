package io.floe.sql;

import io.floe.mv.RefreshPolicy;
import io.floe.schedule.Schedule;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code CREATE [OR REPLACE] [MANAGED] MATERIALIZED VIEW [IF NOT EXISTS] name [(columns and expectations)]
 * [COMMENT ...] [PARTITIONED BY (...)] [TBLPROPERTIES (...)] [SCHEDULE REFRESH ...] [REFRESH POLICY ...]
 * AS query [WITH [NO] DATA]}.
 *
 * @param name the view's name as written (not yet resolved against a current catalog or namespace)
 * @param orReplace {@code OR REPLACE} was given
 * @param ifNotExists {@code IF NOT EXISTS} was given (never together with {@code orReplace})
 * @param managed {@code MANAGED} was given
 * @param columns the explicit column list, in order; empty when the query's own column names are used
 * @param expectations the {@code CONSTRAINT ... EXPECT} data-quality expectations, in order
 * @param comment the {@code COMMENT} text
 * @param partitionedBy each {@code PARTITIONED BY} item exactly as written, such as {@code region} or
 *     {@code bucket(16, id)}
 * @param tableProperties the {@code TBLPROPERTIES}, in the order written
 * @param schedule the {@code SCHEDULE REFRESH} clause
 * @param refreshPolicy the {@code REFRESH POLICY} clause
 * @param withData false only for a trailing {@code WITH NO DATA}: create the view empty instead of populating it
 * @param query the defining query exactly as written after {@code AS}, without a trailing {@code ;} or
 *     {@code WITH [NO] DATA}; comments before its first or after its last token are not included
 * @param originalText the whole statement as written, from its first to its last token, without the {@code ;}
 */
public record CreateMaterializedView(
        QualifiedName name,
        boolean orReplace,
        boolean ifNotExists,
        boolean managed,
        List<ColumnSpec> columns,
        List<Expectation> expectations,
        Optional<String> comment,
        List<String> partitionedBy,
        Map<String, String> tableProperties,
        Optional<Schedule> schedule,
        Optional<RefreshPolicy> refreshPolicy,
        boolean withData,
        String query,
        String originalText) implements FloeStatement {

    public CreateMaterializedView {
        Objects.requireNonNull(name, "name");
        columns = List.copyOf(columns);
        expectations = List.copyOf(expectations);
        Objects.requireNonNull(comment, "comment");
        partitionedBy = List.copyOf(partitionedBy);
        // Properties keep their written order so SHOW and DESCRIBE output match the definition.
        tableProperties = Collections.unmodifiableMap(new LinkedHashMap<>(tableProperties));
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(refreshPolicy, "refreshPolicy");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(originalText, "originalText");
        if (orReplace && ifNotExists) {
            throw new IllegalArgumentException("OR REPLACE and IF NOT EXISTS cannot be used together");
        }
        if (query.isBlank()) {
            throw new IllegalArgumentException("A materialized view needs a query");
        }
    }
}
