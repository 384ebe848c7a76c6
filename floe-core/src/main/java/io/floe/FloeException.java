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
}
