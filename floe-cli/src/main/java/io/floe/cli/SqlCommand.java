package io.floe.cli;

import io.floe.cli.output.OutputFormat;
import io.floe.server.ServerInfo;
import io.floe.sql.SqlScript;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code floe sql}: a SQL shell, or the statements of {@code -e} or {@code -f}. */
@Command(
    name = "sql",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Run SQL against the lakehouse: statements, a script or an interactive shell.",
    description = {
      "Run Spark SQL, with Floe's materialized view statements, against the lakehouse.",
      "Without -e or -f, starts an interactive shell (end statements with ';'), or runs the script",
      "piped to standard input when that is not a terminal.",
      "When a floe server runs on the warehouse, statements run on its Spark session."
    })
final class SqlCommand implements Callable<Integer> {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SqlCommand.class);

  @Mixin LakehouseOptions lakehouse = new LakehouseOptions();

  @Spec CommandSpec spec;

  @Option(names = {"-e", "--execute"}, paramLabel = "SQL", description = "Statements to run, separated by ';'.")
  String statements;

  @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "A SQL script to run; - reads standard input.")
  Path file;

  @Option(
      names = "--format",
      paramLabel = "FORMAT",
      defaultValue = "table",
      description = "Result format: table, csv or json (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(names = "--no-timing", description = "Do not print row counts and times.")
  boolean noTiming;

  @Option(names = "--no-server", description = "Start Spark here even when a floe server runs on the warehouse.")
  boolean noServer;

  @Option(
      names = "--no-stats",
      description = "Do not print what each query scanned (data files, bytes, files pruned) and the materialized view that answered it.")
  boolean noStats;

  @Override
  public Integer call() throws IOException {
    OutputFormat outputFormat = OutputFormat.parse(format);
    if (statements != null && file != null) {
      spec.commandLine().getErr().println("Error: give either -e or -f, not both");
      return 2;
    }
    String script = statements;
    if ((file != null && file.toString().equals("-")) || (script == null && file == null && System.console() == null)) {
      // Piped input is a script, as with -f: no banner or prompts in the output, and a last
      // statement without ';' runs.
      script = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
    } else if (file != null) {
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        String why = Files.isDirectory(file) ? ": it is a folder" : Files.exists(file) ? ": permission denied" : ": no such file";
        spec.commandLine().getErr().println("Error: cannot read SQL file " + file + why);
        return 2;
      }
      script = Files.readString(file, StandardCharsets.UTF_8);
    }
    Path warehouse = lakehouse.warehouse(LakehouseOptions.floeHome().resolve("warehouse"));
    // The server's session spares this command Spark's start-up; its classes are never loaded here.
    Optional<ServerInfo> server = lakehouse.server(warehouse, noServer, spec.commandLine().getErr());
    SqlSession session = server.isPresent() ? new RemoteSqlSession(server.get()) : EmbeddedSqlSession.start(lakehouse, warehouse);
    StatementRunner runner = new StatementRunner(
            session, spec.commandLine().getOut(), spec.commandLine().getErr(), outputFormat, !noTiming, !noStats);
    if (script != null) {
      return runner.runScript(script) ? 0 : 1;
    }
    String where = warehouse.toAbsolutePath() + server.map(s -> " through floe server " + s.describe()).orElse("");
    return shell(runner, where);
  }

  private int shell(StatementRunner runner, String where) throws IOException {
    Files.createDirectories(LakehouseOptions.floeHome());
    try (Terminal terminal = TerminalBuilder.builder().system(true).build()) {
      LineReader reader =
          LineReaderBuilder.builder()
              .terminal(terminal)
              .appName("floe")
              .variable(LineReader.HISTORY_FILE, LakehouseOptions.floeHome().resolve("history"))
              .build();
      terminal.writer().println("Floe SQL shell on " + where + ". End statements with ';', quit with exit;");
      // Ctrl-C while a statement runs cancels it and keeps the shell (and its USE and SET); while
      // a line is typed, the line reader takes it and clears the line.
      terminal.handle(Terminal.Signal.INT, signal -> {
        terminal.writer().println("Cancelling the statement...");
        terminal.flush();
        Thread cancel = new Thread(() -> {
          try {
            runner.cancel();
          } catch (RuntimeException e) {
            LOG.warn("Cannot cancel the statement", e);
          }
        }, "floe-cancel");
        cancel.setDaemon(true);
        cancel.start();
      });
      StringBuilder buffer = new StringBuilder();
      boolean allSucceeded = true;
      while (true) {
        String line;
        try {
          line = reader.readLine(buffer.length() == 0 ? "floe> " : "   -> ");
        } catch (UserInterruptException e) {
          buffer.setLength(0);
          continue;
        } catch (EndOfFileException e) {
          break;
        }
        String trimmed = line.trim();
        if (buffer.length() == 0 && (trimmed.equalsIgnoreCase("exit;") || trimmed.equalsIgnoreCase("quit;")
            || trimmed.equalsIgnoreCase("exit") || trimmed.equalsIgnoreCase("quit"))) {
          break;
        }
        buffer.append(line).append('\n');
        if (!trimmed.endsWith(";")) {
          continue;
        }
        List<String> ready = SqlScript.split(buffer.toString());
        buffer.setLength(0);
        for (String statement : ready) {
          allSucceeded &= runner.run(statement);
        }
      }
      if (buffer.toString().trim().length() > 0) {
        for (String statement : SqlScript.split(buffer.toString())) {
          allSucceeded &= runner.run(statement);
        }
      }
      return allSucceeded ? 0 : 1;
    }
  }
}
