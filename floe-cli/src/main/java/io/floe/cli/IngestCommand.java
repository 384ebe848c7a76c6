package io.floe.cli;

import io.floe.cli.output.OutputFormat;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code floe ingest PATH --into TABLE}: a shortcut for {@code CREATE OR REFRESH STREAMING TABLE TABLE AS
 * SELECT * FROM STREAM read_files('PATH', ...)}; the first run creates the table, later runs load new files only.
 */
@Command(
    name = "ingest",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    header = "Load a folder's new files into a streaming table, creating it on the first run.",
    description = {
      "Load the files of PATH that TABLE has not loaded yet into the streaming table TABLE, creating it on",
      "the first run: CREATE OR REFRESH STREAMING TABLE TABLE AS SELECT * FROM STREAM read_files('PATH')."
    })
final class IngestCommand implements Callable<Integer> {
  @Mixin LakehouseOptions lakehouse = new LakehouseOptions();

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "PATH", description = "A folder (or file) of JSON lines, CSV or Parquet files.")
  String path;

  @Option(names = "--into", required = true, paramLabel = "TABLE", description = "The streaming table, e.g. bronze.orders.")
  String table;

  @Option(
      names = "--format",
      paramLabel = "FORMAT",
      description = "json (JSON lines), csv or parquet (default: the one the file names' extensions give, else json).")
  String format;

  @Option(names = "--option", paramLabel = "KEY=VALUE", description = "A reader option for read_files (repeatable).")
  Map<String, String> options = new LinkedHashMap<>();

  @Option(names = "--no-timing", description = "Do not print row counts and times.")
  boolean noTiming;

  @Option(names = "--no-server", description = "Run on embedded Spark even when a floe server is running.")
  boolean noServer;

  /** One part of a table name: an identifier, or any text in backticks (a backtick doubled). */
  private static final String NAME_PART = "(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)+`)";

  private static final java.util.regex.Pattern TABLE_NAME =
      java.util.regex.Pattern.compile(NAME_PART + "(?:\\." + NAME_PART + ")*");

  @Override
  public Integer call() {
    // The values go into a statement: each is checked or quoted, so none can change what it says.
    if (!TABLE_NAME.matcher(table).matches()) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          "--into must be a table name such as bronze.orders (each part letters, digits and underscores, or in"
              + " backticks), not '" + table + "'");
    }
    if (format != null && !io.floe.sql.FileSource.FORMATS.contains(format.toLowerCase(java.util.Locale.ROOT))) {
      throw new picocli.CommandLine.ParameterException(spec.commandLine(),
          "--format must be json, csv or parquet, not '" + format + "'");
    }
    for (String key : options.keySet()) {
      if (!key.matches("[A-Za-z_][A-Za-z0-9_.]*")) {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
            "--option names a reader option such as sep=';', not '" + key + "'");
      }
    }
    Path warehouse = lakehouse.warehouse(LakehouseOptions.floeHome().resolve("warehouse"));
    // A running server's warm session spares this command Spark's start-up.
    java.util.Optional<io.floe.server.ServerInfo> server = lakehouse.server(warehouse, noServer, spec.commandLine().getErr());
    SqlSession session =
        server.isPresent() ? new RemoteSqlSession(server.get()) : EmbeddedSqlSession.start(lakehouse, warehouse);
    StatementRunner runner =
        new StatementRunner(session, spec.commandLine().getOut(), spec.commandLine().getErr(), OutputFormat.TABLE, !noTiming);
    return runner.run(statement()) ? 0 : 1;
  }

  /** The statement the shortcut runs. */
  String statement() {
    StringBuilder args = new StringBuilder(literal(isUri(path) ? path : Path.of(path).toAbsolutePath().toString()));
    if (format != null) {
      args.append(", format => ").append(literal(format));
    }
    options.forEach((key, value) -> args.append(", ").append(key).append(" => ").append(literal(value)));
    return "CREATE OR REFRESH STREAMING TABLE " + table + " AS SELECT * FROM STREAM read_files(" + args + ")";
  }

  private static boolean isUri(String path) {
    return path.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*");
  }

  private static String literal(String text) {
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
