package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * DROP, ALTER, SHOW MATERIALIZED VIEWS, SHOW VIEWS, DESCRIBE EXTENDED and SHOW TBLPROPERTIES of
 * materialized views.
 */
class MaterializedViewCatalogStatementsTest extends MvTestSupport {
  private static final String QUERY = "SELECT region, count(*) AS n FROM orders GROUP BY region";

  @Override
  protected String prefix() {
    return "stmts";
  }

  @BeforeEach
  void ordersAndView() {
    sql("CREATE TABLE orders (id INT, region STRING) USING iceberg");
    sql("INSERT INTO orders VALUES (1, 'Tokyo'), (2, 'Osaka')");
    sql("CREATE MATERIALIZED VIEW counts AS " + QUERY);
  }

  @Test
  void showMaterializedViewsListsAViewWhoseStateCannotBeReadWithoutHidingTheOthers() {
    sql("CREATE MATERIALIZED VIEW broken AS SELECT * FROM counts");
    // Its storage table dropped behind Floe's back.
    iceberg().dropTable(id("broken__storage"), true);

    List<Row> rows = sql("SHOW MATERIALIZED VIEWS");

    assertThat(rows).extracting(r -> r.getString(1)).containsExactlyInAnyOrder("counts", "broken");
    assertThat(rows).filteredOn(r -> r.getString(1).equals("broken")).singleElement()
        .satisfies(r -> assertThat(r.getString(4)).startsWith("UNKNOWN: cannot read its state: ").contains("broken__storage"));
    assertThat(rows).filteredOn(r -> r.getString(1).equals("counts")).singleElement()
        .satisfies(r -> assertThat(r.getString(4)).isEqualTo("FRESH"));
    // A read of it says what happened, naming the view.
    assertThat(errorOf("SELECT * FROM broken"))
        .contains("Materialized view lake." + ns + ".broken has lost its storage table lake." + ns + ".broken__storage");
  }

  @Test
  void withoutACurrentNamespaceShowMaterializedViewsListsThoseOfEveryNamespace() {
    var catalogs = ((org.apache.spark.sql.classic.SparkSession) spark).sessionState().catalogManager();
    // The catalog's own empty namespace, as in a fresh session of the embedded lakehouse.
    catalogs.reset();
    try {
      assertThat(catalogs.currentNamespace()).isEmpty();
      assertThat(sql("SHOW MATERIALIZED VIEWS LIKE 'counts'"))
          .extracting(r -> r.getString(0) + "." + r.getString(1) + " " + r.getString(4))
          .contains(ns + ".counts FRESH");
    } finally {
      sql("USE lake." + ns);
    }
  }

  // ---- DROP MATERIALIZED VIEW ----

  @Test
  void dropRemovesTheViewAndItsStorageTable() {
    sql("DROP MATERIALIZED VIEW counts");

    assertThat(viewExists("counts")).isFalse();
    assertThat(tableExists("counts__storage")).isFalse();
    assertThat(sql("SHOW MATERIALIZED VIEWS")).isEmpty();
    assertThat(errorOf("SELECT * FROM counts")).contains("counts");
  }

  @Test
  void dropRemovesTheOldStorageAReplacementInterruptedBeforeItsCommitLeftAside() {
    // What a CREATE OR REPLACE that needed new storage leaves when its process dies before the
    // replacement's refresh commits: the old storage table renamed aside, next to the new one.
    iceberg().renameTable(id("counts__storage"), id("counts__storage__replaced"));
    sql("CREATE TABLE lake." + ns + ".counts__storage (id INT) USING iceberg");

    sql("DROP MATERIALIZED VIEW counts");

    assertThat(viewExists("counts")).isFalse();
    assertThat(tableExists("counts__storage")).isFalse();
    assertThat(tableExists("counts__storage__replaced")).isFalse();
  }

  @Test
  void aDroppedViewCanBeCreatedAgainUnderTheSameName() {
    sql("SELECT * FROM lake." + ns + ".counts__storage").size();
    sql("DROP MATERIALIZED VIEW counts");

    assertThat(errorOf("SELECT * FROM lake." + ns + ".counts__storage")).contains("counts__storage");

    sql("CREATE MATERIALIZED VIEW counts AS SELECT id FROM orders");

    assertSameRows("SELECT * FROM counts", "SELECT id FROM orders", 2);
  }

