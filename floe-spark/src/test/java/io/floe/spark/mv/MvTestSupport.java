package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.floe.mv.RefreshState;
import io.floe.mv.RefreshStateParser;
import io.floe.spark.EmbeddedLakehouse;
import io.floe.spark.SameRows;
import io.floe.spark.SharedSpark;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.view.View;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeEach;

/**
 * Shared helpers for the materialized view tests: a fresh namespace per test, row-set comparison
 * of an MV with its query run directly, and an Iceberg catalog of its own (no Spark, no Floe) to
 * inspect the on-disk format.
 */
public abstract class MvTestSupport {
  private static Catalog icebergCatalog;

  protected SparkSession spark;
  protected String ns;

  /** The namespace prefix of this test class. */
  protected abstract String prefix();

  @BeforeEach
  void freshNamespace() {
    spark = SharedSpark.session();
    ns = SharedSpark.freshNamespace(prefix());
  }

  protected List<Row> sql(String statement) {
    return spark.sql(statement).collectAsList();
  }

  protected long count(String query) {
    return spark.sql("SELECT count(*) FROM (" + query + ")").first().getLong(0);
  }

  /**
   * Asserts that both queries return the same multiset of rows (EXCEPT ALL both ways empty) and
   * that they return {@code expectedRows} rows, so the comparison is never vacuous.
   */
  protected void assertSameRows(String actual, String expected, long expectedRows) {
    // The "view" the failure names is the compared query, with the query it should equal.
    SameRows.assertSameRows("[" + actual + "] (expected [" + expected + "])", spark.sql(actual), spark.sql(expected));
    assertThat(count(actual)).as("rows of [%s]", actual).isEqualTo(expectedRows);
  }

  /** The message of the error a statement raises; fails when it raises none. */
  protected String errorOf(String statement) {
    Throwable error = catchThrowable(() -> spark.sql(statement).collectAsList());
    assertThat(error).as("error of [%s]", statement).isNotNull();
    return error.getMessage();
  }

  /** DESCRIBE EXTENDED as a map from col_name to data_type. */
  protected Map<String, String> describe(String mv) {
    Map<String, String> rows = new LinkedHashMap<>();
    for (Row row : sql("DESCRIBE EXTENDED " + mv)) {
      rows.put(row.getString(0), row.getString(1));
    }
    return rows;
  }

  /** SHOW TBLPROPERTIES as a map. */
  protected Map<String, String> tblProperties(String mv) {
    return sql("SHOW TBLPROPERTIES " + mv).stream()
        .collect(Collectors.toMap(r -> r.getString(0), r -> r.getString(1), (a, b) -> b, LinkedHashMap::new));
  }

  /** Freshness as DESCRIBE EXTENDED shows it. */
  protected String freshness(String mv) {
    return describe(mv).get("Freshness");
  }

  /** Snapshots in the storage table's main history (a lost race leaves an unreferenced one aside). */
  protected long storageSnapshotCount(String mv) {
    return spark.sql("SELECT count(*) FROM lake." + ns + "." + mv + "__storage.history WHERE is_current_ancestor")
        .first().getLong(0);
  }

  /** The lake catalog as a plain Iceberg catalog, built from the Spark catalog settings. */
  protected static synchronized Catalog iceberg() {
    if (icebergCatalog == null) {
      String prefix = "spark.sql.catalog.lake.";
      Map<String, String> properties = new LinkedHashMap<>();
      EmbeddedLakehouse.sparkConf(SharedSpark.warehouse(), "lake")
          .forEach(
              (key, value) -> {
                if (key.startsWith(prefix)) {
                  properties.put(key.substring(prefix.length()), value);
                }
              });
      icebergCatalog = CatalogUtil.buildIcebergCatalog("lake", properties, new Configuration());
    }
    return icebergCatalog;
  }

  protected TableIdentifier id(String name) {
    return TableIdentifier.of(ns, name);
  }

  protected Table table(String name) {
    return iceberg().loadTable(id(name));
  }

  protected View view(String name) {
    return ((ViewCatalog) iceberg()).loadView(id(name));
  }

  protected boolean viewExists(String name) {
    return ((ViewCatalog) iceberg()).viewExists(id(name));
  }

  protected boolean tableExists(String name) {
    return iceberg().tableExists(id(name));
  }

  protected Snapshot storageSnapshot(String mv) {
    return table(mv + "__storage").currentSnapshot();
  }

  protected RefreshState refreshState(String mv) {
    Snapshot snapshot = storageSnapshot(mv);
    assertThat(snapshot).as("storage snapshot of %s", mv).isNotNull();
    return RefreshStateParser.fromJson(snapshot.summary().get(RefreshState.SUMMARY_KEY));
  }

  protected long currentSnapshotId(String table) {
    return table(table).currentSnapshot().snapshotId();
  }

  /** The qualified name freshness messages use for a table of this namespace. */
  protected String q(String name) {
    return ns + "." + name;
  }
}
