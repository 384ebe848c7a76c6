package io.floe.cli;

import io.floe.cli.output.TextRows;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/** A statement's result as text cells, and the time it took. */
record QueryResult(List<String> columns, List<List<String>> rows, long elapsedMillis) {

  static QueryResult collect(Dataset<Row> df, long startedNanos) {
    List<List<String>> rows = TextRows.of(df);
    return new QueryResult(Arrays.asList(df.columns()), rows, (System.nanoTime() - startedNanos) / 1_000_000);
  }
}
