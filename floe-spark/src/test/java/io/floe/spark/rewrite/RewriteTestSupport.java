package io.floe.spark.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Runs queries with query rewrite on and off in a fresh namespace, and compares their rows. The
 * shared session's settings are restored after each test.
 */
abstract class RewriteTestSupport {
  protected SparkSession spark;
  protected String ns;

  protected abstract String prefix();

  @BeforeEach
  void freshNamespace() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace(prefix());
    spark.conf().set(RewriteSettings.ENABLED, "false");
  }

  @AfterEach
  void rewriteOff() {
    spark.conf().set(RewriteSettings.ENABLED, "false");
    spark.conf().unset(RewriteSettings.STALENESS_TOLERANCE);
    spark.conf().unset(RewriteSettings.REPORT);
  }

  protected List<Row> sql(String statement) {
    return spark.sql(statement).collectAsList();
  }

  /** The query's rows with rewrite on, and the report of what answered it. */
  protected Answer withRewrite(String query) {
    spark.conf().set(RewriteSettings.ENABLED, "true");
    spark.conf().set(RewriteSettings.REPORT, "true");
    try {
      RewriteReport.clear(spark);
      List<String> rows = sorted(spark.sql(query).collectAsList());
      RewriteReport report = RewriteReport.last(spark).orElse(null);
      return new Answer(
          rows,
          report == null ? List.of() : report.used(),
          report == null ? List.of() : report.lines());
    } finally {
      spark.conf().set(RewriteSettings.ENABLED, "false");
    }
  }

  /** The query's rows computed from the tables. */
  protected List<String> withoutRewrite(String query) {
    spark.conf().set(RewriteSettings.ENABLED, "false");
    return sorted(spark.sql(query).collectAsList());
  }

  /** Asserts that rewrite gives the rows of the plain query and reports which MV answered. */
  protected Answer assertAnsweredBy(String query, String mv) {
    List<String> expected = withoutRewrite(query);
    Answer answer = withRewrite(query);
    assertThat(answer.used()).as("MVs answering [%s]; report %s", query, answer.lines()).containsExactly(q(mv));
    assertThat(answer.rows()).as("rows of [%s]", query).isEqualTo(expected);
    assertThat(expected).as("rows of [%s]", query).isNotEmpty();
    return answer;
  }

  /** Asserts that no MV answers the query, and that the result is still right. */
  protected Answer assertNotAnswered(String query) {
    List<String> expected = withoutRewrite(query);
    Answer answer = withRewrite(query);
    assertThat(answer.used()).as("MVs answering [%s]; report %s", query, answer.lines()).isEmpty();
    assertThat(answer.rows()).isEqualTo(expected);
    return answer;
  }

  protected String q(String name) {
    return "lake." + ns + "." + name;
  }

  protected long currentSnapshot(String table) {
    return spark.sql("SELECT snapshot_id FROM " + q(table) + ".snapshots ORDER BY committed_at DESC LIMIT 1").first().getLong(0);
  }

  static List<String> sorted(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row row : rows) {
      List<String> values = new ArrayList<>();
      for (int i = 0; i < row.length(); i++) {
        Object v = row.get(i);
        values.add(v instanceof Double ? String.format("%.9g", (Double) v) : String.valueOf(v));
      }
      out.add(String.join("|", values));
    }
    return out.stream().sorted().collect(Collectors.toList());
  }

  record Answer(List<String> rows, List<String> used, List<String> lines) {
    String report() {
      return String.join("\n", lines);
    }
  }
}
