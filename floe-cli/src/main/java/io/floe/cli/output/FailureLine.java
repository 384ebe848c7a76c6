package io.floe.cli.output;

import io.floe.ErrorMessages;

/** The one line a user sees for a failure. */
public final class FailureLine {
  private FailureLine() {}

  /**
   * The first line of the innermost message that says something, without Spark's trailing
   * SQL-state and plan text.
   */
  public static String of(Throwable e) {
    Throwable shown = e;
    while (shown.getCause() != null
        && (shown.getMessage() == null || shown.getMessage().isBlank() || isWrapper(shown))) {
      shown = shown.getCause();
    }
    String message = ErrorMessages.firstLineOf(shown);
    int sqlState = message.indexOf(" SQLSTATE:");
    if (sqlState > 0) {
      message = message.substring(0, sqlState);
    }
    return message.trim();
  }

  private static boolean isWrapper(Throwable e) {
    String name = e.getClass().getName();
    return name.endsWith("ExecutionException") || name.endsWith("InvocationTargetException");
  }
}
