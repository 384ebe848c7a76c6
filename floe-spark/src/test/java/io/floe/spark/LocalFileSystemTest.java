package io.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.spark.sql.classic.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalFileSystemTest {
  @TempDir java.nio.file.Path dir;

  private static FileSystem fileSystem(String implementation) throws IOException {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", implementation);
    return FileSystem.newInstance(URI.create("file:///"), conf);
  }

  private static String mode(java.nio.file.Path file) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
  }

  @Test
  void writesTheFilesChecksumsAndPermissionsOfHadoopsOwnLocalFileSystem() throws IOException {
    try (FileSystem floe = fileSystem(LocalFileSystem.class.getName());
        FileSystem hadoop = fileSystem(org.apache.hadoop.fs.LocalFileSystem.class.getName())) {
      assertThat(floe).isInstanceOf(LocalFileSystem.class);
      for (FileSystem fs : new FileSystem[] {floe, hadoop}) {
        String name = fs == floe ? "floe" : "hadoop";
        Path file = new Path(dir.resolve(name + "/nested/data.txt").toUri());
        try (FSDataOutputStream out = fs.create(file, true)) {
          out.write(("written by " + name).getBytes(StandardCharsets.UTF_8));
        }
        try (FSDataInputStream in = fs.open(file)) {
          assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("written by " + name);
        }
      }
      assertThat(dir.resolve("floe/nested/.data.txt.crc")).exists();
      assertThat(mode(dir.resolve("floe/nested/data.txt"))).isEqualTo(mode(dir.resolve("hadoop/nested/data.txt")));
      assertThat(mode(dir.resolve("floe/nested"))).isEqualTo(mode(dir.resolve("hadoop/nested")));
    }
  }

  @Test
  void setsExplicitPermissionsOnFilesAndDirectories() throws IOException {
    try (FileSystem floe = fileSystem(LocalFileSystem.class.getName())) {
      Path file = new Path(dir.resolve("private.txt").toUri());
      floe.create(file, true).close();
      floe.setPermission(file, new FsPermission((short) 0640));
      assertThat(mode(dir.resolve("private.txt"))).isEqualTo("rw-r-----");
      assertThat(floe.getFileStatus(file).getPermission()).isEqualTo(new FsPermission((short) 0640));

      Path folder = new Path(dir.resolve("folder").toUri());
      assertThat(floe.mkdirs(folder, new FsPermission((short) 0750))).isTrue();
      floe.setPermission(folder, new FsPermission((short) 0705));
      assertThat(mode(dir.resolve("folder"))).isEqualTo("rwx---r-x");
    }
  }

  @Test
  void theEmbeddedLakehouseWritesLocalFilesThroughIt() throws IOException {
    SparkSession spark = (SparkSession) SharedSpark.session();
    Configuration conf = spark.sessionState().newHadoopConf();
    assertThat(new Path(SharedSpark.warehouse().toUri()).getFileSystem(conf)).isInstanceOf(LocalFileSystem.class);
  }
}
