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
}
