package io.floe.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code floe} command. */
@Command(
    name = "floe",
    mixinStandardHelpOptions = true,
    versionProvider = Floe.Version.class,
    description = "Declarative lakehouse pipelines: incrementally refreshed Apache Iceberg materialized views.",
    subcommands = {
      SqlCommand.class,
      RunCommand.class,
      ServerCommand.class,
      DryRunCommand.class,
      InitCommand.class,
      IngestCommand.class,
      DemoCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Floe {
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  static CommandLine commandLine() {
    CommandLine commandLine = new CommandLine(new Floe());
    commandLine.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          org.slf4j.LoggerFactory.getLogger(Floe.class).error("floe failed", e);
          cmd.getErr().println("Error: " + io.floe.cli.output.FailureLine.of(e));
          return 2;
        });
    return commandLine;
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = Floe.class.getPackage().getImplementationVersion();
      return new String[] {"floe " + (version == null ? "development build" : version)};
    }
  }
}
