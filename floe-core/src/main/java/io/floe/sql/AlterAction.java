package io.floe.sql;

import io.floe.mv.RefreshPolicy;
import io.floe.schedule.Schedule;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** What an {@link AlterMaterializedView} statement changes. */
public sealed interface AlterAction {

    /** {@code ADD SCHEDULE [REFRESH] ...} or {@code ALTER SCHEDULE [REFRESH] ...}: set or replace the schedule. */
    record SetSchedule(Schedule schedule) implements AlterAction {
        public SetSchedule {
            Objects.requireNonNull(schedule, "schedule");
        }
    }

    /** {@code DROP SCHEDULE}: refresh only on demand from now on. */
    record DropSchedule() implements AlterAction {
    }

    /** {@code [SET] REFRESH POLICY AUTO|INCREMENTAL|FULL}. */
    record SetRefreshPolicy(RefreshPolicy policy) implements AlterAction {
        public SetRefreshPolicy {
            Objects.requireNonNull(policy, "policy");
        }
    }

    /** {@code SET TBLPROPERTIES ('key' = 'value', ...)}, in the order written. */
    record SetProperties(Map<String, String> properties) implements AlterAction {
        public SetProperties {
            properties = Collections.unmodifiableMap(new LinkedHashMap<>(properties));
        }
    }

    /**
     * {@code UNSET TBLPROPERTIES [IF EXISTS] ('key', ...)}.
     *
     * @param ifExists ignore keys that are not set, rather than fail
     */
    record UnsetProperties(List<String> keys, boolean ifExists) implements AlterAction {
        public UnsetProperties {
            keys = List.copyOf(keys);
        }
    }
}
