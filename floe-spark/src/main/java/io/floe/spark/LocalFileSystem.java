package io.floe.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's checksummed local file system, setting file permissions through {@code java.nio}.
 * Without Hadoop's native library, which Spark does not ship, Hadoop's local file system starts a
 * {@code chmod} process for every file and directory it creates, about 5 ms each; an Iceberg
 * commit creates several files (metadata, manifest list, manifests, data and delete files), so a
 * small refresh spent a noticeable share of its time starting processes. Files, checksums and
 * permissions are the same as with Hadoop's own class. {@link EmbeddedLakehouse} makes it the
 * implementation of {@code file:} paths.
 */
public final class LocalFileSystem extends org.apache.hadoop.fs.LocalFileSystem {
  public LocalFileSystem() {
    super(new Raw());
  }

  /** The raw local file system with {@link #setPermission} through {@code java.nio}. */
  static final class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      java.nio.file.Path file = pathToFile(path).toPath();
      try {
        Files.setPosixFilePermissions(file, posix(permission));
      } catch (UnsupportedOperationException notPosix) {
        super.setPermission(path, permission);
      }
    }

    private static Set<PosixFilePermission> posix(FsPermission permission) {
      Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
      add(set, permission.getUserAction(), PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);
      add(set, permission.getGroupAction(), PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE);
      add(set, permission.getOtherAction(), PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
      return set;
    }

    private static void add(
        Set<PosixFilePermission> set, FsAction action, PosixFilePermission read, PosixFilePermission write, PosixFilePermission execute) {
      if (action.implies(FsAction.READ)) {
        set.add(read);
      }
      if (action.implies(FsAction.WRITE)) {
        set.add(write);
      }
      if (action.implies(FsAction.EXECUTE)) {
        set.add(execute);
      }
    }
  }
}
