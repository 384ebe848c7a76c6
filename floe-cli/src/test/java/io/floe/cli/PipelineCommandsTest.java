package io.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.demo.data.TripsGenerator;
import io.floe.spark.SharedSpark;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code floe init}, {@code floe dry-run} and {@code floe run} in-process, on the shared test lakehouse. */
class PipelineCommandsTest {
  @TempDir Path folder;

  private record Run(int exitCode, String out, String err) {}

  private static Run floe(String command, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Floe.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    String[] all = new String[args.length + 2];
    all[0] = command;
    all[1] = "--warehouse=" + SharedSpark.warehouse();
    System.arraycopy(args, 0, all, 2, args.length);
    int code = cmd.execute(all);
    return new Run(code, out.toString(), err.toString());
  }

  private static long count(String sql) {
    return SharedSpark.session().sql(sql).count();
  }

  @Test
  void initWithoutTripsWritesNothing() {
    StringWriter err = new StringWriter();
    CommandLine init = Floe.commandLine();
    init.setErr(new PrintWriter(err, true));
    assertThat(init.execute("init", "no_trips", "--dir", folder.toString(), "--trips", "0")).isNotZero();
    assertThat(err.toString()).contains("Cannot create pipeline no_trips: --trips must be at least 1, not 0");
    assertThat(folder.resolve("no_trips")).doesNotExist();
  }

  @Test
  void initScaffoldsATripsPipelineThatChecksRunsAndPicksUpANewFile() throws IOException {
    String name = "trips_" + Long.toHexString(System.nanoTime());
    CommandLine init = Floe.commandLine();
    assertThat(init.execute("init", name, "--dir", folder.toString(), "--trips", "60")).isZero();
    Path project = folder.resolve(name);
    assertThat(project.resolve("floe.yml")).exists();
    assertThat(project.resolve("data/trips/trips-0001.jsonl")).exists();

    Run check = floe("dry-run", project.toString());
    assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
    // Before its first load the Bronze table has no columns to check its readers against: they are
    // listed as not checked, not passed.
    assertThat(check.out()).contains("Pipeline " + name + ": 4 datasets in 3 files")
        .contains("lake." + name + ".mv_trips_silver  (")
        .contains("No problems found in what could be checked; 3 datasets are NOT CHECKED")
        .doesNotContain("No problems found.");
    assertThat(check.out().lines().filter(line -> line.endsWith("NOT CHECKED")).count()).isEqualTo(3);

    Run first = floe("run", project.toString());
    assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
    assertThat(first.out())
        .contains("REFRESHED  lake." + name + ".trips_bronze  loaded 1 new file, 60 rows")
        .contains("Pipeline " + name + " finished in");
    long silverRows = count("SELECT * FROM lake." + name + ".mv_trips_silver");
    assertThat(silverRows).isPositive();
    Run recheck = floe("dry-run", project.toString());
    assertThat(recheck.out()).contains("No problems found.").doesNotContain("NOT CHECKED");

    InitCommand.writeTrips(project.resolve("data/trips/trips-0002.jsonl"), TripsGenerator.generate(5, 7));
    Run second = floe("run", project.toString());
    assertThat(second.exitCode()).as(second.out() + second.err()).isZero();
    assertThat(second.out())
        .contains("lake." + name + ".trips_bronze  loaded 1 new file, 5 rows")
        .contains("lake." + name + ".mv_trips_silver  INCREMENTAL")
        .contains("lake." + name + ".mv_city_daily_metrics  INCREMENTAL");
    assertThat(count("SELECT * FROM lake." + name + ".trips_bronze")).isEqualTo(65);
  }

  @Test
  void dryRunListsEveryProblemAndExitsOne() throws IOException {
    Path project = folder.resolve("broken");
    Files.createDirectories(project);
    Files.writeString(project.resolve("spark-pipeline.yml"), "name: broken\ncatalog: lake\ndatabase: nowhere_" + Long.toHexString(System.nanoTime()) + "\n");
    Files.writeString(project.resolve("a.sql"), "CREATE MATERIALIZED VIEW a AS SELECT * FROM b;\nCREATE MATERIALIZED VIEW b AS SELECT * FROM a;\n");
    Files.writeString(project.resolve("c.sql"), "DELETE FROM somewhere;\n");
    Run check = floe("dry-run", project.toString());
    assertThat(check.exitCode()).isEqualTo(1);
    assertThat(check.out()).contains("2 problems:").contains("c.sql:1: ").contains("cycle");
    Run run = floe("run", project.toString());
    assertThat(run.exitCode()).isNotZero();
    assertThat(run.err()).contains("Error: Pipeline broken has 2 problems");
  }
}