  @Test
  void dropIfExistsOfAMissingViewDoesNothing() {
    assertThat(sql("DROP MATERIALIZED VIEW IF EXISTS nope")).isEmpty();

    assertThat(viewExists("counts")).isTrue();
  }

  @Test
  void dropIfExistsOfAnExistingViewDropsIt() {
    sql("DROP MATERIALIZED VIEW IF EXISTS counts");

    assertThat(viewExists("counts")).isFalse();
    assertThat(tableExists("counts__storage")).isFalse();
  }

  @Test
  void dropOfAMissingViewFailsNamingIt() {
    assertThat(errorOf("DROP MATERIALIZED VIEW nope"))
        .contains("lake." + ns + ".nope")
        .contains("does not exist");
  }

  @Test
  void dropMaterializedViewOfATableFailsAndKeepsTheTable() {
    assertThat(errorOf("DROP MATERIALIZED VIEW orders"))
        .contains("lake." + ns + ".orders")
        .contains("is a table");
    assertThat(tableExists("orders")).isTrue();
  }

  @Test
  void dropWithAThreePartNameFromAnotherNamespace() {
    spark.sql("CREATE NAMESPACE lake." + ns + "_elsewhere");
    spark.sql("USE lake." + ns + "_elsewhere");

    sql("DROP MATERIALIZED VIEW lake." + ns + ".counts");

    assertThat(viewExists("counts")).isFalse();
    assertThat(tableExists("counts__storage")).isFalse();
  }

  @Test
  void viewsInAnotherNamespaceWorkByThreePartNames() {
    String home = ns;
    String other = ns + "_other";
    spark.sql("CREATE NAMESPACE lake." + other);
    spark.sql("CREATE NAMESPACE lake." + ns + "_third");
    spark.sql("USE lake." + ns + "_third");

    sql("CREATE MATERIALIZED VIEW lake." + other + ".remote AS SELECT id FROM lake." + home + ".orders");
    sql("INSERT INTO lake." + home + ".orders VALUES (3, 'Kobe')");
    assertThat(sql("REFRESH MATERIALIZED VIEW lake." + other + ".remote").get(0).getString(1)).isEqualTo("INCREMENTAL");

    assertSameRows("SELECT * FROM lake." + other + ".remote", "SELECT id FROM lake." + home + ".orders", 3);
    assertThat(iceberg().tableExists(org.apache.iceberg.catalog.TableIdentifier.of(other, "remote__storage")))
        .isTrue();
    assertThat(sql("SHOW MATERIALIZED VIEWS IN lake." + other)).extracting(r -> r.getString(1))
        .containsExactly("remote");
    assertThat(describe("lake." + other + ".remote")).containsEntry("Freshness", "FRESH");
  }

  // ---- ALTER MATERIALIZED VIEW ----

  @Test
  void addScheduleIsVisibleAndKeepsTheViewVersion() {
    int version = view("counts").currentVersion().versionId();

    sql("ALTER MATERIALIZED VIEW counts ADD SCHEDULE REFRESH EVERY 2 HOURS");

    assertThat(describe("counts")).containsEntry("Schedule", "EVERY 2 HOURS");
    assertThat(showRow("counts").getString(5)).isEqualTo("EVERY 2 HOURS");
    assertThat(view("counts").currentVersion().versionId()).isEqualTo(version);
    assertThat(freshness("counts")).isEqualTo("FRESH");
  }

  @Test
  void dropScheduleRemovesItAndKeepsTheViewVersion() {
    sql("ALTER MATERIALIZED VIEW counts ADD SCHEDULE REFRESH EVERY 2 HOURS");
    int version = view("counts").currentVersion().versionId();

    sql("ALTER MATERIALIZED VIEW counts DROP SCHEDULE");

    assertThat(describe("counts")).containsEntry("Schedule", "none (refresh on demand)");
    assertThat(showRow("counts").isNullAt(5)).isTrue();
    assertThat(view("counts").currentVersion().versionId()).isEqualTo(version);
  }

  @Test
  void dropScheduleOfAViewWithoutOneFails() {
    assertThat(errorOf("ALTER MATERIALIZED VIEW counts DROP SCHEDULE"))
        .contains("lake." + ns + ".counts")
        .contains("it has none");
  }

  @Test
  void alterOfAMissingViewFailsNamingIt() {
    assertThat(errorOf("ALTER MATERIALIZED VIEW nope ADD SCHEDULE REFRESH EVERY 2 HOURS"))
        .contains("lake." + ns + ".nope")
        .contains("does not exist");
  }

