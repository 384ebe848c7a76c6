package io.floe.server;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/** Starts {@code floe} in another JVM on the test class path, as {@code bin/floe} would. */
public final class ChildJvm {
  private ChildJvm() {}

  /** The command line: java, the project's JVM options, extra JVM arguments, then floe's arguments. */
  public static List<String> floe(List<String> jvmArgs, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    Path options = Paths.get("").toAbsolutePath().resolveSibling("bin").resolve("jvm.options");
    command.add("@" + options);
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("io.floe.cli.Floe");
    command.addAll(List.of(args));
    return command;
  }

  public static Process start(List<String> command, Path out, Path err) throws IOException {
    return new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
  }
}
