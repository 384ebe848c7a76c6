package io.floe.cli.output;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/** A result's rows as text, each value as Spark's {@code show()} prints it (null for SQL NULL). */
public final class TextRows {
  private TextRows() {}

  /**
   * A collected result: its rows as text and the query that ran to collect them, whose executed
   * plan holds the scans' metrics ({@link ScanStatistics}).
   */
  public record Collected(List<List<String>> rows, Dataset<Row> executed) {}

  /** Collects {@code df}, casting every column to string in Spark. */
  public static List<List<String>> of(Dataset<Row> df) {
    return collect(df).rows();
  }

  /** Collects {@code df} as {@link #of} does, keeping the query that ran. */
  public static Collected collect(Dataset<Row> df) {
    String[] names = df.columns();
    List<List<String>> rows = new ArrayList<>();
    if (names.length == 0) {
      // A command: it ran when the statement was analyzed.
      return new Collected(rows, df);
    }
    Column[] asText = new Column[names.length];
    for (int i = 0; i < names.length; i++) {
      asText[i] = df.col("`" + names[i].replace("`", "``") + "`").cast("string");
    }
    Dataset<Row> executed = df.select(asText);
    for (Row row : executed.collectAsList()) {
      List<String> cells = new ArrayList<>(names.length);
      for (int i = 0; i < names.length; i++) {
        cells.add(row.isNullAt(i) ? null : row.getString(i));
      }
      rows.add(cells);
    }
    return new Collected(rows, executed);
  }
}