  @Test
  void alterCannotChangeFloesOwnProperties() {
    assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('materialized-view.storage-table' = 'x.y')"))
        .contains("materialized-view.storage-table")
        .contains("Floe maintains it");
  }

  @Test
  void alterCannotSetTheKeysItsOwnClausesSetAndCheck() {
    for (String key : List.of("floe.refresh-policy", "floe.schedule", "floe.storage-layout", "isMaterializedView")) {
      assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('" + key + "' = 'x')"))
          .as(key)
          .contains("'" + key + "'")
          .contains("Floe maintains it");
    }
    assertThat(sql("SHOW MATERIALIZED VIEWS")).hasSize(1);
  }

  @Test
  void alterTblPropertiesChangesTheStorageTablesWhereCreatePutsThem() {
    sql("CREATE MATERIALIZED VIEW tagged TBLPROPERTIES ('owner_team' = 'sales') AS SELECT id FROM orders");
    assertThat(tblProperties("tagged")).containsEntry("owner_team", "sales");

    sql("ALTER MATERIALIZED VIEW tagged SET TBLPROPERTIES ('owner_team' = 'finance', 'floe.compaction.enabled' = 'false',"
        + " 'comment' = 'Order ids')");

    assertThat(storageProperties("tagged"))
        .containsEntry("owner_team", "finance")
        .containsEntry("floe.compaction.enabled", "false")
        .doesNotContainKey("comment");
    assertThat(tblProperties("tagged"))
        .containsEntry("owner_team", "finance")
        .containsEntry("floe.compaction.enabled", "false")
        .containsEntry("comment", "Order ids")
        .doesNotContainKey("materialized-view.view");

    sql("ALTER MATERIALIZED VIEW tagged UNSET TBLPROPERTIES ('owner_team', 'comment')");

    assertThat(storageProperties("tagged")).doesNotContainKey("owner_team");
    assertThat(tblProperties("tagged")).doesNotContainKeys("owner_team", "comment");
    assertThat(errorOf("ALTER MATERIALIZED VIEW tagged UNSET TBLPROPERTIES ('owner_team')"))
        .contains("lake." + ns + ".tagged")
        .contains("'owner_team'")
        .contains("it is not set");
    sql("ALTER MATERIALIZED VIEW tagged UNSET TBLPROPERTIES IF EXISTS ('owner_team')");
  }

  @Test
  void alterTblPropertiesRefusesWhatCreateRefuses() {
    assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('floe.compaction.enabled' = 'no')"))
        .isEqualTo("Cannot alter materialized view lake." + ns + ".counts: TBLPROPERTIES 'floe.compaction.enabled' = 'no'"
            + " must be true or false");
    assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('floe.compaction.small-files' = '0')"))
        .contains("'floe.compaction.small-files' = '0' must be a positive whole number");
    assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('format-version' = '1')"))
        .contains("format version 2 or later");
    assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms' = 'abc')"))
        .contains("'history.expire.max-snapshot-age-ms' = 'abc' must be a positive whole number");
    assertThat(errorOf("CREATE MATERIALIZED VIEW expiring TBLPROPERTIES ('history.expire.min-snapshots-to-keep' = '-1') AS "
        + QUERY)).contains("'history.expire.min-snapshots-to-keep' = '-1' must be a positive whole number");
    sql("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms' = '3600000')");
    for (String key : List.of("materialized-view.view", "floe.managed", "floe.partitioned-by", "floe.pipeline")) {
      assertThat(errorOf("ALTER MATERIALIZED VIEW counts SET TBLPROPERTIES ('" + key + "' = 'x')"))
          .as(key)
          .contains("'" + key + "'")
          .contains("Floe maintains it");
    }
    assertThat(storageProperties("counts")).doesNotContainKey("floe.compaction.enabled");
    assertThat(storageProperties("counts")).containsEntry("materialized-view.view", ns + ".counts");
  }

  private Map<String, String> storageProperties(String mv) {
    return sql("SHOW TBLPROPERTIES " + mv + "__storage").stream()
        .collect(java.util.stream.Collectors.toMap(r -> r.getString(0), r -> r.getString(1)));
  }

