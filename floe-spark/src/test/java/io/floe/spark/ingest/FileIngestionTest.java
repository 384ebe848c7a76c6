package io.floe.spark.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.floe.FloeException;
import io.floe.spark.SharedSpark;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.sql.QualifiedName;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileIngestionTest {
  @TempDir Path landing;

  private SparkSession spark;
  private String ns;

  @BeforeEach
  void freshNamespace() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace("ingest");
  }

  private List<Row> sql(String statement) {
    return spark.sql(statement).collectAsList();
  }

  private long count(String query) {
    return spark.sql("SELECT count(*) FROM (" + query + ")").first().getLong(0);
  }

  private Path write(String name, String... lines) throws IOException {
    Path file = landing.resolve(name);
    Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    return file;
  }

  private static String order(int id, String amount) {
    return "{\"order_id\": " + id + ", \"customer\": \"c" + id % 3 + "\", \"amount\": " + amount + "}";
  }

  private Row create(String format) {
    return sql("CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM read_files('" + landing + "', format => '"
        + format + "')").get(0);
  }

  private Row refresh() {
    return sql("REFRESH STREAMING TABLE bronze").get(0);
  }

  private List<String> columns() {
    return Arrays.asList(spark.table("bronze").columns());
  }

  private Table table() {
    return new MaterializedViewCatalog(spark).resolve(new QualifiedName(List.of(ns, "bronze")))
        .catalog().loadTable(org.apache.iceberg.catalog.TableIdentifier.of(ns, "bronze"));
  }

  @Test
  void jsonLinesInferTypesAndKeepFileAndLine() throws IOException {
    write("a.json", order(1, "10.5"), order(2, "20"));
    write("b.json", order(3, "7.25"));
    Row result = create("json");
    assertThat(result.getInt(1)).isEqualTo(2);
    assertThat(result.getLong(2)).isEqualTo(3);
    assertThat(result.getLong(3)).isZero();
    assertThat(columns()).containsExactly(
        "amount", "customer", "order_id", "_source_file", "_source_line", "_ingested_at", "_rescued_data");
    assertThat(spark.table("bronze").schema().apply("order_id").dataType().sql()).isEqualTo("BIGINT");
    assertThat(spark.table("bronze").schema().apply("amount").dataType().sql()).isEqualTo("DOUBLE");
    Row second = sql("SELECT _source_file, _source_line, amount FROM bronze WHERE order_id = 2").get(0);
    assertThat(second.getString(0)).endsWith("/a.json");
    assertThat(second.getLong(1)).isEqualTo(2);
    assertThat(second.getDouble(2)).isEqualTo(20.0);
    assertThat(count("SELECT DISTINCT _ingested_at FROM bronze")).isEqualTo(1);
  }

  @Test
  void csvInfersTypesFromHeaderAndValues() throws IOException {
    write("a.csv", "order_id,customer,amount,day", "1,c1,10.5,2024-01-05", "2,c2,3,2024-01-06");
    write("b.csv", "order_id,customer,amount,day", "3,c3,4.5,2024-02-01");
    Row result = create("csv");
    assertThat(result.getLong(2)).isEqualTo(3);
    assertThat(spark.table("bronze").schema().apply("order_id").dataType().sql()).isEqualTo("INT");
    assertThat(spark.table("bronze").schema().apply("amount").dataType().sql()).isEqualTo("DOUBLE");
    assertThat(spark.table("bronze").schema().apply("day").dataType().sql()).isEqualTo("DATE");
    assertThat(sql("SELECT _source_line FROM bronze WHERE order_id = 2").get(0).getLong(0)).isEqualTo(3);
    assertThat(sql("SELECT sum(amount) FROM bronze").get(0).getDouble(0)).isEqualTo(18.0);
  }

  @Test
  void parquetKeepsTheFilesSchemaAndRowNumbers(@TempDir Path staging) throws IOException {
    spark.sql("SELECT id AS order_id, CAST(id * 1.5 AS DECIMAL(10,2)) AS amount FROM range(5)")
        .coalesce(1).write().mode("overwrite").parquet(staging.toString());
    try (Stream<Path> files = Files.list(staging)) {
      for (Path part : files.filter(p -> p.getFileName().toString().endsWith(".parquet")).collect(Collectors.toList())) {
        Files.copy(part, landing.resolve("orders.parquet"));
      }
    }
    Row result = create("parquet");
    assertThat(result.getLong(2)).isEqualTo(5);
    assertThat(spark.table("bronze").schema().apply("amount").dataType().sql()).isEqualTo("DECIMAL(10,2)");
    assertThat(sql("SELECT _source_line FROM bronze WHERE order_id = 3").get(0).getLong(0)).isEqualTo(4);
  }

  @Test
  void eachRunLoadsOnlyTheFilesItHasNotLoaded() throws IOException {
    write("a.json", order(1, "1"), order(2, "2"));
    create("json");
    long firstSnapshot = table().currentSnapshot().snapshotId();
    Row idle = refresh();
    assertThat(idle.getInt(1)).isZero();
    assertThat(idle.isNullAt(7)).isTrue();
    assertThat(table().currentSnapshot().snapshotId()).isEqualTo(firstSnapshot);

    write("b.json", order(3, "3"));
    Row second = refresh();
    assertThat(second.getInt(1)).isEqualTo(1);
    assertThat(second.getLong(2)).isEqualTo(1);
    assertThat(count("SELECT * FROM bronze")).isEqualTo(3);
    assertThat(count("SELECT DISTINCT order_id FROM bronze")).isEqualTo(3);
    assertThat(count("SELECT DISTINCT _ingested_at FROM bronze")).isEqualTo(2);
  }

  @Test
  void aRunThatDiesBeforeItsCommitLeavesNoDuplicate() throws IOException {
    write("a.json", order(1, "1"));
    create("json");
    write("b.json", order(2, "2"), order(3, "3"));
    long before = table().currentSnapshot().snapshotId();
    List<Long> writtenButUnpublished = new ArrayList<>();
    Throwable crash =
        catchThrowable(
            () ->
                new FileIngestion(spark)
                    .beforePublish(
                        () -> {
                          Table t = table();
                          t.refs().forEach((name, ref) -> {
                            if (name.startsWith("floe_ingest_")) {
                              writtenButUnpublished.add(
                                  Long.parseLong(t.snapshot(ref.snapshotId()).summary().get("added-records")));
                            }
                          });
                          throw new IllegalStateException("simulated crash after writing data");
                        })
                    .refresh(new QualifiedName(List.of(ns, "bronze"))));
    assertThat(crash).hasMessageContaining("simulated crash");
    assertThat(writtenButUnpublished).containsExactly(2L);
    assertThat(table().currentSnapshot().snapshotId()).isEqualTo(before);
    new MaterializedViewCatalog(spark).invalidateSparkCache(
        new MaterializedViewCatalog(spark).resolve(new QualifiedName(List.of(ns, "bronze"))));
    assertThat(count("SELECT * FROM bronze")).isEqualTo(1);

    Row rerun = refresh();
    assertThat(rerun.getInt(1)).isEqualTo(1);
    assertThat(rerun.getLong(2)).isEqualTo(2);
    assertThat(count("SELECT * FROM bronze")).isEqualTo(3);
    assertThat(refresh().getInt(1)).isZero();
    assertThat(count("SELECT * FROM bronze")).isEqualTo(3);
  }

  @Test
  void newFieldsInLaterFilesAddNullableColumns() throws IOException {
    write("a.json", order(1, "1"));
    create("json");
    write("b.json", "{\"order_id\": 2, \"customer\": \"c2\", \"amount\": 2, \"coupon\": \"SPRING\", \"items\": 3}");
    Row result = refresh();
    assertThat(result.getString(4)).isEqualTo("coupon, items");
    assertThat(columns()).containsExactly(
        "amount", "customer", "order_id", "coupon", "items", "_source_file", "_source_line", "_ingested_at",
        "_rescued_data");
    assertThat(sql("SELECT coupon, items FROM bronze WHERE order_id = 1").get(0).isNullAt(0)).isTrue();
    assertThat(sql("SELECT coupon FROM bronze WHERE order_id = 2").get(0).getString(0)).isEqualTo("SPRING");
  }

  /**
   * A field new inside a struct (directly, in an array's elements, in a nested struct) is added to
   * the column, not dropped: the earlier rows read it as NULL, nothing is rescued or warned.
   */
  @Test
  void newFieldsInsideStructsAreAddedToTheirColumns() throws IOException {
    write("a.json", "{\"id\": 1, \"addr\": {\"city\": \"X\"}, \"lines\": [{\"sku\": \"a\"}], \"meta\": {\"k\": {\"v\": 1}}}");
    create("json");
    write("b.json", "{\"id\": 2, \"addr\": {\"city\": \"Y\", \"zip\": \"12345\"}, \"lines\": [{\"sku\": \"b\", \"qty\": 3}],"
        + " \"meta\": {\"k\": {\"v\": 2, \"w\": \"x\"}}}");
    Row result = refresh();
    assertThat(result.getString(4)).isEqualTo("addr.zip, lines.element.qty, meta.k.w");
    assertThat(result.getLong(3)).as("rows rescued").isZero();
    assertThat(result.getString(5)).as("warnings").isEmpty();
    assertThat(sql("SELECT addr.zip, lines[0].qty, meta.k.w, _rescued_data FROM bronze ORDER BY id"))
        .extracting(Row::toString)
        .containsExactly("[null,null,null,null]", "[12345,3,x,null]");
  }

  @Test
  void aTypeConflictIsReportedAndTheValueKeptAsText() throws IOException {
    write("a.json", order(1, "1.5"));
    create("json");
    write("b.json", order(2, "\"twelve\""), order(3, "3"));
    Row result = refresh();
    assertThat(result.getLong(2)).isEqualTo(2);
    assertThat(result.getLong(3)).isEqualTo(1);
    assertThat(result.getString(5))
        .contains("type conflict on field amount: column is DOUBLE")
        .contains("b.json")
        .contains("STRING");
    Row rescued = sql("SELECT order_id, amount, _rescued_data, _source_line FROM bronze WHERE order_id = 2").get(0);
    assertThat(rescued.getLong(0)).isEqualTo(2);
    assertThat(rescued.isNullAt(1)).isTrue();
    assertThat(rescued.getString(2)).contains("\"twelve\"");
    assertThat(rescued.getLong(3)).isEqualTo(1);
  }

  @Test
  void malformedLinesLandInTheRescuedColumnWithFileAndLine() throws IOException {
    write("a.json", order(1, "1"), "{\"order_id\": 2, \"amount\": ", order(3, "3"), "not json at all");
    Row result = create("json");
    assertThat(result.getLong(2)).isEqualTo(4);
    assertThat(result.getLong(3)).isEqualTo(2);
    assertThat(result.getString(5)).contains("2 rows did not parse");
    List<Row> rescued =
        sql("SELECT _source_file, _source_line, _rescued_data FROM bronze WHERE _rescued_data IS NOT NULL "
            + "ORDER BY _source_line");
    assertThat(rescued).hasSize(2);
    assertThat(rescued.get(0).getString(0)).endsWith("/a.json");
    assertThat(rescued.get(0).getLong(1)).isEqualTo(2);
    assertThat(rescued.get(0).getString(2)).isEqualTo("{\"order_id\": 2, \"amount\": ");
    assertThat(rescued.get(1).getLong(1)).isEqualTo(4);
    assertThat(rescued.get(1).getString(2)).isEqualTo("not json at all");
  }

  @Test
  void binaryGarbageInAJsonFolderIsRescuedNotFatal() throws IOException {
    write("a.json", order(1, "1"));
    Files.write(landing.resolve("garbage.json"), new byte[] {0, (byte) 0xff, 0x13, 0x37, '\n', (byte) 0x89, 'P', 'N', 'G'});
    Row result = create("json");
    assertThat(result.getLong(3)).isEqualTo(2);
    assertThat(count("SELECT * FROM bronze WHERE _rescued_data IS NULL")).isEqualTo(1);
  }

  @Test
  void clearErrorsAndWarningsForMissingFoldersEmptyFilesAndBadParquet() throws IOException {
    Throwable missing =
        catchThrowable(() -> sql("CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM read_files('"
            + landing.resolve("nowhere") + "', format => 'json')"));
    assertThat(missing).isInstanceOf(FloeException.class)
        .hasMessageContaining("Cannot ingest into lake." + ns + ".bronze: folder")
        .hasMessageContaining("nowhere does not exist");
    assertThat(spark.catalog().tableExists(ns + ".bronze")).isFalse();

    Files.createFile(landing.resolve("empty.json"));
    Row result = create("json");
    assertThat(result.getInt(1)).isEqualTo(1);
    assertThat(result.getString(5)).contains("empty.json is empty");
    assertThat(refresh().getString(5)).isEmpty();

    Path badOption = Files.createDirectory(landing.resolve("opt"));
    Files.writeString(badOption.resolve("a.json"), order(1, "1") + "\n");
    Throwable option = catchThrowable(() -> sql("CREATE STREAMING TABLE opt AS SELECT * FROM STREAM read_files('"
        + badOption + "', format => 'json', multiLine => 'yes')"));
    assertThat(option).isInstanceOf(FloeException.class)
        .hasMessageStartingWith("Cannot ingest into lake." + ns + ".opt: reading json files with the options {multiLine=yes} failed: ");
    assertThat(spark.catalog().tableExists(ns + ".opt")).isFalse();

    sql("CREATE TABLE plain (id INT) USING iceberg");
    sql("CREATE MATERIALIZED VIEW taken AS SELECT id FROM plain");
    Throwable view = catchThrowable(() -> sql("CREATE STREAMING TABLE taken AS SELECT * FROM STREAM read_files('"
        + landing + "', format => 'json')"));
    assertThat(view).isInstanceOf(FloeException.class).hasMessage(
        "Cannot create streaming table lake." + ns + ".taken: a view with that name exists (a materialized view)");

    Path parquet = Files.createDirectory(landing.resolve("p"));
    Files.writeString(parquet.resolve("bad.parquet"), "this is not parquet at all");
    Throwable bad =
        catchThrowable(() -> sql("CREATE STREAMING TABLE p AS SELECT * FROM STREAM read_files('" + parquet
            + "', format => 'parquet')"));
    assertThat(bad).isInstanceOf(FloeException.class).hasMessageContaining("bad.parquet is not a Parquet file");
  }

  @Test
  void withoutAFormatTheFilesExtensionsDecideOnceAndTwoFormatsInOneFolderAreRefused() throws IOException {
    String noFormat = "CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM read_files('" + landing + "')";
    // An empty folder decides nothing yet: the first files do.
    sql(noFormat);
    assertThat(table().properties()).doesNotContainKey(StreamingTable.SOURCE_FORMAT);
    write("a.csv", "order_id,customer,amount", "1,c1,10.5", "2,c2,3");
    Row first = sql(noFormat).get(0);
    assertThat(first.getLong(2)).isEqualTo(2);
    assertThat(first.getLong(3)).as("rows rescued").isZero();
    assertThat(columns()).startsWith("order_id", "customer", "amount");
    assertThat(table().properties()).containsEntry(StreamingTable.SOURCE_FORMAT, "csv");

    // Decided once: a later file without an extension is read as CSV too, and a statement naming
    // another format is refused with what the table reads.
    write("b", "order_id,customer,amount", "3,c3,4.5");
    assertThat(refresh().getLong(2)).isEqualTo(1);
    assertThat(sql("SELECT sum(amount) FROM bronze").get(0).getDouble(0)).isEqualTo(18.0);
    Throwable json =
        catchThrowable(() -> sql("CREATE OR REFRESH STREAMING TABLE bronze AS SELECT * FROM STREAM read_files('"
            + landing + "', format => 'json')"));
    assertThat(json).isInstanceOf(FloeException.class).hasMessageContaining("it ingests csv files from " + landing)
        .hasMessageContaining("not json files from");

    Path mixed = Files.createDirectory(landing.resolve("mixed"));
    Files.writeString(mixed.resolve("a.csv"), "order_id\n1\n");
    Files.writeString(mixed.resolve("b.jsonl"), order(2, "1") + "\n");
    Throwable twoFormats =
        catchThrowable(() -> sql("CREATE STREAMING TABLE m AS SELECT * FROM STREAM read_files('" + mixed + "')"));
    assertThat(twoFormats).isInstanceOf(FloeException.class)
        .hasMessageContaining("Cannot ingest into lake." + ns + ".m: " + mixed + " holds CSV files (a.csv) and JSON files (b.jsonl)")
        .hasMessageContaining("format => 'csv'");
    assertThat(spark.catalog().tableExists(ns + ".m")).isFalse();
  }

  @Test
  void aFolderAndFilesWithSpacesPercentSignsAndGlobCharactersLoadOnce() throws IOException {
    Path folder = Files.createDirectories(landing.resolve("my files %20 [raw]"));
    Files.writeString(folder.resolve("o 1%.json"), order(1, "10.5") + "\n");
    Files.writeString(folder.resolve("o*{2}+.json"), order(2, "3") + "\n");
    Row first = sql("CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM read_files('" + folder + "')").get(0);
    assertThat(first.getInt(1)).isEqualTo(2);
    assertThat(first.getLong(2)).isEqualTo(2);
    assertThat(sql("SELECT _source_file FROM bronze ORDER BY order_id").stream().map(r -> r.getString(0)).toList())
        .containsExactly("file:" + folder.resolve("o 1%.json"), "file:" + folder.resolve("o*{2}+.json"));
    // Each file once: the next run finds both loaded.
    Files.writeString(folder.resolve("o3.json"), order(3, "4.5") + "\n");
    Row second = refresh();
    assertThat(second.getInt(1)).isEqualTo(1);
    assertThat(sql("SELECT sum(amount) FROM bronze").get(0).getDouble(0)).isEqualTo(18.0);
  }
}
