package io.floe.spark.ingest;

import io.floe.FloeException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsAction;

/**
 * Lists the files of a streaming table's folder, recursively, through Hadoop's file system API (so local paths,
 * {@code s3a://} and {@code hdfs://} all work). Names starting with {@code _} or {@code .} (Spark's and Hadoop's
 * markers, editors' temporary files) are skipped, in sub-folders too.
 */
final class FileListing {
  private FileListing() {}

  /** Every data file under {@code folder}, by path; refuses a missing folder and unreadable files. */
  static List<SourceFile> list(String table, String folder, Configuration conf) {
    Path root = new Path(folder);
    FileSystem fs;
    try {
      fs = root.getFileSystem(conf);
    } catch (IOException e) {
      throw new FloeException("Cannot ingest into " + table + ": no file system for " + folder + ": " + e.getMessage(), e);
    }
    List<SourceFile> files = new ArrayList<>();
    try {
      FileStatus top = fs.getFileStatus(root);
      if (top.isFile()) {
        files.add(checked(table, fs, top));
        return files;
      }
      RemoteIterator<LocatedFileStatus> it = fs.listFiles(root, true);
      while (it.hasNext()) {
        LocatedFileStatus status = it.next();
        if (!hidden(root, status.getPath())) {
          files.add(checked(table, fs, status));
        }
      }
    } catch (FileNotFoundException e) {
      throw new FloeException("Cannot ingest into " + table + ": folder " + folder + " does not exist", e);
    } catch (IOException e) {
      throw new FloeException("Cannot ingest into " + table + ": cannot list " + folder + ": " + e.getMessage(), e);
    }
    files.sort(Comparator.comparing(SourceFile::path));
    return files;
  }

  private static SourceFile checked(String table, FileSystem fs, FileStatus status) throws IOException {
    try {
      fs.access(status.getPath(), FsAction.READ);
    } catch (org.apache.hadoop.security.AccessControlException e) {
      throw new FloeException(
          "Cannot ingest into " + table + ": file " + status.getPath() + " is not readable (permission denied)", e);
    }
    return new SourceFile(FileLog.normalize(status.getPath().toString()), status.getLen(), status.getModificationTime());
  }

  private static boolean hidden(Path root, Path file) {
    for (Path p = file; p != null && !p.equals(root) && p.depth() > root.depth(); p = p.getParent()) {
      String name = p.getName();
      if (name.startsWith("_") || name.startsWith(".")) {
        return true;
      }
    }
    return false;
  }
}
