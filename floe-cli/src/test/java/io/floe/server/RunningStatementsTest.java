package io.floe.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spark.SharedSpark;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** Statements cancelled before Spark starts their jobs: the jobs they start later are cancelled too. */
class RunningStatementsTest {
  /** A job far longer than any test: it ends only when cancelled. */
  private static long endlessJob(SparkSession spark) {
    return spark.range(0, 800_000_000_000L).selectExpr("sum(id % 7)").first().getLong(0);
  }

  @Test
  void aStatementCancelledBeforeItsJobStartsIsCancelledWhenItStarts() throws Exception {
    SparkSession spark = SharedSpark.session();
    RunningStatements statements = new RunningStatements(spark.sparkContext());

    CountDownLatch cancelled = new CountDownLatch(1);
    CompletableFuture<Long> bySession = startedBeforeItsJob(spark, statements, "shell-1", cancelled);
    assertThat(statements.cancelSession("shell-1")).isEqualTo(1);
    cancelled.countDown();
    assertThatThrownBy(() -> bySession.get(2, TimeUnit.MINUTES))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(RunningStatements.CancelledStatement.class);

    CountDownLatch stopped = new CountDownLatch(1);
    CompletableFuture<Long> byStop = startedBeforeItsJob(spark, statements, "", stopped);
    statements.cancelAll();
    stopped.countDown();
    assertThatThrownBy(() -> byStop.get(2, TimeUnit.MINUTES))
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("cancelled");
    assertThat(statements.cancelled()).isTrue();
    assertThat(statements.awaitNone(TimeUnit.SECONDS.toMillis(10))).isTrue();
  }

  /**
   * A statement of {@code session} that runs, stands still as if Spark were analyzing it until
   * {@code go}, then starts an endless job; returned once it stands still.
   */
  private static CompletableFuture<Long> startedBeforeItsJob(
      SparkSession spark, RunningStatements statements, String session, CountDownLatch go) throws InterruptedException {
    CountDownLatch running = new CountDownLatch(1);
    CompletableFuture<Long> statement = CompletableFuture.supplyAsync(() -> statements.run(session, () -> {
      running.countDown();
      await(go);
      return endlessJob(spark);
    }));
    assertThat(running.await(1, TimeUnit.MINUTES)).isTrue();
    return statement;
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(1, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
