package io.floe.spark.oracle;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** How many refreshes of each shape were INCREMENTAL, FULL or NO_CHANGE, over a whole run. */
final class RefreshTally {
  private static final List<String> TYPES = List.of("INCREMENTAL", "FULL", "NO_CHANGE");

  private final Map<OracleShape, Map<String, Integer>> counts = new EnumMap<>(OracleShape.class);
  private int seeds;
  private int steps;
  private int operations;

  synchronized void countRefresh(OracleShape shape, String refreshType) {
    counts.computeIfAbsent(shape, s -> new TreeMap<>()).merge(refreshType, 1, Integer::sum);
  }

  synchronized void countSeed(int seedSteps, int seedOperations) {
    seeds++;
    steps += seedSteps;
    operations += seedOperations;
  }

  /** A table of the counts per shape, with totals. */
  synchronized String report() {
    StringBuilder out = new StringBuilder();
    out.append(String.format("Floe differential oracle: %d seeds, %d steps, %d source operations%n", seeds, steps, operations));
    out.append(String.format("%-22s %12s %12s %12s %8s%n", "shape", "INCREMENTAL", "FULL", "NO_CHANGE", "total"));
    Map<String, Integer> totals = new TreeMap<>();
    for (Map.Entry<OracleShape, Map<String, Integer>> entry : counts.entrySet()) {
      List<Object> row = new ArrayList<>();
      row.add(entry.getKey().name());
      int total = 0;
      for (String type : TYPES) {
        int count = entry.getValue().getOrDefault(type, 0);
        row.add(count);
        total += count;
        totals.merge(type, count, Integer::sum);
      }
      row.add(total);
      out.append(String.format("%-22s %12d %12d %12d %8d%n", row.toArray()));
    }
    int all = totals.values().stream().mapToInt(Integer::intValue).sum();
    out.append(
        String.format(
            "%-22s %12d %12d %12d %8d%n",
            "all",
            totals.getOrDefault("INCREMENTAL", 0),
            totals.getOrDefault("FULL", 0),
            totals.getOrDefault("NO_CHANGE", 0),
            all));
    return out.toString();
  }
}
