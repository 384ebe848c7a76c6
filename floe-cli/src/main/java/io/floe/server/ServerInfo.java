package io.floe.server;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;

/**
 * Who holds a warehouse: a running {@code floe server}'s process id, HTTP address, start time and
 * warehouse, as written in the warehouse's lock file.
 */
public record ServerInfo(long pid, String host, int port, Instant startedAt, String warehouse) {

  /** The lock file's contents. */
  public String toText() {
    Properties properties = new Properties();
    properties.setProperty("pid", Long.toString(pid));
    properties.setProperty("host", host);
    properties.setProperty("port", Integer.toString(port));
    properties.setProperty("started-at", startedAt.toString());
    properties.setProperty("warehouse", warehouse);
    StringWriter text = new StringWriter();
    try {
      properties.store(text, "floe server");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return text.toString();
  }

  /** Reads a lock file's contents; empty when they are missing or incomplete. */
  public static Optional<ServerInfo> fromText(String text) {
    Properties properties = new Properties();
    try {
      properties.load(new StringReader(text));
      return Optional.of(new ServerInfo(
          Long.parseLong(properties.getProperty("pid")),
          properties.getProperty("host"),
          Integer.parseInt(properties.getProperty("port")),
          Instant.parse(properties.getProperty("started-at")),
          properties.getProperty("warehouse")));
    } catch (IOException | RuntimeException incomplete) {
      return Optional.empty();
    }
  }

  /** The base URI of the server's HTTP API; a wildcard bind address is reached on loopback. */
  public URI baseUri() {
    String reachable = host.equals("0.0.0.0") || host.equals("::") || host.isBlank() ? "127.0.0.1" : host;
    return URI.create("http://" + (reachable.contains(":") ? "[" + reachable + "]" : reachable) + ":" + port);
  }

  /** {@code pid 123 on 127.0.0.1:7878 since 2026-11-30T01:00:00Z}. */
  public String describe() {
    // Port 0 until the server listens: it is still starting.
    return "pid " + pid + (port == 0 ? " (starting, not listening yet)" : " on " + host + ":" + port) + " since " + startedAt;
  }
}
