package io.floe.spark.mv;

import io.floe.spark.EmbeddedLakehouse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * A second Floe process on a test's warehouse: its own JVM, Spark and catalog connections, as a
 * second {@code floe sql} would be. It starts Spark, says {@code READY}, runs one statement when
 * told {@code GO} on its standard input, and prints the first row's {@code refresh_type} and
 * {@code attempts}.
 */
public final class AnotherProcess implements AutoCloseable {
  private static final String READY = "READY";
  private static final String RESULT = "RESULT ";

  private final Process process;
  private final BufferedReader out;

  private AnotherProcess(Process process) {
    this.process = process;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /** Starts the process on {@code warehouse} and waits until its Spark is up. */
  static AnotherProcess start(Path warehouse, String statement) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    // This JVM's options (the --add-opens Spark needs among them), with a smaller heap.
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!option.startsWith("-Xmx") && !option.startsWith("-agentlib") && !option.startsWith("-javaagent")) {
        command.add(option);
      }
    }
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(AnotherProcess.class.getName());
    command.add(warehouse.toString());
    command.add(statement);
    Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    AnotherProcess started = new AnotherProcess(process);
    // A process that hangs is ended, so that the reads below end too.
    java.util.concurrent.CompletableFuture.delayedExecutor(5, TimeUnit.MINUTES).execute(process::destroyForcibly);
    String line;
    while ((line = started.out.readLine()) != null) {
      if (line.equals(READY)) {
        return started;
      }
    }
    started.close();
    throw new IllegalStateException("The other process ended before its Spark was up (exit " + process.exitValue() + ")");
  }

  /** Tells the process to run its statement now. */
  void go() throws IOException {
    Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    in.write("GO\n");
    in.flush();
  }

  /** The statement's {@code refresh_type} and {@code attempts}, once it ran. */
  String[] result() throws IOException {
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith(RESULT)) {
        return line.substring(RESULT.length()).split(" ");
      }
    }
    throw new IllegalStateException("The other process ended without a result");
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  public static void main(String[] args) throws IOException {
    EmbeddedLakehouse.planScansInCallingThread();
    SparkSession.Builder builder = SparkSession.builder().master("local[1]").appName("floe-another-process");
    EmbeddedLakehouse.sparkConf(Path.of(args[0]), EmbeddedLakehouse.DEFAULT_CATALOG).forEach(builder::config);
    SparkSession spark = builder.getOrCreate();
    try {
      spark.sql("SELECT 1").collect();
      System.out.println(READY);
      System.out.flush();
      if (new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine() == null) {
        return;
      }
      Row row = spark.sql(args[1]).first();
      System.out.println(RESULT + row.getAs("refresh_type") + " " + row.getAs("attempts"));
      System.out.flush();
    } finally {
      spark.stop();
    }
  }
}
