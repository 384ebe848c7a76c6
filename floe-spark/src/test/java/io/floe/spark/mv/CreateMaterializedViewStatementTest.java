package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.mv.MaterializedViewProperties;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.Table;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every form of CREATE MATERIALIZED VIEW and the errors it reports. */
class CreateMaterializedViewStatementTest extends MvTestSupport {
  private static final String BY_REGION =
      "SELECT region, count(*) AS n, sum(amount) AS total FROM orders GROUP BY region";

  @Override
  protected String prefix() {
    return "create";
  }

  @BeforeEach
  void orders() {
    sql("CREATE TABLE orders (id INT, region STRING, amount DECIMAL(10,2)) USING iceberg");
    sql("INSERT INTO orders VALUES (1, 'Tokyo', 10.00), (2, 'Osaka', 20.00), (3, 'Tokyo', 5.50)");
  }

  @Test
  void createRunsTheFirstRefreshAndReturnsItsResultRow() {
    List<Row> result = sql("CREATE MATERIALIZED VIEW by_region AS " + BY_REGION);

    assertThat(result).hasSize(1);
    Row row = result.get(0);
    assertThat(row.getString(0)).isEqualTo("lake." + ns + ".by_region");
    assertThat(row.getString(1)).isEqualTo("FULL");
    assertThat(row.getLong(4)).as("rows_written").isEqualTo(2);
    assertThat(row.getLong(8)).as("snapshot_id").isEqualTo(storageSnapshot("by_region").snapshotId());
    assertSameRows("SELECT * FROM by_region", BY_REGION, 2);
    assertThat(viewExists("by_region")).isTrue();
    assertThat(tableExists("by_region__storage")).isTrue();
  }

  @Test
  void everyOptionalClauseIsStoredWhereItBelongs() {
    sql(
        "CREATE MATERIALIZED VIEW tokyo_orders COMMENT 'orders in Tokyo' PARTITIONED BY (region)"
            + " TBLPROPERTIES ('write.format.default' = 'orc', 'team' = 'sales')"
            + " SCHEDULE REFRESH EVERY 3 HOURS"
            + " AS SELECT id, region, amount FROM orders WHERE amount > 1");

    Map<String, String> described = describe("tokyo_orders");
    assertThat(described)
        .containsEntry("Comment", "orders in Tokyo")
        .containsEntry("Schedule", "EVERY 3 HOURS")
        .containsEntry("Type", "MATERIALIZED VIEW")
        .containsEntry("View Text", "SELECT id, region, amount FROM orders WHERE amount > 1");
    Table storage = table("tokyo_orders__storage");
    assertThat(storage.spec().fields()).extracting(PartitionField::name).containsExactly("region");
    assertThat(storage.properties())
        .containsEntry("write.format.default", "orc")
        .containsEntry("team", "sales")
        .containsEntry(MaterializedViewProperties.MATERIALIZED_VIEW, ns + ".tokyo_orders")
        .containsEntry(MaterializedViewProperties.MANAGED, "false");
    assertThat(view("tokyo_orders").properties())
        .containsEntry(MaterializedViewProperties.SCHEDULE, "EVERY 3 HOURS")
        .containsEntry(MaterializedViewProperties.COMMENT, "orders in Tokyo");
    assertSameRows("SELECT * FROM tokyo_orders", "SELECT id, region, amount FROM orders WHERE amount > 1", 3);
  }

  @Test
  void managedIsRecordedOnTheViewAndTheStorageTable() {
    sql("CREATE MANAGED MATERIALIZED VIEW managed_mv AS " + BY_REGION);

    assertThat(describe("managed_mv")).containsEntry("Type", "MANAGED MATERIALIZED VIEW");
    assertThat(view("managed_mv").properties()).containsEntry(MaterializedViewProperties.MANAGED, "true");
    assertThat(table("managed_mv__storage").properties())
        .containsEntry(MaterializedViewProperties.MANAGED, "true");
  }

  @Test
  void createOfAnExistingMaterializedViewFailsNamingIt() {
    sql("CREATE MATERIALIZED VIEW by_region AS " + BY_REGION);

    assertThat(errorOf("CREATE MATERIALIZED VIEW by_region AS SELECT * FROM orders"))
        .contains("lake." + ns + ".by_region")
        .contains("already exists");
  }

