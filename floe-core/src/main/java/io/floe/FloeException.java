package io.floe;

/**
 * A user-facing failure: the message names the object and the problem in one line, and says what
 * to do where there is something to do. Causes stay chained for the log.
 */
public class FloeException extends RuntimeException {
  public FloeException(String message) {
    super(message);
  }

  public FloeException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * {@code failure} as an unchecked exception: itself when it is one, otherwise wrapped with its
   * message. Spark throws its {@code AnalysisException}, a checked exception, where Java does not
   * expect one, so code that must handle every failure catches {@code Exception} and uses this.
   */
  public static RuntimeException unchecked(Exception failure) {
    return failure instanceof RuntimeException runtime
        ? runtime
        : new FloeException(ErrorMessages.firstLineOf(failure), failure);
  }
}
