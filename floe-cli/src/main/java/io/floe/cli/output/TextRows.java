package io.floe.cli.output;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/** A result's rows as text, each value as Spark's {@code show()} prints it (null for SQL NULL). */
public final class TextRows {
  private TextRows() {}

  /** Collects {@code df}, casting every column to string in Spark. */
  public static List<List<String>> of(Dataset<Row> df) {
    String[] names = df.columns();
    List<List<String>> rows = new ArrayList<>();
    if (names.length == 0) {
      return rows;
    }
    Column[] asText = new Column[names.length];
    for (int i = 0; i < names.length; i++) {
      asText[i] = df.col("`" + names[i].replace("`", "``") + "`").cast("string");
    }
    for (Row row : df.select(asText).collectAsList()) {
      List<String> cells = new ArrayList<>(names.length);
      for (int i = 0; i < names.length; i++) {
        cells.add(row.isNullAt(i) ? null : row.getString(i));
      }
      rows.add(cells);
    }
    return rows;
  }
}