  @Test
  void ifNotExistsLeavesAnExistingViewAlone() {
    sql("CREATE MATERIALIZED VIEW by_region AS " + BY_REGION);
    long snapshot = storageSnapshot("by_region").snapshotId();
    int version = view("by_region").currentVersion().versionId();

    List<Row> result = sql("CREATE MATERIALIZED VIEW IF NOT EXISTS by_region AS SELECT id FROM orders");

    assertThat(result).isEmpty();
    assertThat(view("by_region").currentVersion().versionId()).isEqualTo(version);
    assertThat(storageSnapshot("by_region").snapshotId()).isEqualTo(snapshot);
    assertSameRows("SELECT * FROM by_region", BY_REGION, 2);
  }

  @Test
  void ifNotExistsCreatesAMissingView() {
    sql("CREATE MATERIALIZED VIEW IF NOT EXISTS by_region AS " + BY_REGION);

    assertSameRows("SELECT * FROM by_region", BY_REGION, 2);
  }

  @Test
  void orReplaceChangesTheDefinitionAndTheData() {
    sql("CREATE MATERIALIZED VIEW mv AS " + BY_REGION);
    int version = view("mv").currentVersion().versionId();

    List<Row> result = sql("CREATE OR REPLACE MATERIALIZED VIEW mv AS SELECT id, amount FROM orders WHERE id > 1");

    assertThat(result).hasSize(1);
    assertThat(result.get(0).getString(1)).isEqualTo("FULL");
    assertThat(result.get(0).getString(2)).isEqualTo("definition changed");
    assertThat(view("mv").currentVersion().versionId()).isGreaterThan(version);
    assertThat(describe("mv")).containsEntry("View Text", "SELECT id, amount FROM orders WHERE id > 1");
    assertThat(spark.table("mv").columns()).containsExactly("id", "amount");
    assertSameRows("SELECT * FROM mv", "SELECT id, amount FROM orders WHERE id > 1", 2);
    assertThat(freshness("mv")).isEqualTo("FRESH");
  }

  /**
   * A replacement states the whole definition: the expectations, schedule, refresh policy and
   * comment of the view it replaces do not outlive it (a dropping expectation would go on dropping
   * the new definition's rows).
   */
  @Test
  void aReplacementKeepsNothingOfTheOldStatementItDoesNotRestate() {
    sql("CREATE MATERIALIZED VIEW kept (CONSTRAINT big EXPECT (amount > 15) ON VIOLATION DROP ROW)"
        + " SCHEDULE REFRESH EVERY 1 HOUR REFRESH POLICY FULL COMMENT 'old' AS SELECT id, amount FROM orders");
    assertThat(view("kept").properties()).containsKeys(MaterializedViewProperties.SCHEDULE, MaterializedViewProperties.COMMENT);

    sql("CREATE OR REPLACE MATERIALIZED VIEW kept AS SELECT id, amount FROM orders");

    assertSameRows("SELECT * FROM kept", "SELECT id, amount FROM orders", count("SELECT * FROM orders"));
    assertThat(view("kept").properties())
        .doesNotContainKeys(MaterializedViewProperties.SCHEDULE, MaterializedViewProperties.REFRESH_POLICY,
            MaterializedViewProperties.COMMENT, io.floe.mv.ExpectationsParser.PROPERTY);
    assertThat(sql("SHOW CREATE TABLE kept").get(0).getString(0))
        .doesNotContain("CONSTRAINT").doesNotContain("SCHEDULE").doesNotContain("'old'");
    // Without the column the old expectation read, the replacement refreshes as any other.
    sql("CREATE MATERIALIZED VIEW renamed (CONSTRAINT big EXPECT (amount > 15)) AS SELECT id, amount FROM orders");
    sql("CREATE OR REPLACE MATERIALIZED VIEW renamed AS SELECT id, amount * 2 AS doubled FROM orders");
    assertSameRows("SELECT * FROM renamed", "SELECT id, amount * 2 FROM orders", count("SELECT * FROM orders"));
  }

