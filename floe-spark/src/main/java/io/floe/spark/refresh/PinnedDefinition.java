package io.floe.spark.refresh;

import io.floe.mv.SourceState;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * A definition whose every source reference reads a pinned snapshot: analyzing {@link #plan()}
 * gives the MV's rows at exactly the recorded source states, however sources move meanwhile.
 *
 * @param parsed the definition as parsed, before pinning
 * @param plan the parsed plan with each source replaced by a time-travel read
 */
public record PinnedDefinition(LogicalPlan parsed, LogicalPlan plan, List<Source> sources) {
  public List<SourceState> sourceStates() {
    return sources.stream().flatMap(s -> s.states().stream()).collect(Collectors.toList());
  }

  /** Fully qualified source names, in definition order. */
  public List<String> sourceNames() {
    return sources.stream().map(s -> s.name().toString()).distinct().collect(Collectors.toList());
  }
}
