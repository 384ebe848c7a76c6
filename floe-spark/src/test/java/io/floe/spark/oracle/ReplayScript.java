package io.floe.spark.oracle;

import java.util.ArrayList;
import java.util.List;

/**
 * Every statement one seed executed, in order, as a script for {@code bin/floe sql -f}, with
 * comments saying what the oracle expected where it matters.
 */
final class ReplayScript {
  private final List<String> lines = new ArrayList<>();

  ReplayScript(long seed) {
    lines.add("-- Floe differential oracle, seed " + seed);
    lines.add("-- replay: bin/floe sql -f this-file.sql (on a warehouse without this namespace)");
  }

  void statement(String sql) {
    lines.add(sql + ";");
  }

  void comment(String text) {
    for (String line : text.split("\n")) {
      lines.add("-- " + line);
    }
  }

  String text() {
    return String.join("\n", lines) + "\n";
  }
}
