package io.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code floe sql} in-process, on the shared test lakehouse. */
class SqlCommandTest {
  private static String ns;

  @BeforeAll
  static void createNamespace() {
    ns = SharedSpark.freshNamespace("cli");
  }

  private record Run(int exitCode, String out, String err) {}

  private static Run floe(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Floe.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    String[] all = new String[args.length + 2];
    all[0] = "sql";
    all[1] = "--warehouse=" + SharedSpark.warehouse();
    System.arraycopy(args, 0, all, 2, args.length);
    int code = cmd.execute(all);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void executesStatementsAndPrintsAnAlignedTable() {
    Run run =
        floe(
            "-e",
            "CREATE TABLE lake." + ns + ".cities (name STRING, pop INT); "
                + "INSERT INTO lake." + ns + ".cities VALUES ('Osaka', 2), ('Tokyo', 14); "
                + "SELECT name, pop FROM lake." + ns + ".cities ORDER BY name");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .isEqualTo(
            "+-----+---+\n"
                + "|name |pop|\n"
                + "+-----+---+\n"
                + "|Osaka|2  |\n"
                + "|Tokyo|14 |\n"
                + "+-----+---+\n");
    assertThat(run.err()).contains("(2 rows, ");
  }

  @Test
  void printsWhatAQueryScannedAndTheViewThatAnsweredIt() {
    String t = "lake." + ns + ".stats_t";
    Run plain =
        floe(
            "-e",
            "CREATE TABLE " + t + " (k STRING, v INT); INSERT INTO " + t + " VALUES ('a', 1), ('b', 2); "
                + "INSERT INTO " + t + " VALUES ('a', 3); SELECT k, sum(v) FROM " + t + " GROUP BY k");
    assertThat(plain.exitCode()).as(plain.err()).isZero();
    // Two inserts, at least a data file each, all read; their bytes are those Iceberg reports.
    assertThat(plain.err()).containsPattern("\\(scanned [2-9] data files, [1-9][0-9.]* (B|KiB); 0 files pruned\\)");
    // A filter outside the first file's value range prunes it, in every output format.
    Run pruned = floe("--format", "json", "-e", "SELECT k FROM " + t + " WHERE v > 2");
    assertThat(pruned.exitCode()).as(pruned.err()).isZero();
    assertThat(pruned.out()).isEqualTo("{\"k\":\"a\"}\n");
    assertThat(pruned.err()).containsPattern("\\(scanned 1 data file, [1-9][0-9.]* (B|KiB); [1-9] files? pruned\\)");

    Run answered =
        floe(
            "-e",
            "CREATE MATERIALIZED VIEW " + t + "_mv AS SELECT k, sum(v) AS s FROM " + t + " GROUP BY k; "
                + "SET spark.sql.optimizer.answerQueriesWithMVs.enabled=true; SET floe.rewrite.report=true; "
                + "SELECT k, sum(v) FROM " + t + " GROUP BY k; "
                + "SET spark.sql.optimizer.answerQueriesWithMVs.enabled=false; SET floe.rewrite.report=false");
    assertThat(answered.exitCode()).as(answered.err()).isZero();
    assertThat(answered.err())
        .containsPattern("\\(scanned [1-9][0-9]* data files?, [1-9][0-9.]* (B|KiB); 0 files pruned; answered from ")
        .contains("; answered from " + t + "_mv)")
        .contains("rewrite: answered from " + t + "_mv: same groups, columns read as stored");

    Run quiet = floe("--no-stats", "-e", "SELECT k FROM " + t);
    assertThat(quiet.err()).contains("(3 rows, ").doesNotContain("scanned");
    // Each option hides its own line.
    Run untimed = floe("--no-timing", "-e", "SELECT k FROM " + t);
    assertThat(untimed.err()).doesNotContain("(3 rows, ").contains("(scanned ");
  }

  @Test
  void printsCsvAndJson() {
    floe("-e", "CREATE TABLE lake." + ns + ".fmt (k STRING, v INT); INSERT INTO lake." + ns + ".fmt VALUES ('a,b', 1), ('c', NULL)");
    Run csv = floe("--format", "csv", "--no-timing", "-e", "SELECT k, v FROM lake." + ns + ".fmt ORDER BY k");
    assertThat(csv.out()).isEqualTo("k,v\n\"a,b\",1\nc,\n");
    Run json = floe("--format", "json", "--no-timing", "-e", "SELECT k, v FROM lake." + ns + ".fmt ORDER BY k");
    assertThat(json.out()).isEqualTo("{\"k\":\"a,b\",\"v\":1}\n{\"k\":\"c\",\"v\":null}\n");
  }

  @Test
  void failingStatementPrintsOneLineNamingTheObjectAndExitsNonZero() {
    Run run = floe("-e", "SELECT * FROM lake." + ns + ".no_such_table");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err().strip().lines()).hasSize(1);
    assertThat(run.err()).startsWith("Error: ").contains("no_such_table").doesNotContain("\tat ");
  }

