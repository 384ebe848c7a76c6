package io.floe.server;

import io.floe.FloeException;
import io.floe.cli.output.FailureLine;
import io.floe.schedule.RefreshPlanner;
import io.javalin.Javalin;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running {@code floe server}: one warm Spark session, the scheduler that refreshes due and
 * stale views, and the HTTP API, holding the warehouse's lock.
 *
 * <p>Refreshes run one at a time on one thread, whether the scheduler or the API started them.
 * {@link #close()} stops taking work, lets the refresh in flight finish for up to the shutdown
 * timeout, then cancels it (a refresh commits atomically, so a cancelled one leaves its view as
 * it was), stops the API and releases the lock.
 */
public final class FloeServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FloeServer.class);
  /** Runs before Spark's own shutdown hook (priority 50), so Spark is still up while a refresh finishes. */
  private static final int SHUTDOWN_HOOK_PRIORITY = 100;
  private static final Duration RETRY_DELAY = Duration.ofMinutes(1);

  private final SparkSession spark;
  private final ServerSettings settings;
  private final WarehouseLock lock;
  private final ServerMetrics metrics;
  private final LakehouseViews views;
  private final Scheduler scheduler;
  private final ScheduledRefresh refresh;
  private final ExecutorService refreshThread = Executors.newSingleThreadExecutor(named("floe-refresh"));
  private final ScheduledExecutorService pollThread = Executors.newSingleThreadScheduledExecutor(named("floe-scheduler"));
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final RunningStatements statements;
  private Javalin http;
  private ServerInfo info;

  private FloeServer(SparkSession spark, ServerSettings settings, WarehouseLock lock, Clock clock) {
    this.spark = spark;
    this.settings = settings;
    this.lock = lock;
    this.metrics = new ServerMetrics(clock);
    this.views = new LakehouseViews(spark, settings.catalog());
    this.refresh = new ScheduledRefresh(spark, metrics);
    this.scheduler = new Scheduler(views, new RefreshPlanner(clock, RETRY_DELAY), refresh, metrics, clock);
    this.statements = new RunningStatements(spark.sparkContext());
  }

  /** The SQL statements requests are running. */
  RunningStatements statements() {
    return statements;
  }

  /**
   * Takes the warehouse's lock before anything slow starts, so a second server fails at once.
   *
   * @throws FloeException naming the running server when there is one
   */
  public static WarehouseLock lockWarehouse(ServerSettings settings) {
    return WarehouseLock.acquire(settings.warehouse(), new ServerInfo(ProcessHandle.current().pid(), settings.bind(),
        settings.port(), Instant.now(), settings.warehouse().toString()));
  }

  /** Starts the API and the scheduler on a session; the server owns {@code lock} from now on. */
  public static FloeServer start(SparkSession spark, ServerSettings settings, WarehouseLock lock, Clock clock) {
    FloeServer server = new FloeServer(spark, settings, lock, clock);
    try {
      server.http = new HttpApi(server, spark).start(settings.bind(), settings.port());
      server.info = new ServerInfo(ProcessHandle.current().pid(), settings.bind(), server.http.port(), Instant.now(),
          settings.warehouse().toString());
      lock.update(server.info);
    } catch (Exception e) { // Javalin, in Kotlin, also throws checked exceptions it does not declare
      server.close();
      throw new FloeException("Cannot start floe server on " + settings.bind() + ":" + settings.port() + ": "
          + startFailure(e), e);
    }
    long pollMs = settings.pollInterval().toMillis();
    server.pollThread.scheduleWithFixedDelay(server::pollOnce, 0, pollMs, TimeUnit.MILLISECONDS);
    return server;
  }

  /** Why the API could not listen, in a user's words where the cause is a known one. */
  private static String startFailure(Exception e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof java.nio.channels.UnresolvedAddressException) {
        return "the address cannot be resolved";
      }
      if (cause instanceof java.net.BindException) {
        String message = String.valueOf(cause.getMessage());
        if (message.contains("in use")) {
          return "the port is in use";
        }
        if (message.contains("Cannot assign requested address")) {
          return "the address is not one of this machine's";
        }
        if (message.contains("Permission denied")) {
          return "permission denied (ports below 1024 need elevated privileges)";
        }
        return FailureLine.of(cause);
      }
    }
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return FailureLine.of(root);
  }

  /**
   * Stops the server on SIGTERM and SIGINT (Ctrl-C) before the JVM begins to exit: once it does,
   * Iceberg's worker pools shut themselves down and a refresh in flight could not finish. As a
   * fallback for other exits, a shutdown hook that runs before Spark's also stops the server.
   */
  public void stopOnSignals() {
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
        Thread stopper = new Thread(this::close, "floe-server-stop");
        stopper.start();
      });
    }
    org.apache.hadoop.util.ShutdownHookManager.get().addShutdownHook(this::close, SHUTDOWN_HOOK_PRIORITY,
        settings.shutdownTimeout().toSeconds() + 30, TimeUnit.SECONDS);
  }

  private void pollOnce() {
    if (stopping.get()) {
      return;
    }
    try {
      refreshThread.submit(() -> scheduler.poll(stopping::get)).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      LOG.error("Scheduler poll failed", e.getCause());
    } catch (RuntimeException e) { // a rejected poll while stopping, or anything else: never end the schedule
      if (!stopping.get()) {
        LOG.error("Scheduler poll failed", e);
      }
    }
  }

  /** Runs a user's refresh on the refresh thread and waits for it. */
  ScheduledRefresh.Outcome refreshNow(String mv, boolean full, boolean cascade) throws InterruptedException {
    if (stopping.get()) {
      throw new HttpApi.BadRequest(io.javalin.http.HttpStatus.SERVICE_UNAVAILABLE, "floe server is shutting down");
    }
    try {
      return refreshThread.submit(() -> refresh.refreshNow(mv, full, cascade)).get();
    } catch (ExecutionException e) {
      throw new FloeException("Refresh of " + mv + " failed: " + e.getCause().getMessage(), e.getCause());
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new HttpApi.BadRequest(io.javalin.http.HttpStatus.SERVICE_UNAVAILABLE, "floe server is shutting down");
    }
  }

  /**
   * Runs a pipeline over HTTP on the refresh thread and waits for it: one writer at a time with the
   * schedule, and a stop lets it finish (up to the shutdown timeout) as it lets a refresh finish.
   */
  <T> T runOnRefreshThread(java.util.concurrent.Callable<T> work) throws InterruptedException {
    if (stopping.get()) {
      throw new HttpApi.BadRequest(io.javalin.http.HttpStatus.SERVICE_UNAVAILABLE, "floe server is shutting down");
    }
    try {
      return refreshThread.submit(work).get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException failure) {
        throw failure;
      }
      throw new FloeException(e.getCause().getMessage(), e.getCause());
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new HttpApi.BadRequest(io.javalin.http.HttpStatus.SERVICE_UNAVAILABLE, "floe server is shutting down");
    }
  }

  public ServerInfo info() {
    return info;
  }

  public int port() {
    return http.port();
  }

  ServerSettings settings() {
    return settings;
  }

  ServerMetrics metrics() {
    return metrics;
  }

  LakehouseViews views() {
    return views;
  }

  Scheduler scheduler() {
    return scheduler;
  }

  boolean stopping() {
    return stopping.get();
  }

  /** Waits until the server has stopped. */
  public void awaitStopped() throws InterruptedException {
    stopped.await();
  }

  @Override
  public void close() {
    if (!stopping.compareAndSet(false, true)) {
      try {
        stopped.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return;
    }
    LOG.info("Stopping floe server on {}", settings.warehouse());
    long deadline = System.currentTimeMillis() + settings.shutdownTimeout().toMillis();
    try {
      pollThread.shutdownNow();
      refreshThread.shutdown();
      if (!refreshThread.awaitTermination(settings.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warn("The refresh in flight did not finish within {} s; cancelling it", settings.shutdownTimeout().toSeconds());
        spark.sparkContext().cancelAllJobs();
        refreshThread.shutdownNow();
        if (!refreshThread.awaitTermination(10, TimeUnit.SECONDS)) {
          LOG.warn("The refresh thread did not stop after cancellation");
        }
      }
      // SQL statements of requests: waited for within the same patience, then cancelled, so that
      // each request is answered before the HTTP server stops.
      if (!statements.awaitNone(Math.max(0, deadline - System.currentTimeMillis()))) {
        LOG.warn("{} SQL statement(s) over HTTP still running after {} s; cancelling them", statements.count(),
            settings.shutdownTimeout().toSeconds());
        statements.cancelAll();
        if (!statements.awaitNone(TimeUnit.SECONDS.toMillis(10))) {
          LOG.warn("SQL statements over HTTP did not stop after cancellation");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        if (http != null) {
          stopHttp();
        }
      } finally {
        try {
          lock.close();
        } catch (IOException e) {
          LOG.warn("Cannot release the warehouse lock {}", lock.file(), e);
        }
        stopped.countDown();
        LOG.info("floe server stopped");
      }
    }
  }

  /** Stops the HTTP server; a request it could not wait for is logged, not thrown at the stopping thread. */
  private void stopHttp() {
    try {
      http.stop();
    } catch (RuntimeException e) { // Javalin wraps Jetty's graceful-stop timeout
      LOG.warn("The HTTP server did not stop gracefully: {}", e.toString());
      LOG.debug("HTTP server stop", e);
    }
  }

  private static ThreadFactory named(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }
}
