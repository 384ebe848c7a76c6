package io.floe.refresh;

import java.util.Objects;
import java.util.Optional;

/**
 * How one materialized view of a graph refresh ended: succeeded with a {@link RefreshResult},
 * failed with an error, or skipped because a view it reads failed.
 *
 * @param message for a failure the error's message, for a skip the reason; null on success
 */
public record RefreshOutcome(
    String materializedView, RefreshStatus status, RefreshResult result, String message, RuntimeException error) {

  public RefreshOutcome {
    Objects.requireNonNull(materializedView, "materializedView");
    Objects.requireNonNull(status, "status");
    if ((status == RefreshStatus.SUCCEEDED) != (result != null)) {
      throw new IllegalArgumentException("A result is given exactly when the refresh succeeded");
    }
  }

  public static RefreshOutcome succeeded(RefreshResult result) {
    return new RefreshOutcome(result.materializedView(), RefreshStatus.SUCCEEDED, result, null, null);
  }

  public static RefreshOutcome failed(String materializedView, RuntimeException error) {
    return new RefreshOutcome(materializedView, RefreshStatus.FAILED, null, error.getMessage(), error);
  }

  public static RefreshOutcome skipped(String materializedView, String reason) {
    return new RefreshOutcome(materializedView, RefreshStatus.SKIPPED, null, reason, null);
  }

  public Optional<RefreshResult> refreshResult() {
    return Optional.ofNullable(result);
  }

  public Optional<RuntimeException> failure() {
    return Optional.ofNullable(error);
  }
}
