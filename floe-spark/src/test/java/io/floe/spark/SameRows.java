package io.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The check every view test ends with: a view holds exactly the rows of its definition run
 * directly, as multisets ({@code EXCEPT ALL} empty both ways). A failure names the side and shows
 * the first rows that differ.
 */
public final class SameRows {
  /** How many differing rows a failure message shows. */
  private static final int SHOWN = 20;

  private SameRows() {}

  /**
   * Asserts that {@code actual} (the rows of {@code view}) and {@code expected} (its definition) hold
   * the same rows, each as many times.
   */
  public static void assertSameRows(String view, Dataset<Row> actual, Dataset<Row> expected) {
    List<Row> extra = actual.exceptAll(expected).limit(SHOWN).collectAsList();
    assertThat(extra).as("rows of %s not in its definition (first %d)", view, SHOWN).isEmpty();
    List<Row> missing = expected.exceptAll(actual).limit(SHOWN).collectAsList();
    assertThat(missing).as("rows of the definition missing in %s (first %d)", view, SHOWN).isEmpty();
  }
}