  /**
   * A replacement whose first refresh fails (a cast that fails on the data) leaves the view as it
   * was: definition, version, properties, storage and rows, whether the new definition needed a new
   * storage table or fit the old one; the views reading it are not emptied, and it refreshes
   * incrementally as before.
   */
  @Test
  void aReplacementWhoseFirstRefreshFailsLeavesTheViewAsItWas() {
    // Created by another process: Iceberg's version summary names the Spark application, so an
    // equal definition committed from here would not be the same version.
    String application = org.apache.iceberg.EnvironmentContext.get().get("app-id");
    org.apache.iceberg.EnvironmentContext.put("app-id", "an-earlier-process");
    try {
      sql("CREATE MATERIALIZED VIEW mv SCHEDULE REFRESH EVERY 1 HOUR AS SELECT id, region FROM orders");
    } finally {
      org.apache.iceberg.EnvironmentContext.put("app-id", application);
    }
    assertThat(view("mv").currentVersion().summary()).containsEntry("app-id", "an-earlier-process");
    sql("CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n FROM mv");
    int version = view("mv").currentVersion().versionId();
    String storageUuid = table("mv__storage").uuid().toString();
    String ddl = sql("SHOW CREATE TABLE mv").get(0).getString(0);

    String[][] replacements = {
        // other columns and layout: a new storage table, whose first refresh fails
        {"TBLPROPERTIES ('floe.compaction.enabled' = 'false') REFRESH POLICY FULL"
            + " AS SELECT id, region, CAST(region AS INT) AS code FROM orders", "CAST_INVALID_INPUT"},
        // the same columns and layout: the storage table is kept, its properties changed, the refresh fails
        {"TBLPROPERTIES ('floe.compaction.enabled' = 'false')"
            + " AS SELECT id, region FROM orders WHERE CAST(region AS INT) > 0", "CAST_INVALID_INPUT"},
        // a new storage table that cannot be created
        {"PARTITIONED BY (no_such_column) AS SELECT id, region, amount FROM orders", "no_such_column"}};
    for (String[] replacement : replacements) {
      assertThat(errorOf("CREATE OR REPLACE MATERIALIZED VIEW mv " + replacement[0]))
          .as(replacement[0])
          .contains("materialized view lake." + ns + ".mv")
          .contains(replacement[1]);
      assertThat(view("mv").currentVersion().versionId()).as(replacement[0]).isEqualTo(version);
      assertThat(sql("SHOW CREATE TABLE mv").get(0).getString(0)).isEqualTo(ddl);
      assertThat(table("mv__storage").uuid().toString()).isEqualTo(storageUuid);
      assertThat(table("mv__storage").properties()).doesNotContainKey("floe.compaction.enabled");
      assertThat(tableExists("mv__storage__replaced")).isFalse();
      assertSameRows("SELECT * FROM mv", "SELECT id, region FROM orders", 3);
      assertThat(freshness("mv")).isEqualTo("FRESH");
    }
    assertThat(errorOf("CREATE OR REPLACE MATERIALIZED VIEW mv AS SELECT id, region, CAST(region AS INT) AS code FROM orders"))
        .contains("Cannot replace materialized view lake." + ns + ".mv")
        .contains("keeps its previous definition and rows");

    sql("INSERT INTO orders VALUES (4, 'Nara', 1.00)");
    assertThat(sql("REFRESH MATERIALIZED VIEW mv").get(0).getString(1)).isEqualTo("INCREMENTAL");
    sql("REFRESH MATERIALIZED VIEW total");
    assertSameRows("SELECT * FROM total", "SELECT count(*) FROM orders", 1);

    sql("CREATE OR REPLACE MATERIALIZED VIEW mv AS SELECT id, region, amount FROM orders");
    assertThat(tableExists("mv__storage__replaced")).as("the old storage, dropped once replaced").isFalse();
    assertSameRows("SELECT * FROM mv", "SELECT id, region, amount FROM orders", 4);
  }