  @Test
  void refusedMaterializedViewPrintsFloesMessage() {
    floe("-e", "CREATE TABLE lake." + ns + ".src (x INT)");
    Run run = floe("-e", "CREATE MATERIALIZED VIEW lake." + ns + ".r AS SELECT x, rand() AS r FROM lake." + ns + ".src");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err().strip())
        .isEqualTo(
            "Error: Cannot create materialized view lake." + ns
                + ".r: its definition calls the non-deterministic function rand(); a materialized view must give the same rows for the same source data");
  }

  @Test
  void runsAScriptFileAndStopsAtTheFirstFailure(@TempDir Path dir) throws IOException {
    Path script = dir.resolve("script.sql");
    Files.writeString(
        script,
        "-- a comment; with a semicolon\n"
            + "CREATE TABLE lake." + ns + ".script_t (s STRING);\n"
            + "INSERT INTO lake." + ns + ".script_t VALUES ('x;y');\n"
            + "SELECT * FROM lake." + ns + ".missing;\n"
            + "INSERT INTO lake." + ns + ".script_t VALUES ('never');\n");
    Run run = floe("-f", script.toString());
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).contains("missing")
        .contains("(statement 3 of 4, line 4, failed; the 2 before it ran, the one after it did not run)");
    Run check = floe("--format", "csv", "--no-timing", "-e", "SELECT s FROM lake." + ns + ".script_t");
    assertThat(check.out()).isEqualTo("s\nx;y\n");
    Files.writeString(script, "SELECT 1;\nSELECT * FROM lake." + ns + ".missing;\n");
    assertThat(floe("-f", script.toString()).err()).contains("(statement 2 of 2, line 2, failed; the one before it ran)\n");
    Files.writeString(script, "SELECT * FROM lake." + ns + ".missing;\nSELECT 1;\nSELECT 2;\n");
    assertThat(floe("-f", script.toString()).err()).contains("(statement 1 of 3, line 1, failed; the 2 after it did not run)\n");

    Path notAFolder = Files.writeString(dir.resolve("warehouse.txt"), "");
    StringWriter fileErr = new StringWriter();
    CommandLine onAFile = Floe.commandLine();
    onAFile.setErr(new PrintWriter(fileErr, true));
    assertThat(onAFile.execute("sql", "--no-server", "--warehouse=" + notAFolder, "-e", "SELECT 1")).isEqualTo(2);
    assertThat(fileErr.toString().strip())
        .isEqualTo("Error: Cannot use warehouse folder " + notAFolder + ": " + notAFolder + " is a file");

    Run folder = floe("-f", dir.toString());
    assertThat(folder.exitCode()).isEqualTo(2);
    assertThat(folder.err().strip()).isEqualTo("Error: cannot read SQL file " + dir + ": it is a folder");
  }

  /** Standard input that is not a terminal is a script: results only on the output, and a last statement without ';' runs. */
  @Test
  void pipedStandardInputRunsAsAScript() {
    java.io.InputStream stdin = System.in;
    try {
      String t = "lake." + ns + ".piped_t";
      System.setIn(new java.io.ByteArrayInputStream(
          ("CREATE TABLE " + t + " (i INT);\nINSERT INTO " + t + " VALUES (2);\nINSERT INTO " + t + " VALUES (3)")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      Run piped = floe("--format", "csv", "--no-timing");
      assertThat(piped.exitCode()).as(piped.err()).isZero();
      assertThat(piped.out()).isEmpty();
      System.setIn(new java.io.ByteArrayInputStream(
          ("SELECT i FROM " + t + " ORDER BY i;").getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      Run dash = floe("--format", "csv", "--no-timing", "-f", "-");
      assertThat(dash.out()).isEqualTo("i\n2\n3\n");
    } finally {
      System.setIn(stdin);
    }
  }

  @Test
  void classArchiveTrainingScriptRunsOnAFreshWarehouse() {
    // bin/floe runs this script once after each build to archive the classes commands load; a
    // statement that fails there leaves every command to start without the archive.
    Path script = Path.of("").toAbsolutePath().resolveSibling("bin").resolve("class-archive-training.sql");
    Run run = floe("--format", "csv", "--no-timing", "--no-stats", "-f", script.toString());
    assertThat(run.err()).isEmpty();
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("lake.training.silver,INCREMENTAL").endsWith("id,city,fare\n1,A,10.0\n");
  }

  @Test
  void threePartNamesAndUseWork() {
    Run run =
        floe(
            "--format", "csv", "--no-timing", "-e",
            "USE lake." + ns + "; CREATE TABLE used_t (i INT); INSERT INTO used_t VALUES (7); "
                + "SELECT i FROM lake." + ns + ".used_t");
    assertThat(run.out()).isEqualTo("i\n7\n");
  }
}
