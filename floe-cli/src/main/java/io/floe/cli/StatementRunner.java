package io.floe.cli;

import io.floe.cli.output.FailureLine;
import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.QueryResult;
import io.floe.cli.output.ResultFormatter;
import io.floe.sql.SqlScript;
import java.io.PrintWriter;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs SQL statements and prints their results, the same way whether they run on embedded Spark
 * or on a running server. A failure prints one line naming the problem on the error stream; the
 * stack trace goes to the log.
 */
final class StatementRunner {
  private static final Logger LOG = LoggerFactory.getLogger(StatementRunner.class);

  private final SqlSession session;
  private final PrintWriter out;
  private final PrintWriter err;
  private final OutputFormat format;
  private final boolean timing;
  private final boolean stats;

  StatementRunner(SqlSession session, PrintWriter out, PrintWriter err, OutputFormat format, boolean timing) {
    this(session, out, err, format, timing, false);
  }

  /**
   * @param stats after a query (and its timing, if printed), print what it scanned and the
   *     materialized view that answered it, if any
   */
  StatementRunner(SqlSession session, PrintWriter out, PrintWriter err, OutputFormat format, boolean timing, boolean stats) {
    this.session = session;
    this.out = out;
    this.err = err;
    this.format = format;
    this.timing = timing;
    this.stats = stats;
  }

  /** Runs every statement of {@code script} in order, stopping at the first failure. */
  boolean runScript(String script) {
    List<SqlScript.Statement> statements = SqlScript.statements(script);
    for (int i = 0; i < statements.size(); i++) {
      if (!run(statements.get(i).sql())) {
        if (statements.size() > 1) {
          // Which one, and what became of the others: those before it stay committed.
          int after = statements.size() - i - 1;
          List<String> others = new java.util.ArrayList<>();
          if (i > 0) {
            others.add(count(i) + " before it ran");
          }
          if (after > 0) {
            others.add(count(after) + " after it did not run");
          }
          err.printf("(statement %d of %d, line %d, failed; %s)%n",
              i + 1, statements.size(), statements.get(i).line(), String.join(", ", others));
          err.flush();
        }
        return false;
      }
    }
    return true;
  }

  /** "the one" or "the n" statements. */
  private static String count(int statements) {
    return statements == 1 ? "the one" : "the " + statements;
  }

  /** Cancels the statement running now, if any, from another thread; it then fails. */
  void cancel() {
    session.cancel();
  }

  /** Runs one statement; false when it failed (the error is already printed). */
  boolean run(String sql) {
    long started = System.nanoTime();
    try {
      QueryResult result = session.run(sql, format);
      if (format == OutputFormat.JSON) {
        result.jsonLines().forEach(out::println);
      } else if (!result.columns().isEmpty()) {
        out.print(ResultFormatter.format(result.columns(), result.rows(), format));
      }
      printTiming(result.rowCount(), (System.nanoTime() - started) / 1_000_000);
      if (stats && result.scanned().isPresent()) {
        err.println("(" + result.scanned().get() + ")");
      }
      result.rewriteReport().forEach(line -> err.println("rewrite: " + line));
      err.flush();
      return true;
    } catch (Exception e) { // Spark's AnalysisException is a checked exception thrown unchecked
      LOG.error("Statement failed: {}", sql, e);
      err.println("Error: " + FailureLine.of(e));
      err.flush();
      return false;
    }
  }

  private void printTiming(int rows, long millis) {
    out.flush();
    if (timing) {
      err.println("(" + rows + (rows == 1 ? " row" : " rows") + ", " + ResultFormatter.formatDuration(millis) + ")");
    }
  }
}
