package io.floe.spark.refresh;

import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshStatus;
import java.util.List;
import java.util.Optional;

/**
 * What a graph refresh did: one outcome per materialized view, sources before their readers.
 *
 * @param run the run every refresh of the graph was recorded under
 */
public record GraphRefreshResult(RefreshRun run, List<RefreshOutcome> outcomes) {
  public GraphRefreshResult {
    outcomes = List.copyOf(outcomes);
  }

  /** True when every view succeeded. */
  public boolean succeeded() {
    return outcomes.stream().allMatch(o -> o.status() == RefreshStatus.SUCCEEDED);
  }

  /** The outcome of the view with this fully qualified name. */
  public Optional<RefreshOutcome> outcome(String materializedView) {
    return outcomes.stream().filter(o -> o.materializedView().equals(materializedView)).findFirst();
  }
}
