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
        """);
    PipelineGraph graph = PipelineGraph.build((SparkSession) spark, PipelineProject.load(project));
    List<PipelineProblem> problems = new PipelineValidator((SparkSession) spark).validate(graph);
    List<String> text = problems.stream().map(PipelineProblem::toString).toList();
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("one.sql:4: ").contains("starts with 'INSERT INTO trips'"));
    assertThat(text).anySatisfy(p -> assertThat(p).contains("cycle").contains("loop_a").contains("loop_b"));
    assertThat(text).anySatisfy(p -> assertThat(p).startsWith("two.sql:3: "));

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
}