  @Test
  void createOnTheNameOfATableFails() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW orders AS SELECT 1 AS one"))
        .contains("lake." + ns + ".orders")
        .contains("a table with that name exists");
  }

  @Test
  void withNoDataCreatesAnEmptyNeverRefreshedViewThatRefreshFills() {
    List<Row> result = sql("CREATE MATERIALIZED VIEW deferred AS " + BY_REGION + " WITH NO DATA");

    assertThat(result).isEmpty();
    assertThat(table("deferred__storage").currentSnapshot()).isNull();
    assertThat(count("SELECT * FROM deferred")).isZero();
    assertThat(describe("deferred"))
        .containsEntry("Last Refresh Time", "never")
        .containsEntry("Last Refresh Type", "none")
        .containsEntry("Freshness", "STALE: never refreshed");
    assertThat(tblProperties("deferred")).containsEntry("lastRefreshType", "NONE");

    Row refresh = sql("REFRESH MATERIALIZED VIEW deferred").get(0);

    assertThat(refresh.getString(1)).isEqualTo("FULL");
    assertThat(refresh.getString(2)).isEqualTo("first refresh");
    assertSameRows("SELECT * FROM deferred", BY_REGION, 2);
    assertThat(freshness("deferred")).isEqualTo("FRESH");
  }

  @Test
  void columnListRenamesTheColumns() {
    sql("CREATE MATERIALIZED VIEW renamed (place, orders_count COMMENT 'how many') AS "
        + "SELECT region, count(*) FROM orders GROUP BY region");

    assertThat(spark.table("renamed").columns()).containsExactly("place", "orders_count");
    assertSameRows(
        "SELECT place, orders_count FROM renamed", "SELECT region, count(*) FROM orders GROUP BY region", 2);
  }

  @Test
  void partitioningByAnUnknownColumnFailsNamingTheViewAndLeavesNothing() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW bad_parts PARTITIONED BY (nope) AS " + BY_REGION))
        .contains("Cannot create materialized view lake." + ns + ".bad_parts")
        .contains("nope");
    assertThat(viewExists("bad_parts")).isFalse();
    assertThat(tableExists("bad_parts__storage")).isFalse();
  }

  /**
   * Names with dots, backticks, spaces and mixed case, of sources, views and namespaces: the view
   * properties quote such a part, so the storage table and the sources read back as they were.
   */
  @Test
  void namesThatAreNotPlainIdentifiersWorkEndToEnd() {
    sql("CREATE TABLE `my.tab` (`select` INT, `Grp` STRING) USING iceberg");
    sql("INSERT INTO `my.tab` VALUES (1, 'a')");
    String definition = "SELECT `Grp`, SUM(`select`) AS `order` FROM `my.tab` GROUP BY `Grp`";

    List<Row> created = sql("CREATE MATERIALIZED VIEW lake." + ns + ".`my.mv` AS " + definition);

    assertThat(created.get(0).getString(0)).isEqualTo("lake." + ns + ".`my.mv`");
    assertThat(view("my.mv").properties())
        .containsEntry(MaterializedViewProperties.STORAGE_TABLE, ns + ".`my.mv__storage`")
        .containsEntry(MaterializedView.SOURCES, "lake." + ns + ".`my.tab`");
    assertThat(table("my.mv__storage").properties())
        .containsEntry(MaterializedViewProperties.MATERIALIZED_VIEW, ns + ".`my.mv`");
    assertSameRows("SELECT * FROM `my.mv`", definition, 1);

    sql("INSERT INTO `my.tab` VALUES (2, 'a'), (5, 'b')");
    assertThat(sql("REFRESH MATERIALIZED VIEW `my.mv`").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM `my.mv`", definition, 2);

    // An MV over it, in a namespace whose name has a dot, with a backtick and a space in its name.
    // The test catalog is a JDBC catalog, which keeps the level `ns.we ird` as namespace ns and
    // its child `we ird`: Floe names it so too, as the catalog lists it.
    String dotted = ns + ".we ird";
    sql("CREATE NAMESPACE lake.`" + dotted + "`");
    String nested = "lake.`" + dotted + "`.`the ``Nested`` mv`";
    String listed = "lake." + ns + ".`we ird`.`the ``Nested`` mv`";
    String nestedDefinition = "SELECT count(*) AS groups, sum(`order`) AS total FROM lake." + ns + ".`my.mv`";
    sql("CREATE MATERIALIZED VIEW " + nested + " AS " + nestedDefinition);
    sql("INSERT INTO `my.tab` VALUES (7, 'c')");

    List<Row> cascade = sql("REFRESH MATERIALIZED VIEW `my.mv` CASCADE");

    assertThat(cascade).extracting(r -> r.getString(0))
        .containsExactly("lake." + ns + ".`my.mv`", listed);
    assertThat(cascade).extracting(r -> r.getString(1)).containsExactly("INCREMENTAL", "INCREMENTAL");
    assertSameRows("SELECT * FROM " + nested, nestedDefinition, 1);
    assertThat(sql("SELECT total FROM " + nested).get(0).getLong(0)).isEqualTo(15);
    assertThat(sql("SHOW MATERIALIZED VIEWS IN lake.`" + dotted + "`"))
        .extracting(r -> r.getString(0) + " " + r.getString(1) + " " + r.getString(4))
        .containsExactly(ns + ".`we ird` the `Nested` mv FRESH");
    assertThat(describe(nested))
        .containsEntry("Namespace", ns + ".`we ird`")
        .containsEntry("Name", "the `Nested` mv")
        .containsEntry("Storage Table", "lake." + ns + ".`we ird`.`the ``Nested`` mv__storage`")
        .containsEntry("Sources", "lake." + ns + ".`my.mv`")
        .containsEntry("Freshness", "FRESH");
    sql("INSERT INTO `my.tab` VALUES (1, 'd')");
    assertThat(describe(nested).get("Freshness")).startsWith("STALE");

    // An MV over the nested one, in the same namespace: found as its reader, whatever the form of the name.
    sql("CREATE MATERIALIZED VIEW lake.`" + dotted + "`.`Top` AS SELECT total FROM " + nested);
    assertThat(errorOf("DROP MATERIALIZED VIEW " + nested)).contains("lake." + ns + ".`we ird`.Top");
    assertThat(sql("REFRESH MATERIALIZED VIEW `my.mv` CASCADE")).hasSize(3);
    assertSameRows("SELECT * FROM lake.`" + dotted + "`.`Top`", "SELECT total FROM (" + nestedDefinition + ")", 1);

    assertThat(errorOf("DROP TABLE `my.tab`")).contains("lake." + ns + ".`my.mv`");
    sql("DROP MATERIALIZED VIEW `my.mv` CASCADE");
    assertThat(sql("SHOW TABLES IN lake.`" + dotted + "`")).isEmpty();
    assertThat(sql("SHOW TABLES")).extracting(r -> r.getString(1)).containsExactlyInAnyOrder("my.tab", "orders");
    assertThat(viewExists("my.mv")).isFalse();
    sql("DROP NAMESPACE lake.`" + dotted + "`");
  }

  /** A view written before names were quoted keeps its plain {@code namespace.name} properties, read as before. */
  @Test
  void aViewWhosePropertiesAreUnquotedStillWorks() {
    sql("CREATE TABLE `legacy-src` (id INT) USING iceberg");
    sql("INSERT INTO `legacy-src` VALUES (1), (2)");
    sql("CREATE MATERIALIZED VIEW `legacy-mv` AS SELECT id FROM `legacy-src`");
    view("legacy-mv").updateProperties()
        .set(MaterializedViewProperties.STORAGE_TABLE, ns + ".legacy-mv__storage")
        .set(MaterializedView.SOURCES, "lake." + ns + ".legacy-src")
        .commit();

    assertThat(describe("`legacy-mv`"))
        .containsEntry("Storage Table", "lake." + ns + ".`legacy-mv__storage`")
        .containsEntry("Sources", "lake." + ns + ".`legacy-src`")
        .containsEntry("Freshness", "FRESH");
    sql("INSERT INTO `legacy-src` VALUES (3)");
    assertThat(sql("REFRESH MATERIALIZED VIEW `legacy-mv`").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM `legacy-mv`", "SELECT id FROM `legacy-src`", 3);
    assertThat(errorOf("DROP TABLE `legacy-src`")).contains("`legacy-mv`").contains("reads it");
    assertThat(errorOf("DROP TABLE `legacy-mv__storage`")).contains("stores materialized view");
  }

  @Test
  void aCreateWhoseFirstRefreshFailsLeavesNothingBehindWhateverTheName() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW `bad.mv` AS SELECT id, CAST(region AS INT) AS code FROM orders"))
        .contains("Cannot create materialized view lake." + ns + ".`bad.mv`: its first refresh failed")
        .contains("CAST_INVALID_INPUT");
    assertThat(viewExists("bad.mv")).isFalse();
    assertThat(tableExists("bad.mv__storage")).isFalse();
    assertThat(sql("SHOW TABLES")).extracting(r -> r.getString(1)).containsExactly("orders");
  }

  @Test
  void aMalformedStatementReportsAParseError() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW AS SELECT 1")).contains("materialized view name");
  }
}
