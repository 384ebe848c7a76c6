package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.RefreshState;
import io.floe.mv.RefreshStateParser;
import io.floe.mv.SourceState;
import java.util.ArrayList;
import java.util.List;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.view.SQLViewRepresentation;
import org.apache.iceberg.view.View;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a reader without Floe sees, through the Iceberg Java API alone: an Iceberg view with the
 * definition as its Spark SQL, pointing to an Iceberg storage table whose snapshots carry the
 * refresh state.
 */
class OpenFormatTest extends MvTestSupport {
  private static final String QUERY = "SELECT kind, sum(qty) AS qty FROM items GROUP BY kind";

  @Override
  protected String prefix() {
    return "open";
  }

  @BeforeEach
  void itemsAndView() {
    sql("CREATE TABLE items (id INT, kind STRING, qty INT) USING iceberg");
    sql("INSERT INTO items VALUES (1, 'bolt', 3), (2, 'nut', 5), (3, 'bolt', 1)");
    sql("CREATE MATERIALIZED VIEW stock AS " + QUERY);
  }

  @Test
  void theViewIsAnIcebergViewWithTheDefinitionAsSparkSql() {
    View view = view("stock");

    SQLViewRepresentation sparkSql = view.sqlFor("spark");
    assertThat(sparkSql).isNotNull();
    assertThat(sparkSql.dialect()).isEqualTo("spark");
    assertThat(sparkSql.sql()).isEqualTo(QUERY);
    assertThat(view.currentVersion().defaultNamespace().levels()).containsExactly(ns);
    assertThat(view.properties()).containsEntry(MaterializedViewProperties.STORAGE_TABLE, ns + ".stock__storage");
    assertThat(view.schema().columns()).extracting(c -> c.name()).containsExactly("kind", "qty");
  }

  @Test
  void theStorageTableCarriesTheRefreshStateAndTheRows() throws Exception {
    Table storage = table("stock__storage");

    assertThat(storage.properties()).containsEntry(MaterializedViewProperties.MATERIALIZED_VIEW, ns + ".stock");
    String json = storage.currentSnapshot().summary().get(RefreshState.SUMMARY_KEY);
    assertThat(json).isNotNull();
    RefreshState state = RefreshStateParser.fromJson(json);
    assertThat(state.viewVersionId()).isEqualTo(view("stock").currentVersion().versionId());
    assertThat(state.sourceStates())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.type()).isEqualTo(SourceState.Type.TABLE);
              assertThat(s.snapshotId()).contains(currentSnapshotId("items"));
            });

    List<String> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(storage).build()) {
      for (Record record : records) {
        rows.add(record.getField("kind") + "=" + record.getField("qty"));
      }
    }
    assertThat(rows).containsExactlyInAnyOrder("bolt=4", "nut=5");
  }

  @Test
  void theStorageTableHasPlainDataFiles() throws Exception {
    Table storage = table("stock__storage");
    long files = 0;
    try (CloseableIterable<FileScanTask> tasks = storage.newScan().planFiles()) {
      for (FileScanTask task : tasks) {
        assertThat(task.deletes()).isEmpty();
        files++;
      }
    }
    assertThat(files).isPositive();
  }

  @Test
  void runningTheViewsSqlGivesTheMaterializedRows() {
    String viewSql = view("stock").sqlFor("spark").sql();

    assertSameRows("SELECT * FROM stock", viewSql, 2);
    // Another engine reading the storage table directly sees the hidden bookkeeping columns too.
    String columns = String.join(", ", spark.table("stock").columns());
    assertSameRows("SELECT " + columns + " FROM lake." + ns + ".stock__storage", viewSql, 2);
  }

  @Test
  void afterARefreshTheViewsSqlStillMatches() {
    sql("INSERT INTO items VALUES (4, 'washer', 9)");
    sql("REFRESH MATERIALIZED VIEW stock");

    assertSameRows("SELECT * FROM stock", view("stock").sqlFor("spark").sql(), 3);
  }
}
