package io.floe.cli;

import io.floe.cli.output.OutputFormat;
import io.floe.cli.output.QueryResult;

/** Where {@code floe sql} runs its statements: an embedded Spark session or a running server. */
interface SqlSession {
  /**
   * Runs one statement and returns its result.
   *
   * @throws Exception when the statement fails; its message is what the user sees
   */
  QueryResult run(String sql, OutputFormat format) throws Exception;

  /**
   * Cancels the statement running now, from another thread (the shell's Ctrl-C): its Spark jobs
   * stop and {@link #run} fails with a message saying it was cancelled. Does nothing when none runs.
   */
  void cancel();
}