  @Test
  void alterToIncrementalRefusesWhatCreateRefuses() {
    sql("CREATE MATERIALIZED VIEW sub AS SELECT id FROM orders WHERE id > (SELECT AVG(id) FROM orders)");
    assertThat(errorOf("ALTER MATERIALIZED VIEW sub SET REFRESH POLICY INCREMENTAL"))
        .contains("Cannot set REFRESH POLICY INCREMENTAL on lake." + ns + ".sub")
        .contains("subquer");
    sql("CREATE MATERIALIZED VIEW full_counts REFRESH POLICY FULL AS " + QUERY);
    assertThat(errorOf("ALTER MATERIALIZED VIEW full_counts SET REFRESH POLICY INCREMENTAL"))
        .contains("created for full refreshes (PLAIN layout)");

    sql("ALTER MATERIALIZED VIEW counts SET REFRESH POLICY INCREMENTAL");
    sql("INSERT INTO orders VALUES (3, 'Kobe')");
    assertThat(sql("REFRESH MATERIALIZED VIEW counts").get(0).getString(1)).isEqualTo("INCREMENTAL");
  }

  // ---- Spark's own view and table statements on materialized views ----

  @Test
  void sparksViewStatementsRefuseAMaterializedViewAndNameTheStatementToUse() {
    sql("CREATE MATERIALIZED VIEW top AS SELECT region FROM counts WHERE n > 0");
    String mv = "lake." + ns + ".counts";
    assertThat(errorOf("DROP VIEW counts")).contains("Cannot DROP VIEW " + mv).contains("use DROP MATERIALIZED VIEW");
    assertThat(errorOf("DROP VIEW IF EXISTS counts")).contains("use DROP MATERIALIZED VIEW");
    assertThat(errorOf("DROP TABLE counts")).contains("Cannot drop table " + mv + ": it is a materialized view")
        .contains("use DROP MATERIALIZED VIEW");
    assertThat(errorOf("DROP TABLE IF EXISTS counts")).contains("use DROP MATERIALIZED VIEW");
    assertThat(errorOf("CREATE OR REPLACE VIEW counts AS SELECT 1 AS a"))
        .contains("Cannot CREATE OR REPLACE VIEW " + mv)
        .contains("use CREATE OR REPLACE MATERIALIZED VIEW");
    assertThat(errorOf("ALTER VIEW counts AS SELECT 1 AS a")).contains("use CREATE OR REPLACE MATERIALIZED VIEW");
    assertThat(errorOf("ALTER VIEW counts RENAME TO counts2")).contains("Cannot ALTER VIEW ... RENAME TO " + mv);
    assertThat(errorOf("ALTER VIEW counts SET TBLPROPERTIES ('floe.sources' = 'x')"))
        .contains("use ALTER MATERIALIZED VIEW ... SET TBLPROPERTIES");
    assertThat(errorOf("ALTER VIEW counts UNSET TBLPROPERTIES ('comment')"))
        .contains("use ALTER MATERIALIZED VIEW ... UNSET TBLPROPERTIES");
    // Spark itself fails on these with an internal error or 'not found'.
    assertThat(errorOf("REFRESH TABLE counts")).contains("Cannot REFRESH TABLE " + mv).contains("use REFRESH MATERIALIZED VIEW");
    assertThat(errorOf("SHOW PARTITIONS counts"))
        .contains("Cannot SHOW PARTITIONS " + mv)
        .contains("SELECT * FROM " + mv + "__storage.partitions");
    assertThat(sql("SELECT * FROM " + mv + "__storage.partitions")).isNotEmpty();
    sql("REFRESH TABLE orders");
    // Nothing changed: both views still refresh and answer as before.
    assertThat(viewExists("counts")).isTrue();
    assertThat(viewExists("counts2")).isFalse();
    assertThat(sql("REFRESH MATERIALIZED VIEW top CASCADE")).isNotEmpty();
    assertSameRows("SELECT * FROM counts", QUERY, 2);

    // A plain view is Spark's as before, a temporary one of the same name too.
    sql("CREATE VIEW plain AS SELECT id FROM orders");
    sql("CREATE OR REPLACE VIEW plain AS SELECT region FROM orders");
    sql("DROP VIEW plain");
    sql("CREATE TEMPORARY VIEW counts AS SELECT 1 AS a");
    sql("DROP VIEW counts");
    assertThat(viewExists("counts")).isTrue();
  }

