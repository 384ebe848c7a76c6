package io.floe.spark.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.pipeline.PipelineProject;
import io.floe.refresh.RefreshType;
import io.floe.spark.mv.MvTestSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.sql.classic.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineRunTest extends MvTestSupport {
  @TempDir Path project;

  @Override
  protected String prefix() {
    return "pipeline";
  }

  @BeforeEach
  void bronze() {
    sql("CREATE TABLE trips (id INT, city STRING, amount DOUBLE, status STRING) USING iceberg");
    sql("INSERT INTO trips VALUES (1, 'Austin', 10.0, 'completed'), (2, 'Austin', 5.0, 'completed'),"
        + " (3, 'Boston', 7.0, 'cancelled'), (4, 'Boston', 3.0, 'completed')");
  }

  private void write(String file, String text) throws IOException {
    Path path = project.resolve(file);
    Files.createDirectories(path.getParent());
    Files.writeString(path, text);
  }

  private void sdpProject() throws IOException {
    write("spark-pipeline.yml", """
        name: trips
        catalog: lake
        database: %s
        libraries:
          - glob:
              include: transformations/**
        configuration:
          spark.sql.shuffle.partitions: "2"
        """.formatted(ns));
    // Gold first: file order must not matter.
    write("transformations/a_gold.sql", """
        -- Gold reads Silver, defined in a later file.
        CREATE MATERIALIZED VIEW city_revenue AS
        SELECT city, COUNT(*) AS trips, SUM(amount) AS revenue FROM trips_silver GROUP BY city;
        """);
    write("transformations/b_silver.sql", """
        CREATE TEMPORARY VIEW completed AS SELECT * FROM trips WHERE status = 'completed';
        CREATE MATERIALIZED VIEW trips_silver AS
        SELECT id, city, amount FROM completed WHERE amount > 0;
        """);
  }

  private PipelineRunResult run(PipelineRun run) {
    return run.run();
  }

  private PipelineRun pipeline() {
    return PipelineRun.of((SparkSession) spark, PipelineProject.load(project));
  }

  private static Map<String, PipelineRun.DatasetOutcome> byName(PipelineRunResult result) {
    return result.datasets().stream()
        .collect(Collectors.toMap(d -> d.dataset().substring(d.dataset().lastIndexOf('.') + 1), d -> d));
  }

  @Test
  void graphOrdersDatasetsAcrossFilesAndInlinesTemporaryViews() throws IOException {
    sdpProject();
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    assertThat(graph.problems()).isEmpty();
    assertThat(graph.inOrder()).extracting(PipelineDataset::name)
        .containsExactly("lake." + ns + ".trips_silver", "lake." + ns + ".city_revenue");
    PipelineDataset silver = graph.datasets().get("lake." + ns + ".trips_silver");
    assertThat(silver.sources()).containsExactly("lake." + ns + ".trips");
    assertThat(silver.materializedView().query()).startsWith("WITH `completed` AS (");
    assertThat(graph.settings()).containsEntry("spark.sql.shuffle.partitions", "2");
  }

  @Test
  void aTemporaryViewNamedAsADatasetIsAProblemAndADefinitionsOwnCommonTableExpressionShadowsOne() throws IOException {
    sdpProject();
    spark.sql("CREATE TABLE lake." + ns + ".outside (x INT)");
    write("transformations/c_clash.sql", """
        CREATE TEMPORARY VIEW trips_silver AS SELECT 1 AS id;
        CREATE TEMPORARY VIEW outside AS SELECT 2 AS x;
        CREATE MATERIALIZED VIEW own_cte AS
        WITH completed AS (SELECT * FROM trips WHERE amount > 4) SELECT count(*) AS n FROM completed;
        """);
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));

    assertThat(graph.problems()).hasSize(2);
    PipelineProblem clash = graph.problems().get(0);
    assertThat(clash.location()).contains("c_clash.sql");
    assertThat(clash.message())
        .contains("temporary view has the name of the dataset lake." + ns + ".trips_silver")
        .contains("rename one of them");
    // A table the project does not define, but that the catalog holds.
    assertThat(graph.problems().get(1).message())
        .contains("temporary view has the name of lake." + ns + ".outside, which exists in the catalog")
        .contains("rename the temporary view");
    // The definition's own completed, not the temporary view of that name.
    PipelineDataset ownCte = graph.datasets().get("lake." + ns + ".own_cte");
    assertThat(ownCte.materializedView().query()).startsWith("WITH completed AS (SELECT * FROM trips WHERE amount > 4)");
  }

  @Test
  void runCreatesAndRefreshesThenAnUnchangedRunCommitsNothing() throws IOException {
    sdpProject();
    PipelineRunResult first = pipeline().run();
    assertThat(first.succeeded()).isTrue();
    assertThat(byName(first).get("trips_silver").state()).isEqualTo(PipelineEvent.State.REFRESHED);
    assertSameRows("SELECT * FROM city_revenue",
        "SELECT city, COUNT(*), SUM(amount) FROM trips WHERE status = 'completed' AND amount > 0 GROUP BY city", 2);
    assertThat(view("city_revenue").properties()).containsEntry(PipelineRun.PIPELINE, "trips");

    long silverSnapshots = storageSnapshotCount("trips_silver");
    PipelineRunResult second = pipeline().run();
    assertThat(byName(second).get("trips_silver").refresh().orElseThrow().type()).isEqualTo(RefreshType.NO_CHANGE);
    assertThat(storageSnapshotCount("trips_silver")).isEqualTo(silverSnapshots);

    sql("INSERT INTO trips VALUES (5, 'Chicago', 4.0, 'completed')");
    PipelineRunResult third = pipeline().run();
    assertThat(byName(third).get("trips_silver").refresh().orElseThrow().type()).isEqualTo(RefreshType.INCREMENTAL);
    assertThat(byName(third).get("city_revenue").refresh().orElseThrow().type()).isEqualTo(RefreshType.INCREMENTAL);
    assertSameRows("SELECT * FROM city_revenue",
        "SELECT city, COUNT(*), SUM(amount) FROM trips WHERE status = 'completed' AND amount > 0 GROUP BY city", 3);
  }

  @Test
  void aChangedDefinitionIsReplacedAndRefreshedInFullWhileItsReadersStayIncremental() throws IOException {
    sdpProject();
    pipeline().run();
    long storageId = table("trips_silver__storage").uuid() == null ? 0 : 1;
    String storageUuid = table("trips_silver__storage").uuid().toString();
    int version = view("trips_silver").currentVersion().versionId();
    write("transformations/b_silver.sql", """
        CREATE TEMPORARY VIEW completed AS SELECT * FROM trips WHERE status = 'completed';
        CREATE MATERIALIZED VIEW trips_silver AS
        SELECT id, city, amount FROM completed WHERE amount > 4;
        """);
    PipelineRunResult result = pipeline().run();
    Map<String, PipelineRun.DatasetOutcome> outcomes = byName(result);
    assertThat(outcomes.get("trips_silver").refresh().orElseThrow().type()).isEqualTo(RefreshType.FULL);
    assertThat(outcomes.get("trips_silver").detail()).startsWith("replaced");
    assertThat(outcomes.get("city_revenue").refresh().orElseThrow().type()).isEqualTo(RefreshType.INCREMENTAL);
    assertThat(view("trips_silver").currentVersion().versionId()).isGreaterThan(version);
    assertThat(table("trips_silver__storage").uuid().toString()).isEqualTo(storageUuid);
    assertThat(storageId).isEqualTo(1);
    assertSameRows("SELECT * FROM city_revenue",
        "SELECT city, COUNT(*), SUM(amount) FROM trips WHERE status = 'completed' AND amount > 4 GROUP BY city", 1);
  }

  @Test
  void aReplacementWhoseRefreshFailsKeepsTheViewsItReplacedWithTheirRows() throws IOException {
    sdpProject();
    pipeline().run();
    int silverVersion = view("trips_silver").currentVersion().versionId();
    int goldVersion = view("city_revenue").currentVersion().versionId();
    String silverStorage = table("trips_silver__storage").uuid().toString();
    // A new column (so a new storage table) whose values fail on the data, and a new Gold reading it.
    write("transformations/b_silver.sql", """
        CREATE TEMPORARY VIEW completed AS SELECT * FROM trips WHERE status = 'completed';
        CREATE MATERIALIZED VIEW trips_silver AS
        SELECT id, city, amount, CAST(status AS INT) AS code FROM completed WHERE amount > 0;
        """);
    write("transformations/a_gold.sql", """
        CREATE MATERIALIZED VIEW city_revenue AS
        SELECT city, COUNT(*) AS trips, SUM(amount) AS revenue, MAX(code) AS code FROM trips_silver GROUP BY city;
        """);

    Map<String, PipelineRun.DatasetOutcome> outcomes = byName(pipeline().run());

    assertThat(outcomes.get("trips_silver").state()).isEqualTo(PipelineEvent.State.FAILED);
    assertThat(outcomes.get("trips_silver").detail())
        .contains("its first refresh failed, so it keeps its previous definition and rows")
        .contains("CAST_INVALID_INPUT");
    assertThat(outcomes.get("city_revenue").state()).isEqualTo(PipelineEvent.State.SKIPPED);
    assertThat(outcomes.get("city_revenue").detail()).contains("keeps its previous definition and rows");
    assertThat(view("trips_silver").currentVersion().versionId()).isEqualTo(silverVersion);
    assertThat(view("city_revenue").currentVersion().versionId()).isEqualTo(goldVersion);
    assertThat(table("trips_silver__storage").uuid().toString()).isEqualTo(silverStorage);
    assertThat(count("SELECT * FROM trips_silver")).isEqualTo(3);
    assertSameRows("SELECT * FROM city_revenue",
        "SELECT city, COUNT(*), SUM(amount) FROM trips WHERE status = 'completed' AND amount > 0 GROUP BY city", 2);
    assertThat(spark.catalog().tableExists(ns + ".trips_silver__storage__replaced")).isFalse();

    // Fixed, the next run replaces both.
    write("transformations/b_silver.sql", """
        CREATE TEMPORARY VIEW completed AS SELECT * FROM trips WHERE status = 'completed';
        CREATE MATERIALIZED VIEW trips_silver AS
        SELECT id, city, amount, length(status) AS code FROM completed WHERE amount > 0;
        """);
    outcomes = byName(pipeline().run());
    assertThat(outcomes.get("trips_silver").state()).isEqualTo(PipelineEvent.State.REFRESHED);
    assertThat(outcomes.get("city_revenue").state()).isEqualTo(PipelineEvent.State.REFRESHED);
    assertThat(count("SELECT * FROM city_revenue WHERE code = 9")).isEqualTo(2);
  }

  @Test
  void aViewKeepsThePipelinesSettingsForTheRefreshesAfterTheRun() throws IOException {
    sdpProject();
    write("transformations/c_hours.sql", """
        CREATE MATERIALIZED VIEW before_set AS SELECT id, hour(timestamp_seconds(id * 3600)) AS h FROM trips_silver;
        SET spark.sql.session.timeZone = Asia/Tokyo;
        CREATE MATERIALIZED VIEW stamped AS SELECT id, hour(timestamp_seconds(id * 3600)) AS h FROM trips_silver;
        """);
    pipeline().run();
    String timeZone = io.floe.spark.mv.DefinitionSettings.PREFIX + "spark.sql.session.timeZone";
    assertThat(view("stamped").properties()).containsEntry(timeZone, "Asia/Tokyo");
    // A SET applies to the statements after it in its own file, as in Spark Declarative Pipelines.
    assertThat(view("before_set").properties().get(timeZone)).isNotEqualTo("Asia/Tokyo");
    assertThat(view("trips_silver").properties().get(timeZone)).isNotEqualTo("Asia/Tokyo");
    assertThat(spark.conf().get("spark.sql.session.timeZone")).as("the run leaves the session as it was").isNotEqualTo("Asia/Tokyo");

    // Refreshed outside the run, in a session of another time zone, the new row is Tokyo's hour.
    spark.conf().set("spark.sql.session.timeZone", "UTC");
    try {
      sql("INSERT INTO trips VALUES (5, 'Austin', 2.0, 'completed')");
      sql("REFRESH MATERIALIZED VIEW trips_silver");
      assertThat(sql("REFRESH MATERIALIZED VIEW stamped").get(0).getString(1)).isEqualTo("INCREMENTAL");
      assertThat(sql("SELECT h FROM stamped WHERE id = 5").get(0).getInt(0)).isEqualTo(14);
    } finally {
      spark.conf().unset("spark.sql.session.timeZone");
    }
  }

  /**
   * The dry run checks each definition under the SETs before it in its file, as the run defines
   * it: a setting that changes analysis (here case sensitivity) changes what is a problem.
   */
  @Test
  void aDryRunChecksEachDefinitionUnderTheSettingsBeforeIt() throws IOException {
    sdpProject();
    write("transformations/c_case.sql", """
        CREATE MATERIALIZED VIEW loud_before AS SELECT ID FROM trips_silver;
        SET spark.sql.caseSensitive = true;
        CREATE MATERIALIZED VIEW loud_after AS SELECT ID FROM trips_silver;
        """);
    List<String> problems = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project))).stream()
        .map(PipelineProblem::toString).toList();
    assertThat(problems).hasSize(1);
    assertThat(problems.get(0)).startsWith("transformations/c_case.sql:3: ").contains("loud_after").contains("ID");
    assertThat(((SparkSession) spark).sessionState().conf().contains("spark.sql.caseSensitive"))
        .as("the check leaves the session as it was: the key unset, not set to its default").isFalse();
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> pipeline().run()))
        .hasMessageContaining("has 1 problem").hasMessageContaining("loud_after");
  }

  @Test
  void removedDatasetsAreReportedAndDroppedOnlyWithPrune() throws IOException {
    sdpProject();
    pipeline().run();
    Files.delete(project.resolve("transformations/a_gold.sql"));
    PipelineRunResult kept = pipeline().run();
    assertThat(byName(kept).get("city_revenue").state()).isEqualTo(PipelineEvent.State.REMOVED);
    assertThat(viewExists("city_revenue")).isTrue();
    PipelineRunResult pruned = pipeline().prune(true).run();
    assertThat(byName(pruned).get("city_revenue").state()).isEqualTo(PipelineEvent.State.DROPPED);
    assertThat(viewExists("city_revenue")).isFalse();
  }

  /**
   * Every materialized view of the pipeline removed, only a streaming table fed by files left: the
   * removed views are still found, in the pipeline's own namespace.
   */
  @Test
  void removedDatasetsAreFoundWhenOnlyAStreamingTableFedByFilesIsLeft() throws IOException {
    sdpProject();
    pipeline().run();
    Files.delete(project.resolve("transformations/a_gold.sql"));
    write("data/orders/a.json", "{\"id\": 1}\n");
    write("transformations/b_silver.sql",
        "CREATE STREAMING TABLE raw_orders AS SELECT * FROM STREAM read_files('data/orders', format => 'json');\n");
    PipelineRunResult kept = pipeline().run();
    assertThat(byName(kept).get("city_revenue").state()).isEqualTo(PipelineEvent.State.REMOVED);
    assertThat(byName(kept).get("trips_silver").state()).isEqualTo(PipelineEvent.State.REMOVED);
    PipelineRunResult pruned = pipeline().prune(true).run();
    assertThat(byName(pruned).get("city_revenue").state()).isEqualTo(PipelineEvent.State.DROPPED);
    assertThat(byName(pruned).get("trips_silver").state()).isEqualTo(PipelineEvent.State.DROPPED);
    assertThat(viewExists("trips_silver")).isFalse();
    assertThat(count("SELECT * FROM raw_orders")).isEqualTo(1);

    // The streaming table over files removed in turn: reported and kept, dropped only with prune.
    write("data/more/a.json", "{\"id\": 2}\n");
    write("transformations/b_silver.sql",
        "CREATE STREAMING TABLE raw_more AS SELECT * FROM STREAM read_files('data/more');\n");
    PipelineRunResult keptTable = pipeline().run();
    assertThat(byName(keptTable).get("raw_orders").state()).isEqualTo(PipelineEvent.State.REMOVED);
    assertThat(count("SELECT * FROM raw_orders")).isEqualTo(1);
    PipelineRunResult prunedTable = pipeline().prune(true).run();
    assertThat(byName(prunedTable).get("raw_orders").state()).isEqualTo(PipelineEvent.State.DROPPED);
    assertThat(tableExists("raw_orders")).isFalse();
    assertThat(count("SELECT * FROM raw_more")).isEqualTo(1);
  }

  /**
   * Before a streaming table exists, its readers are checked against its declared columns; a
   * streaming table over files declares none (its files give them at its first load), so its
   * readers are reported as not checked rather than passed.
   */
  @Test
  void readersOfStreamingTablesNotCreatedYetAreCheckedAgainstDeclaredColumnsOrReportedUnchecked() throws IOException {
    write("floe.yml", "name: early\ncatalog: lake\nnamespace: " + ns + "\n");
    write("data/x/a.json", "{\"a\": 1}\n");
    write("p.sql", """
        CREATE STREAMING TABLE tgt (a INT, b STRING);
        CREATE MATERIALIZED VIEW from_tgt AS SELECT nosuch FROM tgt;
        CREATE MATERIALIZED VIEW fine_from_tgt AS SELECT a, b FROM tgt;
        CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('data/x', format => 'json');
        CREATE MATERIALIZED VIEW from_raw AS SELECT * FROM raw;
        """);
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    PipelineValidator validator = new PipelineValidator((SparkSession) spark);

    List<PipelineProblem> problems = validator.validate(graph);

    assertThat(problems).singleElement().satisfies(problem -> {
      assertThat(problem.dataset()).isEqualTo("lake." + ns + ".from_tgt");
      assertThat(problem.message()).contains("nosuch");
    });
    assertThat(validator.unchecked()).containsExactly("lake." + ns + ".from_raw");
  }

  /**
   * A streaming table over files loads each file once with the options it was created with: a
   * changed option is refused (new files would be parsed another way than the loaded ones), naming
   * both and the remedy, and so is a full refresh of it, which would load nothing again.
   */
  @Test
  void aStreamingTableOverFilesRefusesChangedOptionsAndAFullRefresh() throws IOException {
    write("floe.yml", "name: files\ncatalog: lake\nnamespace: " + ns + "\n");
    write("data/csv/a.csv", "id,name\n1,ann\n");
    write("bronze.sql",
        "CREATE STREAMING TABLE raw_people AS SELECT * FROM STREAM read_files('data/csv', format => 'csv', header => 'true');\n");
    assertThat(pipeline().run().succeeded()).isTrue();

    write("data/csv/b.csv", "id;name\n2;bob\n");
    write("bronze.sql",
        "CREATE STREAMING TABLE raw_people AS SELECT * FROM STREAM read_files('data/csv', format => 'csv', header => 'true', sep => ';');\n");
    PipelineRunResult changed = pipeline().run();
    assertThat(changed.succeeded()).isFalse();
    assertThat(byName(changed).get("raw_people").detail())
        .contains("it reads its files with the options {header=true}, not {header=true, sep=;}")
        .contains("drop the table (DROP TABLE lake." + ns + ".raw_people)");
    assertSameRows("SELECT id, name FROM raw_people", "SELECT 1, 'ann'", 1);

    write("bronze.sql",
        "CREATE STREAMING TABLE raw_people AS SELECT * FROM STREAM read_files('data/csv', format => 'csv', header => 'true');\n");
    Throwable full = org.assertj.core.api.Assertions.catchThrowable(() -> pipeline().fullRefresh(List.of("raw_people")).run());
    assertThat(full).hasMessageContaining("Cannot fully refresh lake." + ns + ".raw_people: a streaming table over files"
        + " loads each file once and has no full refresh");
    assertSameRows("SELECT id, name FROM raw_people", "SELECT 1, 'ann'", 1);

    // The table is the pipeline's: another pipeline defining it is refused, and loads nothing.
    assertThat(table("raw_people").properties()).containsEntry(PipelineRun.PIPELINE, "files");
    write("floe.yml", "name: other\ncatalog: lake\nnamespace: " + ns + "\n");
    write("data/csv/c.csv", "id,name\n3,cy\n");
    PipelineRunResult other = pipeline().run();
    assertThat(byName(other).get("raw_people").detail()).contains("belongs to pipeline files");
    assertSameRows("SELECT id, name FROM raw_people", "SELECT 1, 'ann'", 1);
  }

  /**
   * A dataset whose kind changed (a materialized view now defined as a streaming table) is a
   * problem the dry run reports and the run refuses, naming the statement that would allow it;
   * the view keeps its rows.
   */
  @Test
  void aDatasetWhoseKindChangedIsAProblemAndKeepsItsRows() throws IOException {
    sdpProject();
    pipeline().run();
    write("transformations/b_silver.sql",
        "CREATE STREAMING TABLE trips_silver AS SELECT id, city, amount FROM STREAM(trips) WHERE amount > 0;\n");
    List<String> problems = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project))).stream()
        .map(PipelineProblem::toString).toList();
    assertThat(problems).anySatisfy(p -> assertThat(p)
        .contains("b_silver.sql")
        .contains("exists as a materialized view, and the project now defines it as a streaming table")
        .contains("DROP MATERIALIZED VIEW"));
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> pipeline().run()))
        .hasMessageContaining("exists as a materialized view");
    assertThat(count("SELECT * FROM trips_silver")).isEqualTo(3);
  }

  @Test
  void aFailingDatasetSkipsItsReadersAndKeepsWhatSucceeded() throws IOException {
    sdpProject();
    write("transformations/c_checked.sql", """
        CREATE MATERIALIZED VIEW checked AS
        SELECT id, amount FROM trips_silver WHERE assert_true(amount < 8, 'amount too large') IS NULL;
        CREATE MATERIALIZED VIEW after_checked AS SELECT id FROM checked;
        """);
    List<PipelineEvent> events = new ArrayList<>();
    PipelineRunResult result = pipeline().listener(events::add).run();
    Map<String, PipelineRun.DatasetOutcome> outcomes = byName(result);
    assertThat(result.succeeded()).isFalse();
    assertThat(outcomes.get("trips_silver").state()).isEqualTo(PipelineEvent.State.REFRESHED);
    assertThat(outcomes.get("city_revenue").state()).isEqualTo(PipelineEvent.State.REFRESHED);
    assertThat(outcomes.get("checked").state()).isEqualTo(PipelineEvent.State.FAILED);
    assertThat(outcomes.get("checked").detail()).contains("amount too large");
    assertThat(outcomes.get("after_checked").state()).isEqualTo(PipelineEvent.State.SKIPPED);
    assertThat(outcomes.get("after_checked").detail()).contains("checked failed");
    assertThat(events).extracting(PipelineEvent::state).contains(PipelineEvent.State.REFRESHING, PipelineEvent.State.FAILED);
    assertThat(count("SELECT * FROM trips_silver")).isEqualTo(3);
  }

  @Test
  void refreshSelectionAndFullRefreshSelection() throws IOException {
    sdpProject();
    pipeline().run();
    sql("INSERT INTO trips VALUES (6, 'Denver', 2.0, 'completed')");
    PipelineRunResult onlySilver = pipeline().refresh(List.of("trips_silver")).run();
    assertThat(byName(onlySilver).get("trips_silver").refresh()).isPresent();
    assertThat(byName(onlySilver).get("city_revenue").refresh()).isEmpty();
    PipelineRunResult full = pipeline().fullRefresh(List.of("city_revenue")).run();
    assertThat(byName(full).get("city_revenue").refresh().orElseThrow().type()).isEqualTo(RefreshType.FULL);
    assertThatThrownBy(() -> pipeline().refresh(List.of("nope")).run())
        .hasMessageContaining("Dataset nope is not defined in this pipeline");
  }

  @Test
  void validationReportsEveryProblemWithoutWritingAnything() throws IOException {
    write("floe.yml", "name: broken\ncatalog: lake\nnamespace: " + ns + "\n");
    write("one.sql", """
        CREATE MATERIALIZED VIEW bad_column AS SELECT no_such_column FROM trips;
        CREATE MATERIALIZED VIEW bad_table AS SELECT * FROM no_such_table;
        CREATE MATERIALIZED VIEW reads_bad AS SELECT * FROM bad_column;
        INSERT INTO trips VALUES (9, 'X', 1.0, 'completed');
        """);
    write("two.sql", """
        CREATE MATERIALIZED VIEW loop_a AS SELECT * FROM loop_b;
        CREATE MATERIALIZED VIEW loop_b AS SELECT * FROM loop_a;
        CREATE MATERIALIZED VIEW syntax AS SELEC id FROM trips;
        CREATE MATERIALIZED VIEW after_loop AS SELECT * FROM loop_a;
        """);
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    List<PipelineProblem> problems = new PipelineValidator((SparkSession) spark).validate(graph);
    List<String> text = problems.stream().map(PipelineProblem::toString).toList();
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:4: ").contains("starts with 'INSERT INTO trips'"));
    assertThat(text).anySatisfy(p -> assertThat(p).contains("cycle").contains("loop_a").contains("loop_b"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("two.sql:3: "));
    // The cycle does not hide the problems of the datasets outside it, and its readers are not checked.
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:1: ").contains("no_such_column"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:2: ").contains("no_such_table"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("two.sql:4: ").contains("not checked: it reads the cycle"));
    assertThat(text).hasSize(7);

    write("two.sql", "CREATE MATERIALIZED VIEW fine AS SELECT id FROM trips;\n");
    graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    text = new PipelineValidator((SparkSession) spark).validate(graph).stream().map(PipelineProblem::toString).toList();
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:1: ").contains("bad_column").contains("no_such_column"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:2: ").contains("no_such_table"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:3: ").contains("not checked"));
    assertThat(text).noneMatch(p -> p.contains("fine"));
    assertThat(viewExists("fine")).isFalse();
    assertThat(count("SELECT * FROM trips")).isEqualTo(4);
    assertThatThrownBy(() -> pipeline().run()).hasMessageContaining("Pipeline broken has").hasMessageContaining("no_such_table");
    assertThat(viewExists("fine")).isFalse();
  }

  @Test
  void aDatasetNameTakenOutsideThePipelineIsNotAdopted() throws IOException {
    sdpProject();
    sql("CREATE MATERIALIZED VIEW trips_silver AS SELECT id, city, amount FROM trips");
    PipelineRunResult result = pipeline().run();
    assertThat(byName(result).get("trips_silver").state()).isEqualTo(PipelineEvent.State.FAILED);
    assertThat(byName(result).get("trips_silver").detail()).contains("was not created by a pipeline");
    assertThat(byName(result).get("city_revenue").state()).isEqualTo(PipelineEvent.State.SKIPPED);
  }

  @Test
  void aStreamingTableLoadsOnlyNewFilesAndItsReadersRefreshIncrementally() throws IOException {
    write("floe.yml", "name: raw\ncatalog: lake\nnamespace: " + ns + "\n");
    write("data/orders/batch-1.jsonl", "{\"id\": 1, \"amount\": 5.0}\n{\"id\": 2, \"amount\": 7.5}\n");
    write("bronze.sql", """
        CREATE STREAMING TABLE orders_bronze
        AS SELECT * FROM STREAM read_files('data/orders', format => 'json');
        """);
    write("silver.sql", "CREATE MATERIALIZED VIEW orders_silver AS SELECT id, amount FROM orders_bronze WHERE amount > 6;\n");
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    PipelineValidator validator = new PipelineValidator((SparkSession) spark);
    assertThat(validator.validate(graph)).isEmpty();
    assertThat(validator.unchecked()).containsExactly("lake." + ns + ".orders_silver");

    PipelineRunResult first = pipeline().run();
    assertThat(first.succeeded()).isTrue();
    assertThat(byName(first).get("orders_bronze").detail()).startsWith("loaded 1 new file, 2 rows");
    assertThat(count("SELECT * FROM orders_silver")).isEqualTo(1);

    write("data/orders/batch-2.jsonl", "{\"id\": 3, \"amount\": 9.0}\n");
    PipelineRunResult second = pipeline().run();
    assertThat(byName(second).get("orders_bronze").detail()).startsWith("loaded 1 new file, 1 rows");
    assertThat(byName(second).get("orders_silver").refresh().orElseThrow().type()).isEqualTo(RefreshType.INCREMENTAL);
    assertSameRows("SELECT * FROM orders_silver", "SELECT id, amount FROM orders_bronze WHERE amount > 6", 2);
    assertThat(count("SELECT * FROM orders_bronze")).isEqualTo(3);
    assertThat(new PipelineValidator((SparkSession) spark).validate(
        PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)))).isEmpty();
  }

  @Test
  void aMissingFolderIsAProblemOfTheCheck() throws IOException {
    write("floe.yml", "name: raw\ncatalog: lake\nnamespace: " + ns + "\n");
    write("bronze.sql", "CREATE STREAMING TABLE nothing_here AS SELECT * FROM STREAM read_files('no/such/folder', format => 'csv');\n");
    List<PipelineProblem> problems = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)));
    assertThat(problems).singleElement().satisfies(p -> assertThat(p.toString()).startsWith("bronze.sql:1: ").contains("no/such/folder").contains("does not exist"));
  }

  /** An SDP project with streaming tables fed by tables and flows, as Spark Declarative Pipelines write them. */
  private void streamingProject() throws IOException {
    sql("CREATE TABLE web_raw (id INT, amount DOUBLE) USING iceberg");
    sql("CREATE TABLE shop_raw (id INT, amount DOUBLE) USING iceberg");
    sql("INSERT INTO web_raw VALUES (10, 12.0), (11, 3.0)");
    sql("INSERT INTO shop_raw VALUES (20, 8.0)");
    write("spark-pipeline.yml", """
        name: orders
        catalog: lake
        database: %s
        libraries:
          - glob:
              include: transformations/**
        """.formatted(ns));
    write("transformations/a_gold.sql", """
        CREATE MATERIALIZED VIEW revenue_by_channel AS
        SELECT channel, SUM(amount) AS revenue, COUNT(*) AS orders FROM all_orders GROUP BY channel;
        CREATE STREAMING TABLE big_orders AS SELECT id, amount, channel FROM STREAM(all_orders) WHERE amount > 5;
        """);
    write("transformations/b_orders.sql", """
        CREATE STREAMING TABLE all_orders;
        CREATE FLOW web_orders AS INSERT INTO all_orders BY NAME
        SELECT id, amount, 'web' AS channel FROM STREAM(web_raw);
        CREATE FLOW shop_orders AS INSERT INTO all_orders BY NAME
        SELECT id, amount, 'shop' AS channel FROM STREAM shop_raw;
        CREATE MATERIALIZED VIEW cities AS SELECT DISTINCT city FROM trips;
        -- Joins a view of the pipeline: that view refreshes first.
        CREATE STREAMING TABLE completed_trips AS
        SELECT t.id, upper(t.city) AS city, t.amount FROM STREAM(trips) t JOIN cities c ON t.city = c.city
        WHERE t.status = 'completed';
        """);
  }

  private static final String ALL_ORDERS =
      "SELECT id, amount, 'web' FROM web_raw UNION ALL SELECT id, amount, 'shop' FROM shop_raw";

  @Test
  void anSdpProjectWithStreamingTablesAndFlowsRunsUnchangedAndIncrementally() throws IOException {
    streamingProject();
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    assertThat(graph.problems()).isEmpty();
    List<String> order = graph.inOrder().stream().map(d -> d.name().substring(d.name().lastIndexOf('.') + 1)).toList();
    assertThat(order.indexOf("all_orders")).isLessThan(order.indexOf("big_orders")).isLessThan(order.size());
    assertThat(order.indexOf("all_orders")).isLessThan(order.indexOf("revenue_by_channel"));
    assertThat(order.indexOf("cities")).isLessThan(order.indexOf("completed_trips"));
    assertThat(graph.datasets().get("lake." + ns + ".completed_trips").sources())
        .containsExactlyInAnyOrder("lake." + ns + ".trips", "lake." + ns + ".cities");
    assertThat(graph.datasets().get("lake." + ns + ".all_orders").sources())
        .containsExactlyInAnyOrder("lake." + ns + ".web_raw", "lake." + ns + ".shop_raw");
    PipelineValidator validator = new PipelineValidator((SparkSession) spark);
    assertThat(validator.validate(graph)).isEmpty();

    PipelineRunResult first = pipeline().run();
    assertThat(first.succeeded()).as("%s", first).isTrue();
    assertThat(byName(first).get("all_orders").detail()).contains("created").contains("3 rows read");
    assertSameRows("SELECT id, amount, channel FROM all_orders", ALL_ORDERS, 3);
    assertSameRows("SELECT * FROM big_orders", "SELECT * FROM (" + ALL_ORDERS + ") WHERE amount > 5", 2);
    assertSameRows("SELECT * FROM revenue_by_channel",
        "SELECT channel, SUM(amount), COUNT(*) FROM (" + ALL_ORDERS + ") t(id, amount, channel) GROUP BY channel", 2);
    assertSameRows("SELECT * FROM completed_trips",
        "SELECT id, upper(city), amount FROM trips WHERE status = 'completed'", 3);
    assertThat(table("all_orders").properties()).containsEntry(PipelineRun.PIPELINE, "orders");

    sql("INSERT INTO web_raw VALUES (12, 9.5)");
    sql("INSERT INTO trips VALUES (7, 'Denver', 6.0, 'completed')");
    PipelineRunResult second = pipeline().run();
    assertThat(second.succeeded()).isTrue();
    Map<String, PipelineRun.DatasetOutcome> outcomes = byName(second);
    assertThat(outcomes.get("all_orders").detail()).startsWith("INCREMENTAL").contains(" 1 rows read, 1 written");
    assertThat(outcomes.get("big_orders").detail()).startsWith("INCREMENTAL").contains(" 1 rows read, 1 written");
    assertThat(outcomes.get("completed_trips").detail()).contains(" 1 rows read, 1 written");
    assertSameRows("SELECT * FROM completed_trips",
        "SELECT id, upper(city), amount FROM trips WHERE status = 'completed'", 4);
    assertThat(outcomes.get("revenue_by_channel").refresh().orElseThrow().type()).isEqualTo(RefreshType.INCREMENTAL);
    assertSameRows("SELECT id, amount, channel FROM all_orders", ALL_ORDERS, 4);
    assertSameRows("SELECT * FROM big_orders", "SELECT * FROM (" + ALL_ORDERS + ") WHERE amount > 5", 3);
    assertSameRows("SELECT * FROM revenue_by_channel",
        "SELECT channel, SUM(amount), COUNT(*) FROM (" + ALL_ORDERS + ") t(id, amount, channel) GROUP BY channel", 2);

    long snapshot = currentSnapshotId("all_orders");
    PipelineRunResult idle = pipeline().run();
    assertThat(byName(idle).get("all_orders").detail()).startsWith("NO_CHANGE");
    assertThat(currentSnapshotId("all_orders")).isEqualTo(snapshot);
    assertThat(new PipelineValidator((SparkSession) spark).validate(
        PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)))).isEmpty();

    PipelineRunResult full = pipeline().fullRefresh(List.of("all_orders")).run();
    assertThat(byName(full).get("all_orders").detail()).startsWith("FULL").contains("4 written");
    assertSameRows("SELECT id, amount, channel FROM all_orders", ALL_ORDERS, 4);
  }

  @Test
  void removedFlowsAndStreamingTablesAreReportedAndDroppedOnlyWithPrune() throws IOException {
    streamingProject();
    assertThat(pipeline().run().succeeded()).isTrue();
    write("transformations/a_gold.sql", """
        CREATE MATERIALIZED VIEW revenue_by_channel AS
        SELECT channel, SUM(amount) AS revenue, COUNT(*) AS orders FROM all_orders GROUP BY channel;
        """);
    write("transformations/b_orders.sql", """
        CREATE STREAMING TABLE all_orders;
        CREATE FLOW web_orders AS INSERT INTO all_orders BY NAME
        SELECT id, amount, 'web' AS channel FROM STREAM(web_raw);
        CREATE STREAMING TABLE completed_trips AS
        SELECT id, upper(city) AS city, amount FROM STREAM(trips) WHERE status = 'completed';
        """);
    sql("INSERT INTO shop_raw VALUES (21, 1.0)");
    PipelineRunResult kept = pipeline().run();
    assertThat(byName(kept).get("big_orders").state()).isEqualTo(PipelineEvent.State.REMOVED);
    assertThat(byName(kept).get("shop_orders").state()).isEqualTo(PipelineEvent.State.REMOVED);
    assertThat(byName(kept).get("shop_orders").dataset()).isEqualTo("lake." + ns + ".all_orders.shop_orders");
    assertThat(count("SELECT * FROM all_orders WHERE id = 21")).as("a removed flow is not run").isZero();
    assertThat(tableExists("big_orders")).isTrue();

    PipelineRunResult pruned = pipeline().prune(true).run();
    assertThat(byName(pruned).get("big_orders").state()).isEqualTo(PipelineEvent.State.DROPPED);
    assertThat(byName(pruned).get("shop_orders").state()).isEqualTo(PipelineEvent.State.DROPPED);
    assertThat(tableExists("big_orders")).isFalse();
    assertThat(table("all_orders").properties()).doesNotContainKey("floe.flow.shop_orders.query");
  }

  @Test
  void theCheckReportsFlowAndStreamingTableProblemsWithTheirLines() throws IOException {
    write("floe.yml", "name: streams\ncatalog: lake\nnamespace: " + ns + "\n");
    write("one.sql", """
        CREATE MATERIALIZED VIEW trips_mv AS SELECT id, city FROM trips;
        CREATE STREAMING TABLE target;
        CREATE FLOW dup AS INSERT INTO target BY NAME SELECT id FROM STREAM(trips);
        CREATE FLOW dup AS INSERT INTO target BY NAME SELECT id, city FROM STREAM(trips);
        CREATE FLOW stray AS INSERT INTO trips_mv SELECT id, city FROM STREAM(trips);
        CREATE FLOW from_view AS INSERT INTO target BY NAME SELECT * FROM STREAM(trips_mv);
        CREATE STREAMING TABLE bad_column AS SELECT no_such_column FROM STREAM(trips);
        CREATE STREAMING TABLE by_city AS SELECT city, count(*) AS n FROM STREAM(trips) GROUP BY city;
        CREATE STREAMING TABLE bad_table AS SELECT * FROM STREAM(no_such_table);
        CREATE FLOW nowhere AS INSERT INTO no_such_target SELECT * FROM STREAM(trips);
        """);
    List<String> text = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)))
        .stream().map(PipelineProblem::toString).toList();
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:4: ").contains("flow dup is defined twice (also at one.sql:3)"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:5: ").contains("flow stray writes into lake." + ns + ".trips_mv, which is a materialized view"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:6: ").contains("flow from_view streams materialized view lake." + ns + ".trips_mv"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:7: ").contains("no_such_column"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:8: ").contains("by_city").contains("an aggregate"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:9: ").contains("no_such_table"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:10: ").contains("not defined in this pipeline"));
    assertThat(text).hasSize(7);

    write("one.sql", """
        CREATE STREAMING TABLE loop_a AS SELECT * FROM STREAM(loop_b);
        CREATE STREAMING TABLE loop_b AS SELECT id FROM STREAM(trips);
        CREATE FLOW back AS INSERT INTO loop_b BY NAME SELECT * FROM STREAM(loop_a);
        """);
    text = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)))
        .stream().map(PipelineProblem::toString).toList();
    assertThat(text).singleElement().satisfies(p -> assertThat(p).contains("cycle").contains("loop_a").contains("loop_b"));
    assertThat(tableExists("loop_a")).isFalse();

    write("one.sql", """
        CREATE STREAMING TABLE by_position;
        CREATE FLOW whole AS INSERT INTO by_position SELECT id, city FROM STREAM(trips);
        CREATE FLOW narrow AS INSERT INTO by_position SELECT city FROM STREAM(trips);
        """);
    text = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)))
        .stream().map(PipelineProblem::toString).toList();
    assertThat(text).singleElement().satisfies(p -> assertThat(p).startsWith("one.sql:3: ")
        .contains("flow narrow produces 1 columns [city] but the table has 2 [id, city]"));

    write("one.sql", """
        CREATE STREAMING TABLE declared (id INT, amount DOUBLE, note STRING);
        CREATE FLOW named AS INSERT INTO declared BY NAME SELECT id, amount FROM STREAM(trips);
        CREATE FLOW whole AS INSERT INTO declared SELECT id, amount, city FROM STREAM(trips);
        CREATE FLOW short AS INSERT INTO declared SELECT id, amount FROM STREAM(trips);
        """);
    text = new PipelineValidator((SparkSession) spark)
        .validate(PipelineGraph.build((SparkSession) spark, PipelineProject.load(project)))
        .stream().map(PipelineProblem::toString).toList();
    assertThat(text).singleElement().satisfies(p -> assertThat(p).startsWith("one.sql:4: ")
        .contains("flow short produces 2 columns [id, amount] but the table has 3 [id, amount, note]"));
  }
}
