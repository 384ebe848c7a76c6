package io.floe.server;

import io.floe.FloeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * How a {@code floe server} runs.
 *
 * @param warehouse the warehouse folder it locks
 * @param catalog the catalog whose materialized views it schedules
 * @param bind the address its HTTP API listens on
 * @param port the HTTP port; 0 picks a free one
 * @param pollInterval how often it looks for due and stale views ({@value #POLL_INTERVAL_KEY})
 * @param shutdownTimeout how long a stop waits for the refresh in flight ({@value #SHUTDOWN_TIMEOUT_KEY})
 */
public record ServerSettings(
    Path warehouse, String catalog, String bind, int port, Duration pollInterval, Duration shutdownTimeout) {

  public static final String POLL_INTERVAL_KEY = "floe.server.poll-interval-seconds";
  public static final String SHUTDOWN_TIMEOUT_KEY = "floe.server.shutdown-timeout-seconds";
  public static final int DEFAULT_PORT = 7878;
  static final int MAX_PORT = 65_535;
  static final long DEFAULT_POLL_SECONDS = 5;
  static final long DEFAULT_SHUTDOWN_SECONDS = 20;

  /** Refuses a port no address can have, before anything starts. */
  public ServerSettings {
    if (port < 0 || port > MAX_PORT) {
      throw new FloeException("Cannot start floe server on " + bind + ":" + port + ": port " + port
          + " is out of range 0-" + MAX_PORT);
    }
  }

  /** Settings with the poll interval and shutdown timeout read from {@code conf}, else their defaults. */
  public static ServerSettings of(Path warehouse, String catalog, String bind, int port, Map<String, String> conf) {
    return new ServerSettings(warehouse.toAbsolutePath().normalize(), catalog, bind, port,
        Duration.ofSeconds(seconds(conf, POLL_INTERVAL_KEY, DEFAULT_POLL_SECONDS, 1)),
        Duration.ofSeconds(seconds(conf, SHUTDOWN_TIMEOUT_KEY, DEFAULT_SHUTDOWN_SECONDS, 0)));
  }

  private static long seconds(Map<String, String> conf, String key, long fallback, long minimum) {
    String text = conf.get(key);
    if (text == null) {
      return fallback;
    }
    try {
      long value = Long.parseLong(text.strip());
      if (value < minimum) {
        throw new FloeException(key + " must be at least " + minimum + " but is " + value);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new FloeException(key + " must be a whole number of seconds but is '" + text + "'", e);
    }
  }
}