  @Test
  void aTableThatViewsReadOrThatStoresOneCannotBeRenamed() {
    assertThat(errorOf("ALTER TABLE orders RENAME TO orders_old"))
        .contains("Cannot rename table lake." + ns + ".orders")
        .contains("materialized view lake." + ns + ".counts reads it");
    assertThat(errorOf("ALTER TABLE counts__storage RENAME TO junk")).contains("it stores materialized view");
    assertThat(tableExists("orders")).isTrue();
    assertThat(freshness("counts")).isEqualTo("FRESH");

    sql("CREATE TABLE loose (id INT) USING iceberg");
    sql("ALTER TABLE loose RENAME TO loose2");
    assertThat(tableExists("loose2")).isTrue();

    // A view reading a table only at a snapshot it names depends on it all the same.
    sql("INSERT INTO loose2 VALUES (1), (2)");
    long snapshot = sql("SELECT snapshot_id FROM lake." + ns + ".loose2.snapshots").get(0).getLong(0);
    sql("CREATE MATERIALIZED VIEW pinned AS SELECT count(*) AS n FROM loose2 VERSION AS OF " + snapshot);
    assertThat(errorOf("ALTER TABLE loose2 RENAME TO loose3"))
        .contains("materialized view lake." + ns + ".pinned reads it");
    assertThat(errorOf("DROP TABLE loose2")).contains("lake." + ns + ".pinned");
    assertThat(tableExists("loose2")).isTrue();
    sql("DROP MATERIALIZED VIEW pinned");
    sql("DROP TABLE loose2");
  }

  @Test
  void aStorageTableWhoseViewAnotherEngineDroppedIsAnOrdinaryTable() {
    assertThat(errorOf("DROP TABLE counts__storage")).contains("use DROP MATERIALIZED VIEW");
    ((org.apache.iceberg.catalog.ViewCatalog) iceberg()).dropView(id("counts"));

    sql("DROP TABLE counts__storage");

    assertThat(tableExists("counts__storage")).isFalse();
  }

  /**
   * SHOW CREATE TABLE of an MV gives the CREATE MATERIALIZED VIEW statement that defines it as it
   * is now (after ALTERs), not Spark's CREATE VIEW of the Iceberg view; running it defines an
   * equal MV.
   */
  @Test
  void showCreateTableGivesTheStatementThatDefinesTheView() {
    assertThat(sql("SHOW CREATE TABLE counts").get(0).getString(0))
        .isEqualTo("CREATE MATERIALIZED VIEW lake." + ns + ".counts\nAS " + QUERY);

    sql("CREATE MANAGED MATERIALIZED VIEW `per region` (place COMMENT 'the region\\'s name', orders,"
        + " CONSTRAINT known EXPECT (place IS NOT NULL) ON VIOLATION DROP ROW)"
        + " COMMENT 'orders per region' PARTITIONED BY (place)"
        + " TBLPROPERTIES ('floe.compaction.enabled' = 'false', 'format-version' = '2')"
        + " SCHEDULE REFRESH EVERY 2 HOURS AS " + QUERY);
    sql("ALTER MATERIALIZED VIEW `per region` SET REFRESH POLICY FULL");
    String ddl = sql("SHOW CREATE TABLE `per region`").get(0).getString(0);
    assertThat(ddl).isEqualTo(
        "CREATE MANAGED MATERIALIZED VIEW lake." + ns + ".`per region` (\n"
            + "  place COMMENT 'the region\\'s name',\n"
            + "  orders,\n"
            + "  CONSTRAINT known EXPECT (place IS NOT NULL) ON VIOLATION DROP ROW)\n"
            + "COMMENT 'orders per region'\n"
            + "PARTITIONED BY (place)\n"
            + "TBLPROPERTIES (\n"
            + "  'floe.compaction.enabled' = 'false',\n"
            + "  'format-version' = '2')\n"
            + "SCHEDULE REFRESH EVERY 2 HOURS\n"
            + "REFRESH POLICY FULL\n"
            + "AS " + QUERY);
    Map<String, String> described = describe("`per region`");

    sql("DROP MATERIALIZED VIEW `per region`");
    sql(ddl);
    assertThat(sql("SHOW CREATE TABLE `per region`").get(0).getString(0)).isEqualTo(ddl);
    Map<String, String> again = describe("`per region`");
    for (String key : new String[] {"place", "orders", "Comment", "View Text", "Schedule", "Refresh Policy"}) {
      assertThat(again.get(key)).as(key).isEqualTo(described.get(key));
    }
    assertSameRows("SELECT * FROM `per region`", QUERY, 2);

    // A name the query gives with a comma in it: the column list is printed, so the statement renames it again.
    sql("CREATE MATERIALIZED VIEW padded (region, label) AS SELECT region, concat(region, '-', 'x') FROM orders");
    String padded = sql("SHOW CREATE TABLE padded").get(0).getString(0);
    assertThat(padded).contains("(\n  region,\n  label)");
    sql("DROP MATERIALIZED VIEW padded");
    sql(padded);
    assertThat(spark.table("padded").columns()).containsExactly("region", "label");
  }

