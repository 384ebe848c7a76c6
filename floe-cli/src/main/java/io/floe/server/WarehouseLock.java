package io.floe.server;

import io.floe.FloeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * The exclusive hold of one {@code floe server} on a warehouse: an operating-system lock on the
 * file {@value #FILE_NAME} in the warehouse folder, which also names the holder. The lock goes
 * with the process, so a server that dies leaves no stale lock behind.
 */
public final class WarehouseLock implements AutoCloseable {
  /** The lock file's name inside the warehouse folder. */
  public static final String FILE_NAME = "floe-server.lock";

  private final Path file;
  private final FileChannel channel;
  private final FileLock lock;

  private WarehouseLock(Path file, FileChannel channel, FileLock lock) {
    this.file = file;
    this.channel = channel;
    this.lock = lock;
  }

  /** The lock file of a warehouse. */
  public static Path fileOf(Path warehouse) {
    return warehouse.resolve(FILE_NAME);
  }

  /**
   * Takes the warehouse and writes {@code holder} into the lock file.
   *
   * @throws FloeException naming the holder when another server has the warehouse
   */
  public static WarehouseLock acquire(Path warehouse, ServerInfo holder) {
    Path file = fileOf(warehouse);
    FileChannel channel = null;
    try {
      Files.createDirectories(warehouse);
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException heldInThisProcess) {
        lock = null;
      }
      if (lock == null) {
        String owner = ServerInfo.fromText(Files.readString(file, StandardCharsets.UTF_8))
            .map(ServerInfo::describe)
            .orElse("a process that has not written its details yet");
        channel.close();
        throw new FloeException("Cannot start floe server: warehouse " + warehouse.toAbsolutePath()
            + " is already served by " + owner + " (lock file " + file.toAbsolutePath() + ")");
      }
      WarehouseLock held = new WarehouseLock(file, channel, lock);
      held.update(holder);
      return held;
    } catch (IOException e) {
      closeQuietly(channel, e);
      throw new FloeException("Cannot lock warehouse " + warehouse.toAbsolutePath() + " with " + file + ": "
          + e.getMessage(), e);
    }
  }

  /** Rewrites the holder's details, for example once the HTTP port is known. */
  public void update(ServerInfo holder) throws IOException {
    byte[] text = holder.toText().getBytes(StandardCharsets.UTF_8);
    channel.truncate(0);
    channel.write(ByteBuffer.wrap(text), 0);
    channel.force(false);
  }

  /** The holder recorded in a warehouse's lock file, whether or not it is still running. */
  public static Optional<ServerInfo> recordedHolder(Path warehouse) {
    Path file = fileOf(warehouse);
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try {
      return ServerInfo.fromText(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException unreadable) {
      return Optional.empty();
    }
  }

  public Path file() {
    return file;
  }

  /** Clears the holder's details and releases the lock. */
  @Override
  public void close() throws IOException {
    if (!channel.isOpen()) {
      return;
    }
    try {
      channel.truncate(0);
      lock.release();
    } finally {
      channel.close();
    }
  }

  private static void closeQuietly(FileChannel channel, Exception cause) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        cause.addSuppressed(e);
      }
    }
  }
}
