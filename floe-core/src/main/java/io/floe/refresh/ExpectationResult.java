package io.floe.refresh;

import io.floe.mv.OnViolation;
import java.util.Objects;

/**
 * How the rows a refresh evaluated fared against one {@code CONSTRAINT ... EXPECT} of a materialized view. A
 * full refresh evaluates every row of the definition; an incremental refresh only the rows its change inserts.
 *
 * @param failed rows whose condition was false or NULL: kept ({@link OnViolation#KEEP}), left out
 *     ({@link OnViolation#DROP_ROW}) or, when positive with {@link OnViolation#FAIL_UPDATE}, the refresh aborted
 */
public record ExpectationResult(String name, OnViolation onViolation, long passed, long failed) {

  public ExpectationResult {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(onViolation, "onViolation");
  }

  /** {@code valid_amount: 470 passed, 7 failed (DROP ROW)}. */
  public String describe() {
    return name + ": " + passed + " passed, " + failed + " failed (" + onViolation.name().replace('_', ' ') + ")";
  }
}