  /** A source another engine dropped: refresh, EXPLAIN REFRESH and DESCRIBE name the view and the source. */
  @Test
  void aSourceAnotherEngineDroppedIsNamedWithTheView() {
    iceberg().dropTable(id("orders"), false);
    for (String statement : new String[] {"REFRESH MATERIALIZED VIEW counts", "EXPLAIN REFRESH MATERIALIZED VIEW counts"}) {
      assertThat(errorOf(statement)).as(statement).contains(q("counts")).contains("orders");
    }
    assertThat(sql("SELECT * FROM counts")).hasSize(2);
  }

  @Test
  void aTemporaryViewIsNotASourceAndTheErrorSaysSo() {
    sql("CREATE TEMPORARY VIEW recent AS SELECT * FROM orders WHERE id > 1");

    assertThat(errorOf("CREATE MATERIALIZED VIEW from_temp AS SELECT * FROM recent"))
        .contains("Source recent is a temporary view of this session");
    assertThat(viewExists("from_temp")).isFalse();
  }

  @Test
  void aStorageFormatWithoutRowLevelDeletesIsRefusedAtCreate() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW v1 TBLPROPERTIES ('format-version' = '1') AS " + QUERY))
        .contains("Cannot create materialized view lake." + ns + ".v1")
        .contains("'format-version' = '1'")
        .contains("format version 2 or later");
    assertThat(errorOf("CREATE MATERIALIZED VIEW v1 TBLPROPERTIES ('format-version' = 'abc') AS " + QUERY))
        .contains("'format-version' = 'abc' is not a number");
    assertThat(viewExists("v1")).isFalse();
    assertThat(tableExists("v1__storage")).isFalse();
    assertThat(errorOf("CREATE MATERIALIZED VIEW v1 TBLPROPERTIES ('floe.expectations.quarantine' = 'maybe') AS " + QUERY))
        .contains("'floe.expectations.quarantine' = 'maybe' must be true or false");
    assertThat(errorOf("CREATE MATERIALIZED VIEW v1 TBLPROPERTIES ('floe.compaction.small-files' = '0') AS " + QUERY))
        .contains("'floe.compaction.small-files' = '0' must be a positive whole number");
    assertThat(viewExists("v1")).isFalse();
    sql("CREATE MATERIALIZED VIEW v2 TBLPROPERTIES ('format-version' = '2', 'floe.compaction.enabled' = 'FALSE') AS " + QUERY);
    assertSameRows("SELECT * FROM v2", QUERY, 2);
    assertThat(formatVersion("v2__storage")).isEqualTo(2);
  }

  @Test
  void aStorageTableIsFormatThreeUnlessToldOtherwiseAndAlterUpgradesIt() {
    sql("CREATE MATERIALIZED VIEW v AS " + QUERY);
    assertThat(formatVersion("v__storage")).isEqualTo(3);
    sql("CREATE MATERIALIZED VIEW old TBLPROPERTIES ('format-version' = '2') AS " + QUERY);
    assertThat(formatVersion("old__storage")).isEqualTo(2);
    // A position delete file (format 2) on the storage's data file, then a deletion vector for the
    // same file after the upgrade: the vector takes over the file's earlier deletes.
    sql("INSERT INTO orders VALUES (3, 'Tokyo')");
    assertThat(sql("REFRESH MATERIALIZED VIEW old").get(0).getString(1)).isEqualTo("INCREMENTAL");
    sql("ALTER MATERIALIZED VIEW old SET TBLPROPERTIES ('format-version' = '3')");
    assertThat(formatVersion("old__storage")).isEqualTo(3);
    sql("DELETE FROM orders WHERE region = 'Osaka'");
    sql("INSERT INTO orders VALUES (9, 'Nara')");
    assertThat(sql("REFRESH MATERIALIZED VIEW old").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM old", QUERY, 2);
    assertThat(sql("REFRESH MATERIALIZED VIEW v").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM v", QUERY, 2);
  }

  private int formatVersion(String table) {
    return ((org.apache.iceberg.HasTableOperations) table(table)).operations().current().formatVersion();
  }

  // ---- SHOW MATERIALIZED VIEWS / SHOW VIEWS ----

  @Test
  void showMaterializedViewsListsOnlyMaterializedViews() {
    sql("CREATE VIEW plain AS SELECT * FROM orders");
    sql("CREATE MATERIALIZED VIEW another AS SELECT id FROM orders");

    List<Row> rows = sql("SHOW MATERIALIZED VIEWS");

    assertThat(rows).extracting(r -> r.getString(1)).containsExactly("another", "counts");
    Row counts = showRow("counts");
    assertThat(counts.getString(0)).isEqualTo(ns);
    assertThat(counts.getString(2)).isEqualTo("FULL");
    assertThat(counts.getString(3)).isNotNull().endsWith("UTC");
    assertThat(counts.getString(4)).isEqualTo("FRESH");
  }

  @Test
  void showMaterializedViewsFromAndInANamespace() {
    String other = ns;
    spark.sql("CREATE NAMESPACE lake." + ns + "_other");
    spark.sql("USE lake." + ns + "_other");

    assertThat(sql("SHOW MATERIALIZED VIEWS")).isEmpty();
    assertThat(sql("SHOW MATERIALIZED VIEWS FROM " + other)).extracting(r -> r.getString(1)).containsExactly("counts");
    assertThat(sql("SHOW MATERIALIZED VIEWS IN lake." + other))
        .extracting(r -> r.getString(1))
        .containsExactly("counts");
  }

  @Test
  void showMaterializedViewsLike() {
    sql("CREATE MATERIALIZED VIEW another AS SELECT id FROM orders");

    assertThat(sql("SHOW MATERIALIZED VIEWS LIKE 'cou*'")).extracting(r -> r.getString(1)).containsExactly("counts");
    assertThat(sql("SHOW MATERIALIZED VIEWS FROM " + ns + " LIKE 'an*|co*'"))
        .extracting(r -> r.getString(1))
        .containsExactly("another", "counts");
    assertThat(sql("SHOW MATERIALIZED VIEWS LIKE 'zzz*'")).isEmpty();
  }

  @Test
  void showMaterializedViewsOfAMissingNamespaceFails() {
    assertThat(errorOf("SHOW MATERIALIZED VIEWS FROM no_such_ns_" + Long.toHexString(System.nanoTime())))
        .contains("no_such_ns_")
        .contains("does not exist");
  }

  @Test
  void showViewsListsMaterializedViews() {
    List<Row> rows = sql("SHOW VIEWS FROM " + ns);

    assertThat(rows).extracting(r -> r.getString(1)).contains("counts").doesNotContain("counts__storage");
  }

  // ---- DESCRIBE EXTENDED ----

  @Test
  void describeExtendedShowsDefinitionScheduleLastRefreshAndStorage() {
    sql("ALTER MATERIALIZED VIEW counts ADD SCHEDULE REFRESH EVERY 2 HOURS");

    Map<String, String> described = describe("counts");

    assertThat(described)
        .containsEntry("region", "string")
        .containsEntry("n", "bigint")
        .containsEntry("View Text", QUERY)
        .containsEntry("Schedule", "EVERY 2 HOURS")
        .containsEntry("Last Refresh Type", "FULL")
        .containsEntry("Storage Table", "lake." + ns + ".counts__storage")
        .containsEntry("Freshness", "FRESH")
        .containsEntry("Sources", "lake." + ns + ".orders");
    assertThat(described.get("Last Refresh Time")).matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC");
    assertThat(described.get("Storage Snapshot")).isEqualTo(Long.toString(storageSnapshot("counts").snapshotId()));
  }

  @Test
  void describeWithoutExtendedShowsColumnsOnly() {
    List<Row> rows = sql("DESCRIBE counts");

    assertThat(rows).extracting(r -> r.getString(0)).containsExactly("region", "n");
  }

  @Test
  void describeExtendedGivesTheReasonTheRefreshGave() {
    sql("INSERT INTO orders VALUES (3, 'Kobe')");
    Row refreshed = sql("REFRESH MATERIALIZED VIEW counts").get(0);

    assertThat(refreshed.getString(1)).isEqualTo("INCREMENTAL");
    assertThat(describe("counts")).containsEntry("Last Refresh Type", "INCREMENTAL").containsEntry("Last Refresh Reason", refreshed.getString(2));
  }

  @Test
  void showColumnsListsTheViewsColumns() {
    assertThat(sql("SHOW COLUMNS IN counts")).extracting(r -> r.getString(0)).containsExactly("region", "n");
    assertThat(sql("SHOW COLUMNS FROM counts IN lake." + ns)).extracting(r -> r.getString(0)).containsExactly("region", "n");
    assertThat(sql("SHOW COLUMNS IN orders")).extracting(r -> r.getString(0)).as("a table, as Spark shows it").isNotEmpty();
  }

  @Test
  void describeExtendedSaysStaleNamingTheMovedSource() {
    sql("INSERT INTO orders VALUES (3, 'Kobe')");

    assertThat(freshness("counts")).startsWith("STALE").contains("source " + q("orders") + " has new commits");
  }

  // ---- DROP NAMESPACE ----

  @Test
  void dropNamespaceCascadeDropsItsMaterializedViewsAndTheirReadersElsewhere() {
    String other = ns + "_teardown";
    sql("CREATE NAMESPACE lake." + other);
    sql("CREATE NAMESPACE lake." + other + ".inner");
    sql("CREATE TABLE lake." + other + ".trips (id INT, city STRING) USING iceberg");
    sql("INSERT INTO lake." + other + ".trips VALUES (1, 'Oslo'), (2, 'Lima')");
    sql("CREATE TABLE lake." + other + ".inner.cities (city STRING) USING iceberg");
    sql("CREATE MATERIALIZED VIEW lake." + other + ".silver AS SELECT id, city FROM lake." + other + ".trips");
    sql("CREATE MATERIALIZED VIEW lake." + other + ".gold AS SELECT city, count(*) AS n FROM lake." + other + ".silver GROUP BY city");
    sql("CREATE VIEW lake." + other + ".plain AS SELECT id FROM lake." + other + ".trips");
    // An MV of this test's own namespace that reads the one dropped goes with it, as DROP TABLE ... CASCADE does.
    sql("CREATE MATERIALIZED VIEW outside AS SELECT count(*) AS n FROM lake." + other + ".gold");

    assertThat(errorOf("DROP NAMESPACE lake." + other)).contains("not empty");

    sql("DROP NAMESPACE lake." + other + " CASCADE");

    assertThat(sql("SHOW NAMESPACES IN lake").stream().map(r -> r.getString(0))).doesNotContain(other);
    assertThat(sql("SHOW MATERIALIZED VIEWS").stream().map(r -> r.getString(1))).containsExactly("counts");
    assertThat(sql("SHOW TABLES").stream().map(r -> r.getString(1))).doesNotContain("outside__storage");
    assertThat(sql("SELECT * FROM counts")).isNotEmpty();
    sql("DROP NAMESPACE IF EXISTS lake." + other + " CASCADE");
    assertThat(errorOf("DROP NAMESPACE lake." + other + " CASCADE")).contains(other);
  }

  // ---- SHOW TBLPROPERTIES ----

  @Test
  void showTblPropertiesIncludesGlueKeys() {
    Map<String, String> properties = tblProperties("counts");

    assertThat(properties)
        .containsEntry("isMaterializedView", "true")
        .containsEntry("lastRefreshType", "FULL")
        .containsEntry("viewOriginalText", QUERY)
        .containsEntry("current-snapshot-id", Long.toString(storageSnapshot("counts").snapshotId()))
        .containsEntry("materialized-view.storage-table", ns + ".counts__storage");
  }

  @Test
  void showTblPropertiesOfOneKey() {
    assertThat(sql("SHOW TBLPROPERTIES counts ('isMaterializedView')"))
        .extracting(Row::toString)
        .containsExactly("[isMaterializedView,true]");
  }

  @Test
  void showTblPropertiesOfATableIsSparks() {
    sql("ALTER TABLE orders SET TBLPROPERTIES ('owner_team' = 'sales')");

    assertThat(sql("SHOW TBLPROPERTIES orders"))
        .extracting(r -> r.getString(0))
        .contains("owner_team")
        .doesNotContain("isMaterializedView");
  }

  private Row showRow(String mv) {
    return sql("SHOW MATERIALIZED VIEWS").stream()
        .filter(r -> r.getString(1).equals(mv))
        .findFirst()
        .orElseThrow();
  }
}
