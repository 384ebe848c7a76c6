package io.floe.spark.mv;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/** A refresh that fails, while computing or before committing, leaves the previous state intact. */
class RefreshAtomicityTest extends MvTestSupport {
  private static final String QUERY = "SELECT id, CAST(code AS INT) AS code_num FROM codes";
  private String ansiBefore;

  @Override
  protected String prefix() {
    return "atomic";
  }

  @BeforeEach
  void codesAndView() {
    // The failing cast below relies on ANSI mode (Spark 4's default); pin it for this test.
    ansiBefore = spark.conf().get("spark.sql.ansi.enabled");
    spark.conf().set("spark.sql.ansi.enabled", "true");
    sql("CREATE TABLE codes (id INT, code STRING) USING iceberg");
    sql("INSERT INTO codes VALUES (1, '10'), (2, '20')");
    sql("CREATE MATERIALIZED VIEW numbers AS " + QUERY);
  }

  @AfterEach
  void restoreAnsi() {
    spark.conf().set("spark.sql.ansi.enabled", ansiBefore);
  }

  @Test
  void aRefreshFailingAtRuntimeLeavesTheStorageUnchangedAndNamesTheView() {
    long snapshot = storageSnapshot("numbers").snapshotId();
    long snapshots = storageSnapshotCount("numbers");
    sql("INSERT INTO codes VALUES (3, 'not a number')");

    String error = errorOf("REFRESH MATERIALIZED VIEW numbers");

    assertThat(error).contains("Cannot refresh lake." + ns + ".numbers").contains("not a number");
    assertThat(storageSnapshot("numbers").snapshotId()).isEqualTo(snapshot);
    assertThat(storageSnapshotCount("numbers")).isEqualTo(snapshots);
    assertThat(sql("SELECT * FROM numbers ORDER BY id"))
        .extracting(Object::toString)
        .containsExactly("[1,10]", "[2,20]");
    assertThat(freshness("numbers")).startsWith("STALE").contains(q("codes"));
  }

  @Test
  void afterTheBadRowIsFixedTheNextRefreshSucceeds() {
    sql("INSERT INTO codes VALUES (3, 'not a number')");
    errorOf("REFRESH MATERIALIZED VIEW numbers");

    sql("UPDATE codes SET code = '30' WHERE id = 3");

    assertThat(sql("REFRESH MATERIALIZED VIEW numbers").get(0).getString(1)).isEqualTo("INCREMENTAL");
    assertSameRows("SELECT * FROM numbers", QUERY, 3);
    assertThat(freshness("numbers")).isEqualTo("FRESH");
  }

  @Test
  void aCreateWhoseFirstRefreshFailsLeavesNothingHalfMade() {
    sql("INSERT INTO codes VALUES (3, 'not a number')");

    String error = errorOf("CREATE MATERIALIZED VIEW broken AS " + QUERY);

    assertThat(error).contains("lake." + ns + ".broken");
    assertThat(viewExists("broken")).as("view").isFalse();
    assertThat(tableExists("broken__storage")).as("storage").isFalse();
  }

  @Test
  @Disabled(
      "Bug: CREATE OR REPLACE purges the old storage table before creating the new one, so a storage"
          + " DDL failure (here an unknown PARTITIONED BY column) leaves the old view pointing to a"
          + " missing table; fixing it needs a staged storage table, not a minimal change")
  void aReplaceWhoseStorageTableCannotBeCreatedKeepsTheOldView() {
    long snapshot = storageSnapshot("numbers").snapshotId();

    assertThat(errorOf("CREATE OR REPLACE MATERIALIZED VIEW numbers PARTITIONED BY (nope) AS " + QUERY))
        .contains("lake." + ns + ".numbers")
        .contains("nope");

    assertThat(tableExists("numbers__storage")).isTrue();
    assertThat(storageSnapshot("numbers").snapshotId()).isEqualTo(snapshot);
    assertSameRows("SELECT * FROM numbers", QUERY, 2);
  }

  @Test
  void aFailedReplaceKeepsTheOldDefinitionAndData() {
    long snapshot = storageSnapshot("numbers").snapshotId();

    assertThat(errorOf("CREATE OR REPLACE MATERIALIZED VIEW numbers AS SELECT id, nope FROM codes"))
        .contains("lake." + ns + ".numbers");

    assertThat(describe("numbers")).containsEntry("View Text", QUERY);
    assertThat(storageSnapshot("numbers").snapshotId()).isEqualTo(snapshot);
    assertSameRows("SELECT * FROM numbers", QUERY, 2);
  }
}
