package io.floe.schedule;

import io.floe.refresh.RefreshTrigger;
import java.util.List;
import java.util.Objects;

/**
 * One refresh of a scheduler round.
 *
 * @param name the materialized view to refresh
 * @param trigger {@link RefreshTrigger#SCHEDULE} or {@link RefreshTrigger#CHANGE}
 * @param reason why it is due, for the log
 * @param after the views refreshed earlier in the same round that it reads, directly or through
 *     views not in the round; when one of them fails, this one must not run
 */
public record PlannedRefresh(String name, RefreshTrigger trigger, String reason, List<String> after) {

  public PlannedRefresh {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(trigger, "trigger");
    Objects.requireNonNull(reason, "reason");
    after = List.copyOf(after);
  }
}
