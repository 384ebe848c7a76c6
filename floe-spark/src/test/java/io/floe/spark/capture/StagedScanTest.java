package io.floe.spark.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spark.SharedSpark;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.BaseFileScanTask;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.PartitionSpecParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.TableScanUtil;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;

class StagedScanTest {
  private static final long MB = 1024L * 1024;
  private static final Schema SCHEMA = new Schema(Types.NestedField.required(1, "id", Types.LongType.get()));

  @Test
  void tenLargeFilesMakeTenTasksOnTwoCores() {
    List<FileScanTask> files = files(10, 42 * MB);
    // Iceberg's own split size packs them three by three: four tasks, which two cores run in the
    // time of six files, the last round with one core idle.
    assertThat(groups(files, TableProperties.SPLIT_SIZE_DEFAULT)).isEqualTo(4);

    long split = StagedScan.splitSize(Map.of(), files, 2);

    assertThat(groups(files, split)).isEqualTo(10);
  }

  @Test
  void manySmallFilesStillShareTasks() {
    List<FileScanTask> files = files(1000, 100 * 1024);

    long split = StagedScan.splitSize(Map.of(), files, 2);

    // Each counts at the open-file cost (4 MB): 32 to a task of the default 128 MB, never one each.
    assertThat(split).isEqualTo(TableProperties.SPLIT_SIZE_DEFAULT);
    assertThat(groups(files, split)).isEqualTo(1000 / 32 + 1);
  }

  @Test
  void aSmallScanIsNotSplitBelowAnEighthOfTheDefault() {
    List<FileScanTask> files = files(3, MB);

    long split = StagedScan.splitSize(Map.of(), files, 2);

    assertThat(split).isEqualTo(TableProperties.SPLIT_SIZE_DEFAULT / 8);
    assertThat(groups(files, split)).isEqualTo(1);
  }

  @Test
  void theTablesOwnSmallerSplitSizeIsKept() {
    List<FileScanTask> files = files(10, 42 * MB);

    long split = StagedScan.splitSize(Map.of(TableProperties.SPLIT_SIZE, String.valueOf(8 * MB)), files, 2);

    assertThat(split).isEqualTo(8 * MB);
  }

  @Test
  void theStagedReadRunsOneTaskPerSplit() {
    SparkSession spark = SharedSpark.session();
    String ns = SharedSpark.freshNamespace("staged");
    String name = "lake." + ns + ".t";
    spark.sql("CREATE TABLE " + name + " (id BIGINT) USING iceberg");
    for (int file = 0; file < 3; file++) {
      spark.sql("INSERT INTO " + name + " SELECT /*+ COALESCE(1) */ id FROM RANGE(" + file * 10 + ", " + (file + 1) * 10 + ")");
    }
    Table table = load(spark, name);
    List<FileScanTask> tasks = planned(table);
    assertThat(tasks).hasSize(3);

    // Three small files share one task at the computed split size ...
    try (StagedScan scan = StagedScan.stage(spark, table, table.schema(), tasks)) {
      assertThat(scan.rows(List.of(functions.col("id"))).rdd().getNumPartitions()).isEqualTo(1);
    }
    // ... until each counts for more than the split size (at a 20 MB open-file cost, over the 16 MB
    // least): then each has a task of its own, in both kinds of read, where Iceberg's 128 MB split
    // would still put all three in one.
    table.updateProperties().set(TableProperties.SPLIT_OPEN_FILE_COST, String.valueOf(20 * MB)).commit();
    Table costly = load(spark, name);
    try (StagedScan scan = StagedScan.stage(spark, costly, costly.schema(), tasks)) {
      assertThat(scan.rows(List.of(functions.col("id"))).rdd().getNumPartitions()).isEqualTo(3);
      assertThat(scan.rowsWithPositions(
                  SparkSchemaUtil.convert(costly.schema()), List.of(functions.col("id"), functions.col("_pos")))
              .rdd()
              .getNumPartitions())
          .isEqualTo(3);
      assertThat(scan.rows(List.of(functions.col("id"))).count()).isEqualTo(30);
    }
    assertThat(groups(tasks, TableProperties.SPLIT_SIZE_DEFAULT, 20 * MB)).isEqualTo(1);
  }

  /** Task groups Iceberg's staged scan makes of {@code files} at {@code splitSize}, with its defaults. */
  private static int groups(List<FileScanTask> files, long splitSize) {
    return groups(files, splitSize, TableProperties.SPLIT_OPEN_FILE_COST_DEFAULT);
  }

  private static int groups(List<FileScanTask> files, long splitSize, long openFileCost) {
    return TableScanUtil.planTaskGroups(files, splitSize, TableProperties.SPLIT_LOOKBACK_DEFAULT, openFileCost).size();
  }

  private static List<FileScanTask> files(int count, long bytes) {
    PartitionSpec spec = PartitionSpec.unpartitioned();
    List<FileScanTask> files = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      DataFile file =
          DataFiles.builder(spec)
              .withPath("/data/file-" + i + ".parquet")
              .withFileSizeInBytes(bytes)
              .withRecordCount(1000)
              .build();
      files.add(new BaseFileScanTask(
          file, new DeleteFile[0], SchemaParser.toJson(SCHEMA), PartitionSpecParser.toJson(spec), ResidualEvaluator.unpartitioned(
              org.apache.iceberg.expressions.Expressions.alwaysTrue())));
    }
    return files;
  }

  private static Table load(SparkSession spark, String name) {
    try {
      return Spark3Util.loadIcebergTable(spark, name);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<FileScanTask> planned(Table table) {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
      planned.forEach(tasks::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return tasks;
  }
}
