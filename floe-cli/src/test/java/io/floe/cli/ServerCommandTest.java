package io.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code floe server} refusing to start, in-process: the failures that come before Spark starts. */
class ServerCommandTest {
  @TempDir Path warehouse;

  @Test
  void aPortOutOfRangeIsOneLineNamingTheAddressAndExitsAsAStartupError() throws Exception {
    StringWriter err = new StringWriter();
    CommandLine cmd = Floe.commandLine();
    cmd.setOut(new PrintWriter(new StringWriter(), true));
    cmd.setErr(new PrintWriter(err, true));
    int code = cmd.execute("server", "--warehouse", warehouse.toString(), "--port", "99999");
    assertThat(code).isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo("Error: Cannot start floe server on 127.0.0.1:99999: port 99999 is out of range 0-65535"
            + System.lineSeparator());
    // Refused before the warehouse was locked: nothing holds it.
    assertThat(Files.exists(warehouse.resolve("floe-server.lock"))).isFalse();
  }
}
