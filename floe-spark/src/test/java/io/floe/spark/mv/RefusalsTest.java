package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Definitions, writes and drops that Floe refuses, each with a message naming the object and the
 * problem, and the catalog left as it was.
 */
class RefusalsTest extends MvTestSupport {
  @Override
  protected String prefix() {
    return "refuse";
  }

  @BeforeEach
  void sourceTable() {
    sql("CREATE TABLE t (id INT, v STRING) USING iceberg");
    sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
  }

  private String mv(String name) {
    return "lake." + ns + "." + name;
  }

  private void assertNothingCreated(String name) {
    assertThat(viewExists(name)).as("view %s", name).isFalse();
    assertThat(tableExists(name + "__storage")).as("storage of %s", name).isFalse();
  }

  // ---- definitions ----

  @Test
  void aDefinitionThatDoesNotParseIsRefusedNamingTheView() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW broken AS SELECT id FROM t ORDER BY"))
        .startsWith("Cannot create materialized view " + mv("broken") + ": its definition does not parse: ")
        .contains("PARSE_SYNTAX_ERROR");
    assertNothingCreated("broken");
  }

  @Test
  void definitionReadingItselfIsRefused() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW selfie AS SELECT * FROM selfie"))
        .contains("Cannot create materialized view " + mv("selfie"))
        .contains("reads " + mv("selfie") + " itself");
    assertNothingCreated("selfie");
  }

  @Test
  void replacingADefinitionToReadItselfIsRefused() {
    sql("CREATE MATERIALIZED VIEW a AS SELECT * FROM t");

    assertThat(errorOf("CREATE OR REPLACE MATERIALIZED VIEW a AS SELECT * FROM a"))
        .contains(mv("a") + " itself");
    assertThat(describe("a")).containsEntry("View Text", "SELECT * FROM t");
  }

  @Test
  void cycleThroughCreateOrReplaceIsRefusedNamingTheCycle() {
    sql("CREATE MATERIALIZED VIEW a AS SELECT * FROM t");
    sql("CREATE MATERIALIZED VIEW b AS SELECT * FROM a");

    assertThat(errorOf("CREATE OR REPLACE MATERIALIZED VIEW a AS SELECT * FROM b"))
        .contains("Cannot create materialized view " + mv("a"))
        .contains("forms a cycle")
        .containsAnyOf(mv("a") + " → " + mv("b") + " → " + mv("a"), mv("b") + " → " + mv("a") + " → " + mv("b"));
    assertThat(describe("a")).containsEntry("View Text", "SELECT * FROM t").containsEntry("Freshness", "FRESH");
    assertSameRows("SELECT * FROM a", "SELECT * FROM t", 2);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "rand()|rand",
        "uuid()|uuid",
        "current_timestamp()|current_timestamp",
        "current_date()|current_date",
        "now()|now",
        "randn(7)|randn",
        "unix_timestamp()|current_timestamp() (in unix_timestamp(current_timestamp()",
        "year(current_date()) + 1|current_date() (in year(current_date()))"
      })
  void nonDeterministicFunctionsAreRefused(String call, String function) {
    assertThat(errorOf("CREATE MATERIALIZED VIEW nd AS SELECT id, " + call + " AS x FROM t"))
        .contains("Cannot create materialized view " + mv("nd"))
        .contains("non-deterministic function " + function);
    assertNothingCreated("nd");
  }

  /**
   * first(), any_value() and collect_list() give values in the order rows are read, which changes
   * with the files writes and compactions leave. Catalyst calls them deterministic; a view cannot
   * keep them. Sorted, or over a window with ORDER BY, they say which value, and are allowed.
   */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "first(v)|first(), whose value is that of whichever row is read first",
        "last(v)|last(), whose value",
        "any_value(v)|any_value(), whose value",
        "collect_list(v)|collect_list(), whose array lists the values in the order rows are read",
        "concat_ws(',', collect_set(v))|collect_set(), whose array",
        "listagg(v, ',')|listagg() without WITHIN GROUP (ORDER BY ...), which joins the values in the order rows are read",
        "string_agg(v)|string_agg() without WITHIN GROUP",
        "mode(v)|mode(), which returns any one of equally frequent values"
      })
  void aggregatesThatDependOnTheOrderOfRowsAreRefused(String call, String problem) {
    assertThat(errorOf("CREATE MATERIALIZED VIEW by_order AS SELECT id, " + call + " AS x FROM t GROUP BY id"))
        .contains("Cannot create materialized view " + mv("by_order"))
        .contains(problem);
    assertNothingCreated("by_order");
  }

  /**
   * An array collected in HAVING, or in a subquery, is computed into a column the analyzer adds to
   * the aggregate; where that column is used decides, as where the call is written does.
   */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "SELECT id FROM t GROUP BY id HAVING element_at(collect_list(v), 1) = 'a'|collect_list(), whose array",
        "SELECT * FROM (SELECT id, collect_set(v) AS vs FROM t GROUP BY id) WHERE size(vs) > 0|collect_set(), whose array",
        "SELECT id, (SELECT collect_list(v) FROM t) AS all_v FROM t|collect_list(), whose array"
      })
  void anArrayCollectedInOrderIsRefusedWhereverItIsUsed(String query, String problem) {
    assertThat(errorOf("CREATE MATERIALIZED VIEW by_order AS " + query))
        .contains("Cannot create materialized view " + mv("by_order"))
        .contains(problem);
    assertNothingCreated("by_order");
  }

  @Test
  void anArraySizedOrSortedInHavingIsAllowed() {
    sql("CREATE MATERIALIZED VIEW several_values AS SELECT id, count(*) AS n FROM t GROUP BY id"
        + " HAVING size(collect_set(v)) >= 1 AND array_sort(collect_list(v))[0] IS NOT NULL");
    assertThat(count("SELECT * FROM several_values")).isEqualTo(2);
    sql("DROP MATERIALIZED VIEW several_values");
  }

  @Test
  void orderedAggregatesAreAllowed() {
    sql("CREATE MATERIALIZED VIEW sorted_values AS SELECT id, array_sort(collect_list(v)) AS vs,"
        + " sort_array(collect_set(v)) AS distinct_vs, size(collect_set(v)) AS n,"
        + " listagg(v, ',') WITHIN GROUP (ORDER BY v) AS joined, mode(v, true) AS most,"
        + " mode() WITHIN GROUP (ORDER BY v) AS most_ordered FROM t GROUP BY id");
    sql("CREATE MATERIALIZED VIEW first_in_order AS SELECT id,"
        + " first_value(v) OVER (PARTITION BY id ORDER BY v) AS first_v FROM t");
    assertThat(count("SELECT * FROM sorted_values")).isEqualTo(2);
    assertThat(count("SELECT * FROM first_in_order")).isEqualTo(2);
  }

  /**
   * A MAP column (also inside an array or struct) cannot be compared, so a row-level view holding
   * one is created for full refreshes (INCREMENTAL refuses it, naming the column) instead of failing
   * its first refresh.
   */
  @Test
  void aViewWithAMapColumnRefreshesInFull() {
    String query = "SELECT id, map(v, id) AS m, array(named_struct('tags', map(v, 1))) AS nested FROM t";
    assertThat(sql("CREATE MATERIALIZED VIEW with_map AS " + query).get(0).getString(1)).isEqualTo("FULL");
    assertThat(describe("with_map")).containsEntry("Refresh Policy", "AUTO");
    sql("INSERT INTO t VALUES (3, 'c')");
    Row refreshed = sql("REFRESH MATERIALIZED VIEW with_map").get(0);
    assertThat(refreshed.getString(1)).isEqualTo("FULL");
    assertThat(refreshed.getString(2)).contains("column m holds a MAP");
    assertThat(sql("SELECT m[v] FROM with_map JOIN t USING (id) ORDER BY id")).extracting(r -> r.getInt(0)).containsExactly(1, 2, 3);
    assertThat(errorOf("CREATE MATERIALIZED VIEW only_nested REFRESH POLICY INCREMENTAL AS SELECT id, nested FROM (" + query + ")"))
        .contains("Cannot create materialized view " + mv("only_nested") + " with REFRESH POLICY INCREMENTAL")
        .contains("column nested holds a MAP");
  }

  @Test
  void columnsWithTheReservedPrefixAreRefusedInAnyCase() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW reserved AS SELECT id AS __floe_count FROM t"))
        .contains("Cannot create materialized view " + mv("reserved"))
        .contains("column __floe_count uses the prefix __floe_");
    assertThat(errorOf("CREATE MATERIALIZED VIEW reserved AS SELECT id, v AS __Floe_Key FROM t"))
        .contains("Cannot create materialized view " + mv("reserved"))
        .contains("column __Floe_Key uses the prefix __floe_ (in any case)");
    assertNothingCreated("reserved");
  }

  /**
   * A branch or tag read by name moves without a snapshot of the table's main history to record:
   * refreshes would never see it move. A snapshot id stays where it is, and is allowed.
   */
  @Test
  void aDefinitionReadingABranchOrTagIsRefusedAndOneReadingASnapshotIsNot() {
    sql("ALTER TABLE t CREATE BRANCH audit");
    sql("ALTER TABLE t CREATE TAG eod");
    assertThat(errorOf("CREATE MATERIALIZED VIEW on_branch AS SELECT id FROM t VERSION AS OF 'audit'"))
        .contains("Cannot create materialized view " + mv("on_branch"))
        .contains("VERSION AS OF 'audit', a branch or tag");
    assertThat(errorOf("CREATE MATERIALIZED VIEW on_tag AS SELECT * FROM (SELECT id FROM t VERSION AS OF 'eod')"))
        .contains("VERSION AS OF 'eod', a branch or tag");
    assertNothingCreated("on_branch");
    assertNothingCreated("on_tag");

    long snapshot = table("t").currentSnapshot().snapshotId();
    sql("CREATE MATERIALIZED VIEW on_snapshot AS SELECT id FROM t VERSION AS OF " + snapshot);
    sql("CREATE MATERIALIZED VIEW on_snapshot_in_cte AS WITH s AS (SELECT id FROM t VERSION AS OF " + snapshot
        + ") SELECT id FROM s");
    sql("INSERT INTO t VALUES (3, 'c')");
    assertThat(sql("REFRESH MATERIALIZED VIEW on_snapshot").get(0).<String>getAs("refresh_type")).isEqualTo("NO_CHANGE");
    assertThat(count("SELECT * FROM on_snapshot")).isEqualTo(2);

    // Once that snapshot is expired, every refresh says the definition can no longer be computed.
    sql("ALTER TABLE t DROP BRANCH audit");
    sql("ALTER TABLE t DROP TAG eod");
    sql("CALL lake.system.expire_snapshots(table => '" + ns + ".t', older_than => TIMESTAMP '2999-01-01 00:00:00',"
        + " retain_last => 1)");
    for (String view : new String[] {"on_snapshot", "on_snapshot_in_cte"}) {
      for (String refresh : new String[] {"REFRESH MATERIALIZED VIEW " + view, "REFRESH MATERIALIZED VIEW " + view + " FULL"}) {
        assertThat(errorOf(refresh))
            .startsWith("Cannot refresh " + mv(view) + ": the definition reads lake." + ns + ".t VERSION AS OF "
                + snapshot + ", a snapshot lake." + ns + ".t no longer has (its snapshots were expired)");
      }
    }
    assertThat(count("SELECT * FROM on_snapshot")).isEqualTo(2);
  }

  /**
   * {@code TIMESTAMP AS OF} a time that moves with the clock, or is still to come, names a
   * different snapshot as time passes, without a commit a refresh could see. A time in the past
   * names one snapshot for good, and is allowed.
   */
  @Test
  void aDefinitionReadingAMovingOrFutureTimeIsRefusedAndOneReadingAPastTimeIsNot() throws Exception {
    assertThat(errorOf("CREATE MATERIALIZED VIEW trailing AS SELECT id FROM t TIMESTAMP AS OF current_timestamp() - INTERVAL 1 DAY"))
        .contains("Cannot create materialized view " + mv("trailing"))
        .contains("moves with the clock");
    assertThat(errorOf("CREATE MATERIALIZED VIEW today AS SELECT id FROM t TIMESTAMP AS OF now()"))
        .contains("moves with the clock");
    assertThat(errorOf("CREATE MATERIALIZED VIEW later AS SELECT id FROM t TIMESTAMP AS OF '2999-01-01 00:00:00'"))
        .contains("Cannot create materialized view " + mv("later"))
        .contains("TIMESTAMP AS OF '2999-01-01 00:00:00', a time still to come");
    assertNothingCreated("trailing");
    assertNothingCreated("today");
    assertNothingCreated("later");

    Thread.sleep(5);
    String past = spark.sql("SELECT CAST(current_timestamp() AS STRING)").first().getString(0);
    Thread.sleep(5);
    sql("INSERT INTO t VALUES (3, 'c')");
    sql("CREATE MATERIALIZED VIEW then_rows AS SELECT id FROM t TIMESTAMP AS OF '" + past + "'");
    assertThat(count("SELECT * FROM then_rows")).isEqualTo(2);
    sql("INSERT INTO t VALUES (4, 'd')");
    assertThat(sql("REFRESH MATERIALIZED VIEW then_rows").get(0).<String>getAs("refresh_type")).isEqualTo("NO_CHANGE");
    assertThat(count("SELECT * FROM then_rows")).isEqualTo(2);
  }

  @Test
  void aDefinitionReadingMetadataColumnsIsRefused() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW located AS SELECT id, _file AS f, _pos AS p FROM t"))
        .contains("Cannot create materialized view " + mv("located"))
        .contains("metadata column _file")
        .contains("compacted");
    assertNothingCreated("located");
  }

  @Test
  void nonDeterministicFunctionInAFilterIsRefused() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW nd AS SELECT id FROM t WHERE rand() > 0.5"))
        .contains("non-deterministic function rand");
    assertNothingCreated("nd");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "SELECT * FROM t ORDER BY id|ORDER BY",
        "SELECT * FROM t LIMIT 1|LIMIT",
        "SELECT * FROM (SELECT * FROM t ORDER BY id LIMIT 1)|LIMIT",
        "SELECT * FROM (SELECT * FROM t ORDER BY id)|ORDER BY",
        "SELECT * FROM t SORT BY id|SORT BY"
      })
  void orderByAndLimitAreRefused(String query, String clause) {
    assertThat(errorOf("CREATE MATERIALIZED VIEW ordered AS " + query))
        .contains("Cannot create materialized view " + mv("ordered"))
        .contains(clause)
        .contains("is not allowed in a definition");
    assertNothingCreated("ordered");
  }

  /**
   * A first name part that is no catalog is a namespace, as in Spark: a name written for another
   * system's catalog (Glue's {@code glue_catalog}) says so, and which catalogs there are.
   */
  @Test
  void aViewInAnUnknownCatalogIsReportedWithTheCatalogsThereAre() {
    assertThat(errorOf("REFRESH MATERIALIZED VIEW glue_catalog." + ns + ".orders_mv"))
        .contains("Cannot refresh lake.glue_catalog." + ns + ".orders_mv: it does not exist")
        .contains("namespace glue_catalog." + ns + " does not exist in catalog lake")
        .contains("glue_catalog is not a catalog of this session, whose catalogs are ")
        .contains("lake");
    assertThat(errorOf("REFRESH MATERIALIZED VIEW " + ns + ".orders_mv"))
        .contains("it does not exist")
        .doesNotContain("namespace");
  }

  @Test
  void unknownTableIsRefusedNamingIt() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW m AS SELECT * FROM no_such_table"))
        .contains("Cannot create materialized view " + mv("m"))
        .contains(mv("no_such_table"))
        .contains("does not exist");
    assertNothingCreated("m");
  }

  @Test
  void unknownColumnIsRefusedNamingIt() {
    assertThat(errorOf("CREATE MATERIALIZED VIEW m AS SELECT id, no_such_column FROM t"))
        .contains("Cannot create materialized view " + mv("m"))
        .contains("no_such_column");
    assertNothingCreated("m");
  }

  @Test
  void plainViewAsSourceIsRefused() {
    sql("CREATE VIEW plain AS SELECT * FROM t");

    assertThat(errorOf("CREATE MATERIALIZED VIEW m AS SELECT * FROM plain"))
        .contains(mv("plain"))
        .contains("is a view");
    assertNothingCreated("m");
  }

  // ---- writes to a materialized view ----

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "INSERT INTO mv VALUES (9, 'z')|INSERT INTO",
        "INSERT OVERWRITE mv SELECT * FROM t|INSERT INTO",
        "UPDATE mv SET v = 'q' WHERE id = 1|UPDATE",
        "DELETE FROM mv WHERE id = 1|DELETE FROM",
        "MERGE INTO mv USING t ON mv.id = t.id WHEN MATCHED THEN DELETE|MERGE INTO"
      })
  void writesToAMaterializedViewAreRefused(String write, String verb) {
    sql("CREATE MATERIALIZED VIEW mv AS SELECT * FROM t");
    long snapshot = storageSnapshot("mv").snapshotId();

    assertThat(errorOf(write))
        .contains("Cannot " + verb + " " + mv("mv"))
        .contains("it is a materialized view");
    assertThat(storageSnapshot("mv").snapshotId()).isEqualTo(snapshot);
  }

  @Test
  void writesToAMaterializedViewByThreePartNameAreRefused() {
    sql("CREATE MATERIALIZED VIEW mv AS SELECT * FROM t");

    assertThat(errorOf("INSERT INTO lake." + ns + ".mv VALUES (9, 'z')")).contains("Cannot INSERT INTO " + mv("mv"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "INSERT INTO %s (id, v) VALUES (9, 'z')",
        "DELETE FROM %s WHERE id = 1",
        "UPDATE %s SET v = 'q' WHERE id = 1",
        "MERGE INTO %s s USING t ON s.id = t.id WHEN MATCHED THEN DELETE"
      })
  void writesToTheStorageOfAManagedViewAreRefused(String write) {
    sql("CREATE MANAGED MATERIALIZED VIEW mv AS SELECT * FROM t");
    long snapshot = storageSnapshot("mv").snapshotId();

    assertThat(errorOf(String.format(write, "lake." + ns + ".mv__storage")))
        .contains("mv__storage")
        .contains("MANAGED materialized view " + ns + ".mv");
    assertThat(storageSnapshot("mv").snapshotId()).isEqualTo(snapshot);
    assertSameRows("SELECT * FROM mv", "SELECT * FROM t", 2);
  }

  @Test
  void refreshOfAManagedViewStillWritesItsStorage() {
    sql("CREATE MANAGED MATERIALIZED VIEW mv AS SELECT * FROM t");
    sql("INSERT INTO t VALUES (3, 'c')");

    assertThat(sql("REFRESH MATERIALIZED VIEW mv").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM mv", "SELECT * FROM t", 3);
  }

  @Test
  void writesToTheStorageOfANonManagedViewAreAllowed() {
    sql("CREATE MATERIALIZED VIEW mv AS SELECT * FROM t");

    sql("INSERT INTO lake." + ns + ".mv__storage (id, v, __floe_count) VALUES (9, 'z', 1)");

    assertThat(count("SELECT * FROM lake." + ns + ".mv__storage")).isEqualTo(3);
    assertThat(count("SELECT * FROM mv")).isEqualTo(3);
  }

  // ---- drops ----

  @Test
  void dropTableOfASourceIsRefusedNamingTheView() {
    sql("CREATE MATERIALIZED VIEW mv AS SELECT * FROM t");

    assertThat(errorOf("DROP TABLE t"))
        .contains("Cannot drop table " + mv("t"))
        .contains("materialized view " + mv("mv") + " reads it")
        .contains("CASCADE");
    assertThat(tableExists("t")).isTrue();
    assertThat(viewExists("mv")).isTrue();
  }

  @Test
  void dropTableCascadeDropsTheDependentViewsToo() {
    sql("CREATE TABLE unrelated (id INT) USING iceberg");
    sql("CREATE MATERIALIZED VIEW silver AS SELECT * FROM t");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n FROM silver");
    sql("CREATE MATERIALIZED VIEW other AS SELECT * FROM unrelated");

    sql("DROP TABLE t CASCADE");

    assertThat(tableExists("t")).isFalse();
    assertNothingCreated("silver");
    assertNothingCreated("gold");
    assertThat(viewExists("other")).isTrue();
    assertThat(sql("SHOW MATERIALIZED VIEWS")).extracting(r -> r.getString(1)).containsExactly("other");
  }

  @Test
  void dropTableOfATableNoViewReadsWorks() {
    sql("CREATE TABLE lonely (id INT) USING iceberg");

    sql("DROP TABLE lonely");
    sql("DROP TABLE IF EXISTS lonely");

    assertThat(tableExists("lonely")).isFalse();
  }

  @Test
  void dropMaterializedViewThatAnotherReadsIsRefusedUnlessCascade() {
    sql("CREATE MATERIALIZED VIEW silver AS SELECT * FROM t");
    sql("CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n FROM silver");

    assertThat(errorOf("DROP MATERIALIZED VIEW silver"))
        .contains("Cannot drop materialized view " + mv("silver"))
        .contains(mv("gold") + " reads it")
        .contains("CASCADE");
    assertThat(viewExists("silver")).isTrue();
    assertThat(viewExists("gold")).isTrue();

    sql("DROP MATERIALIZED VIEW silver CASCADE");

    assertNothingCreated("silver");
    assertNothingCreated("gold");
    assertThat(tableExists("t")).isTrue();
  }

  @Test
  void droppingAStorageTableDirectlyIsRefused() {
    sql("CREATE MATERIALIZED VIEW mv AS SELECT * FROM t");

    assertThat(errorOf("DROP TABLE mv__storage"))
        .contains("Cannot drop table " + mv("mv__storage"))
        .contains("stores materialized view " + mv("mv"))
        .contains("DROP MATERIALIZED VIEW");
    assertThat(errorOf("DROP TABLE lake." + ns + ".mv__storage PURGE")).contains("stores materialized view");
    assertThat(tableExists("mv__storage")).isTrue();
    assertSameRows("SELECT * FROM mv", "SELECT * FROM t", 2);
  }
}
