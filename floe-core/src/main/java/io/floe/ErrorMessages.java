package io.floe;

/** Short forms of the messages of failures Floe reports, for one-line errors. */
public final class ErrorMessages {
  private ErrorMessages() {}

  /**
   * The first line of {@code message} that says something: Spark's messages may open with an empty
   * line and put the detail on the next ones. A line that ends with a colon announces what follows,
   * so the next such line is kept with it. Empty for a null or blank message.
   */
  public static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    String[] lines = message.strip().split("\\R");
    String first = lines[0].strip();
    if (first.endsWith(":")) {
      for (int i = 1; i < lines.length; i++) {
        if (!lines[i].isBlank()) {
          return first + " " + lines[i].strip();
        }
      }
    }
    return first;
  }

  /** As {@link #firstLine(String)}, or {@code otherwise} when the message is null or blank. */
  public static String firstLine(String message, String otherwise) {
    String line = firstLine(message);
    return line.isEmpty() ? otherwise : line;
  }

  /**
   * As {@link #firstLine(String)} for the message of {@code failure}, or the simple name of its class
   * when it has no message that says something.
   */
  public static String firstLineOf(Throwable failure) {
    return firstLine(failure.getMessage(), failure.getClass().getSimpleName());
  }
}
