package io.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class IngestCommandTest {

  private static IngestCommand parse(String... args) {
    IngestCommand command = new IngestCommand();
    new CommandLine(command).parseArgs(args);
    return command;
  }

  @Test
  void theShortcutIsCreateOrRefreshStreamingTableOverTheAbsolutePath() {
    String statement = parse("landing/orders", "--into", "bronze.orders").statement();
    assertThat(statement).isEqualTo(
        "CREATE OR REFRESH STREAMING TABLE bronze.orders AS SELECT * FROM STREAM read_files('"
            + Path.of("landing/orders").toAbsolutePath() + "')");
  }

  @Test
  void formatOptionsAndUrisArePassedThroughQuoted() {
    String statement =
        parse("s3a://bucket/it's", "--into", "t", "--format", "csv", "--option", "sep=;").statement();
    assertThat(statement).isEqualTo(
        "CREATE OR REFRESH STREAMING TABLE t AS SELECT * FROM STREAM read_files('s3a://bucket/it\\'s', "
            + "format => 'csv', sep => ';')");
  }

  @Test
  void aTableNameFormatOrOptionThatWouldChangeTheStatementIsAUsageError() {
    for (String[] args : new String[][] {
      {"landing", "--into", "bronze.o5 COMMENT 'injected'"},
      {"landing", "--into", "t; DROP TABLE t"},
      {"landing", "--into", "t", "--format", "xml"},
      {"landing", "--into", "t", "--option", "sep => ',', x=1"},
    }) {
      java.io.StringWriter err = new java.io.StringWriter();
      CommandLine cli = new CommandLine(new IngestCommand());
      cli.setErr(new java.io.PrintWriter(err, true));
      assertThat(cli.execute(args)).as(String.join(" ", args)).isEqualTo(2);
      assertThat(err.toString()).containsAnyOf("--into must be a table name", "--format must be json, csv or parquet",
          "--option names a reader option");
    }
    assertThat(parse("landing", "--into", "lake.`odd name`.t").statement()).startsWith(
        "CREATE OR REFRESH STREAMING TABLE lake.`odd name`.t AS");
  }
}
