package io.floe.spark.oracle;

import io.floe.mv.RefreshState;
import io.floe.mv.RefreshStateParser;
import io.floe.mv.SourceState;
import io.floe.spark.EmbeddedLakehouse;
import io.floe.spark.SharedSpark;
import io.floe.spark.ivm.AggregateDelta;
import io.floe.spark.refresh.RefreshExecutor;
import io.floe.spark.refresh.StorageCompaction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Differential test oracle of incremental refresh: random materialized view definitions over
 * random Iceberg source tables, random changes to the sources, and after every refresh a
 * comparison of the view with a full recomputation of its definition at the source snapshots its
 * refresh state records.
 *
 * <p>Each seed creates two source tables ({@code id INT, k1 STRING, k2 INT, v DECIMAL(10,2), d
 * DOUBLE, s STRING, ts TIMESTAMP}), each in format v2 copy-on-write, v2 merge-on-read or v3
 * merge-on-read, now and then partitioned, and four views: a linear one (filters, projections,
 * CAST, CASE, arithmetic, string and date functions, generators), an aggregate one (GROUP BY one
 * or two keys or key expressions, COUNT, SUM, AVG, MIN, MAX, COUNT(DISTINCT), a WHERE) and two
 * rotating ones (two of: inner join, UNION ALL of two tables (now and then through a common table
 * expression) or of one table twice, DISTINCT, INTERSECT or EXCEPT (ALL or not) of two tables or
 * of one table twice, window functions with or without PARTITION BY, HAVING (now and then over a common
 * table expression), LEFT/RIGHT/FULL outer join
 * with or without an equi-join key (now and then under a GROUP BY of it, or of other columns, or a window partitioned by it), global aggregate, IN, EXISTS or NOT EXISTS subquery or LEFT
 * SEMI/ANTI JOIN on a selected key (of the other table or of the same one), NOT IN of one value
 * or of two, or a scalar subquery, and GROUP BY, outer joins, HAVING, windows, IN, EXISTS and semi joins whose key the
 * view does not select (kept in
 * hidden storage columns);
 * consecutive seeds take them in turn), and an MV over an MV: a linear or aggregate view reading an
 * upstream MV of every column of a source (filtered now and then), whose change it reads from the
 * upstream's change feed or storage files; the upstream's storage is compacted now and then; and
 * an MV of every row of the aggregate one (whose COUNT(DISTINCT) value maps it must not read). Storage tables are now and then partitioned or merge-on-read;
 * odd seeds spread the stored COUNT(DISTINCT) values over the cores before each merge, as large views do. Each step runs one to three
 * random INSERTs (exact duplicates included), UPDATEs, DELETEs (whole groups now and then), MERGEs
 * or compactions, then refreshes most views, some of them twice in a row.
 *
 * <p>After every refresh the oracle asserts that:
 *
 * <ul>
 *   <li>the refresh type is NO_CHANGE when none of the view's sources moved since its last
 *       refresh, otherwise INCREMENTAL for the shapes Floe maintains incrementally (linear,
 *       aggregate, inner join, UNION ALL of distinct tables, DISTINCT, INTERSECT, EXCEPT, windows with
 *       PARTITION BY, HAVING, outer joins on an equi-join key, IN and EXISTS
 *       subqueries and semi and anti joins, selected keys or hidden ones, NOT IN of one value)
 *       and FULL, with a reason, for the others, and for a NOT IN whose subquery, read by the
 *       oracle at both snapshots, emptied or got its first row, or got its first NULL or lost its
 *       last (the reason naming the NOT IN subquery);
 *   <li>the storage table's current snapshot is the one the refresh returned (for NO_CHANGE: the
 *       one already verified), and its {@code refresh-state} records exactly the view's sources at
 *       their current snapshots;
 *   <li>the view equals its definition recomputed with every source read {@code VERSION AS OF}
 *       the recorded snapshot (an upstream MV: its definition at the source snapshots recorded by
 *       the refresh that wrote the recorded storage snapshot): {@code EXCEPT ALL} empty both ways, checked in one pass as a
 *       per-row count difference; DOUBLE columns rounded to 6 decimals on both sides, since
 *       incremental sums add in another order; DECIMALs exact. A NO_CHANGE refresh commits
 *       nothing, so its rows are the ones compared after the previous refresh.
 * </ul>
 *
 * <p>A failing seed's assertion message carries a replay script: every statement the seed ran, in
 * order, then the failed check as {@code EXCEPT ALL} queries, ready for {@code bin/floe sql -f}. At
 * the end of the run the number of INCREMENTAL, FULL and NO_CHANGE refreshes per shape is printed
 * to standard output (with Maven, in {@code
 * floe-spark/target/surefire-reports/io.floe.spark.oracle.DifferentialOracleTest-output.txt}).
 *
 * <p>System properties (pass them to Maven with {@code -D...}):
 *
 * <ul>
 *   <li>{@code floe.oracle.seeds} (default 4): how many seeds;
 *   <li>{@code floe.oracle.steps} (default 4): steps per seed;
 *   <li>{@code floe.oracle.firstSeed} (default 1): the first seed, so runs can cover other seeds;
 *   <li>{@code floe.oracle.seed}: run this one seed only, to replay a failure;
 *   <li>{@code floe.oracle.kind}: draw only this kind of {@link DefinitionGenerator#rotatingShape}
 *       beside the linear and aggregate ones (8: outer joins), to focus a run on one shape.
 * </ul>
 *
 * <p>The defaults take under three minutes on two cores, most of it Spark warming up. A long run,
 * about four seconds per step once warm: {@code mvn -o -pl floe-spark test
 * -Dtest='io.floe.spark.oracle.*Test' -Dfloe.oracle.seeds=30 -Dfloe.oracle.steps=20}.
 */
public class DifferentialOracleTest {
  private static final int DEFAULT_SEEDS = 4;
  private static final int DEFAULT_STEPS = 4;
  /** {@code floe.oracle.kind}: the one rotating shape kind every seed draws, to focus a run. */
  private static final Integer ONLY_KIND = Integer.getInteger("floe.oracle.kind");
  private static final RefreshTally TALLY = new RefreshTally();
  private static Catalog icebergCatalog;

  @TestFactory
  Stream<DynamicTest> everyRefreshMatchesFullRecomputationAtThePinnedSnapshots() {
    int steps = Integer.getInteger("floe.oracle.steps", DEFAULT_STEPS);
    Long only = Long.getLong("floe.oracle.seed");
    LongStream seeds =
        only != null
            ? LongStream.of(only)
            : LongStream.range(0, Integer.getInteger("floe.oracle.seeds", DEFAULT_SEEDS))
                .map(i -> i + Long.getLong("floe.oracle.firstSeed", 1L));
    return seeds.mapToObj(
        seed -> DynamicTest.dynamicTest("seed " + seed, () -> new SeedRun(seed).playOrFailWithReplayScript(steps)));
  }

  @AfterAll
  static void printRefreshTypesPerShape() {
    long cpuMs =
        ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime() / 1_000_000;
    System.out.println(TALLY.report() + "test JVM CPU time: " + cpuMs + " ms");
  }

  /** The lake catalog as a plain Iceberg catalog, to read storage snapshots and source states. */
  static synchronized Catalog iceberg() {
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

  /** A materialized view of a seed, with the source snapshots of its last refresh. */
  private static final class OracleView {
    final String name;
    final OracleDefinition definition;
    /** The MV its definition reads in place of its source table, or null. */
    final OracleView upstream;
    Map<String, Long> recordedSnapshots = Map.of();
    List<String> comparedColumns = List.of();
    List<String> comparedNames = List.of();
    Long verifiedStorageSnapshot;

    OracleView(String name, OracleDefinition definition) {
      this(name, definition, null);
    }

    OracleView(String name, OracleDefinition definition, OracleView upstream) {
      this.name = name;
      this.definition = definition;
      this.upstream = upstream;
    }
  }

  /** One seed: its sources, views, operations and the script of everything it ran. */
  static final class SeedRun {
    private final long seed;
    private final Random random;
    private final SparkSession spark = SharedSpark.session();
    private final SourceWorkload workload;
    private final DefinitionGenerator definitions;
    private final ReplayScript script;
    private final List<OracleView> views = new ArrayList<>();
    private final List<String> failedCheck = new ArrayList<>();
    private String ns;
    private int operations;

    SeedRun(long seed) {
      this.seed = seed;
      this.random = new Random(seed);
      this.workload = new SourceWorkload(random);
      this.definitions = new DefinitionGenerator(random);
      this.script = new ReplayScript(seed);
    }

    void playOrFailWithReplayScript(int steps) {
      long start = System.currentTimeMillis();
      try {
        play(steps);
      } catch (Throwable failure) {
        failedCheck.forEach(script::statement);
        String message = failure instanceof AssertionError ? failure.getMessage() : failure.toString();
        throw new AssertionError(
            "seed " + seed + " failed: " + message
                + "\n\n-- Replay script (bin/floe sql -f), every statement of the seed in order:\n" + script.text(),
            failure);
      } finally {
        spark.conf().unset(RefreshExecutor.ROWS_PER_CLUSTERED_FILE);
        spark.conf().unset(AggregateDelta.SPREAD_STATE_BYTES);
      }
      TALLY.countSeed(steps, operations);
      System.out.printf("seed %d: %d steps in %d ms%n", seed, steps, System.currentTimeMillis() - start);
    }

    private void play(int steps) {
      ns = SharedSpark.freshNamespace("oracle_s" + seed);
      script.statement("CREATE NAMESPACE lake." + ns);
      // Storage files of a few rows each: the value bounds of every MERGE then decide which files
      // it reads, so a wrong bound shows up as a wrong view.
      execute("SET " + RefreshExecutor.ROWS_PER_CLUSTERED_FILE + "=4");
      if (seed % 2 == 1) {
        // The stored COUNT(DISTINCT) values of the touched groups spread over the cores before each
        // merge, as in a view whose storage holds 16 MB or more; even seeds merge them in one task.
        execute("SET " + AggregateDelta.SPREAD_STATE_BYTES + "=0");
      }
      for (String table : List.of("t1", "t2")) {
        String format = workload.randomFormat();
        String partitioning = workload.randomPartitioning();
        script.comment(table + " is " + format + (partitioning.isEmpty() ? "" : ", partitioned by " + partitioning));
        execute(workload.createTable(q(table), format, partitioning));
        execute(workload.insert(q(table), 8 + random.nextInt(10)));
        if (random.nextBoolean()) {
          change(table);
        }
      }
      // Two of the full-refresh shapes per seed, in turn, so that consecutive seeds cover them all.
      List<OracleDefinition> chosen =
          List.of(
              definitions.linear(randomSource()),
              definitions.aggregate(randomSource()),
              definitions.rotatingShape(ONLY_KIND == null ? (int) (2 * seed) : ONLY_KIND),
              definitions.rotatingShape(ONLY_KIND == null ? (int) (2 * seed + 1) : ONLY_KIND));
      List<OracleView> created = new ArrayList<>();
      for (int i = 0; i < chosen.size(); i++) {
        OracleDefinition definition = chosen.get(i);
        created.add(new OracleView("mv" + (i + 1) + "_" + definition.shape().name().toLowerCase(), definition));
      }
      // An MV over an MV: a linear or aggregate definition reading an upstream MV of every column.
      String nestedSource = randomSource();
      OracleView upstream = new OracleView("mv5_upstream", definitions.upstream(nestedSource));
      OracleDefinition nested = random.nextBoolean() ? definitions.linear(nestedSource) : definitions.aggregate(nestedSource);
      created.add(upstream);
      created.add(new OracleView("mv6_" + nested.shape().name().toLowerCase() + "_over_mv5", nested, upstream));
      // An MV over the aggregate MV: its rows, one per group, without the aggregate's hidden state.
      OracleView aggregate = created.get(1);
      String aggregated = aggregate.definition.sources().get(0);
      created.add(
          new OracleView(
              "mv7_linear_over_mv2",
              new OracleDefinition(OracleShape.LINEAR, "SELECT * FROM {" + aggregated + "}", List.of(aggregated)),
              aggregate));
      for (OracleView view : created) {
        OracleDefinition definition = view.definition;
        views.add(view);
        execute("CREATE MATERIALIZED VIEW " + q(view.name) + storageClauses(definition) + " AS " + definition.sql(t -> reference(view, t)));
        view.comparedColumns = comparedColumns(view);
        view.comparedNames =
            Arrays.stream(spark.table(q(view.name)).schema().names())
                .map(n -> "`" + n.replace("`", "``") + "`")
                .collect(Collectors.toList());
        verifyContents(view, null, "after CREATE");
      }
      for (int step = 1; step <= steps; step++) {
        int changes = 1 + random.nextInt(3);
        for (int i = 0; i < changes; i++) {
          change(randomSource());
        }
        if (random.nextInt(5) == 0) {
          compactUpstreamStorage(upstream);
        }
        List<OracleView> order = new ArrayList<>(views);
        Collections.shuffle(order, random);
        boolean refreshedAny = false;
        for (int i = 0; i < order.size(); i++) {
          OracleView view = order.get(i);
          boolean last = i == order.size() - 1;
          if (random.nextInt(4) == 0 && !(last && !refreshedAny)) {
            continue;
          }
          refreshedAny = true;
          refreshAndVerify(view, "step " + step);
          if (random.nextInt(6) == 0) {
            refreshAndVerify(view, "step " + step + ", refreshed again");
          }
        }
      }
    }

    /**
     * Compacts the upstream MV's storage, between the refreshes its reader sees. The rows stay the
     * ones verified last, now at the compaction's snapshot.
     */
    private void compactUpstreamStorage(OracleView upstream) {
      TableIdentifier storage = TableIdentifier.of(ns, upstream.name + "__storage");
      long before = iceberg().loadTable(storage).currentSnapshot().snapshotId();
      execute("CALL lake.system.rewrite_data_files(table => 'lake." + ns + "." + upstream.name + "__storage',"
          + " options => map('rewrite-all', 'true'))");
      if (Objects.equals(upstream.verifiedStorageSnapshot, before)) {
        upstream.verifiedStorageSnapshot = iceberg().loadTable(storage).currentSnapshot().snapshotId();
      }
    }

    /** Now and then a partitioned storage table, or one in another format (merge-on-read included). */
    private String storageClauses(OracleDefinition definition) {
      String clauses = "";
      if (definition.partitionColumn() != null && random.nextInt(4) == 0) {
        clauses += " PARTITIONED BY (" + definition.partitionColumn() + ")";
      }
      List<String> properties = new ArrayList<>();
      if (random.nextInt(3) == 0) {
        properties.add(SourceWorkload.FORMATS.get(workload.randomFormat()));
      }
      // Now and then a storage compacted automatically after every few refreshes.
      if (random.nextInt(3) == 0) {
        properties.add("'" + StorageCompaction.SMALL_FILES + "' = '3', '" + StorageCompaction.DELETE_FILES + "' = '3'");
      }
      return properties.isEmpty() ? clauses : clauses + " TBLPROPERTIES (" + String.join(", ", properties) + ")";
    }

    private void change(String table) {
      operations++;
      execute(workload.randomChange(q(table), "lake." + ns + "." + table));
    }

    private String randomSource() {
      return random.nextBoolean() ? "t1" : "t2";
    }

    private String q(String name) {
      return "lake." + ns + "." + name;
    }

    private void execute(String sql) {
      script.statement(sql);
      spark.sql(sql).collectAsList();
    }

    /**
     * The type a refresh over moved sources must have: the shape's, but FULL for a NOT IN whose
     * subquery was empty at one end and not at the other, or held a NULL at one end only.
     */
    private String expectedChangeType(OracleView view, Map<String, Long> current) {
      if (!view.definition.shape().incremental()) {
        return "FULL";
      }
      String subquery = view.definition.notInSubquery();
      if (subquery == null) {
        return "INCREMENTAL";
      }
      return notInState(subquery, view.recordedSnapshots).equals(notInState(subquery, current)) ? "INCREMENTAL" : "FULL";
    }

    /** Whether the NOT IN subquery has rows, and whether it holds a NULL, at {@code snapshots}. */
    private List<Boolean> notInState(String subquery, Map<String, Long> snapshots) {
      String sql = subquery;
      for (String table : List.of("t1", "t2")) {
        Long snapshot = snapshots.get(table);
        sql = sql.replace("{" + table + "}",
            snapshot == null ? "(SELECT * FROM " + q(table) + " WHERE false) " + table : q(table) + " VERSION AS OF " + snapshot);
      }
      Row row = spark.sql("SELECT count(*) > 0, count_if(value IS NULL) > 0 FROM (" + sql + ") AS s(value)").first();
      return List.of(row.getBoolean(0), row.getBoolean(1));
    }

    /** What a view's definition reads for source {@code table}: the table, or its upstream MV. */
    private String reference(OracleView view, String table) {
      return view.upstream == null ? q(table) : q(view.upstream.name);
    }

    /** The current snapshots of what the view reads: its source tables, or its upstream's storage. */
    private Map<String, Long> sourceSnapshots(OracleView view) {
      return currentSnapshots(view.upstream == null ? view.definition.sources() : List.of(view.upstream.name + "__storage"));
    }

    private void refreshAndVerify(OracleView view, String when) {
      Map<String, Long> before = sourceSnapshots(view);
      boolean sourcesMoved = !before.equals(view.recordedSnapshots);
      String expectedType = !sourcesMoved ? "NO_CHANGE" : expectedChangeType(view, before);
      // EXPLAIN REFRESH, run just before, must predict the type (the sources are below the size
      // checks' floor, so its prediction carries no condition).
      String explain = "EXPLAIN REFRESH MATERIALIZED VIEW " + q(view.name);
      script.statement(explain);
      String strategy =
          spark.sql(explain).collectAsList().stream()
              .filter(r -> r.getString(0).equals("strategy"))
              .map(r -> r.getString(1))
              .findFirst()
              .orElse("(no strategy line)");
      String refresh = "REFRESH MATERIALIZED VIEW " + q(view.name);
      script.statement(refresh);
      Row result = spark.sql(refresh).collectAsList().get(0);
      String type = result.getString(1);
      String reason = result.getString(2);
      TALLY.countRefresh(view.definition.shape(), type);
      script.comment("oracle: " + view.name + " refreshed " + type + " (" + reason + "), expected " + expectedType);
      String context = describe(view, when) + "\nrefresh result: " + result;
      check(
          expectedType.equals(type),
          "refresh type of %s should be %s (sources %s, recorded %s), was %s: %s",
          context, expectedType, before, view.recordedSnapshots, type, reason);
      check(
          strategy.startsWith(type + ":"),
          "EXPLAIN REFRESH of %s just before the refresh should have predicted %s, said: %s",
          context, type, strategy);
      if (type.equals("NO_CHANGE")) {
        check(
            Objects.equals(result.isNullAt(8) ? null : result.getLong(8), view.verifiedStorageSnapshot),
            "a NO_CHANGE refresh of %s should commit nothing and return the storage snapshot %s",
            context, view.verifiedStorageSnapshot);
      }
      if (type.equals("FULL")) {
        check(reason != null && !reason.isBlank(), "a FULL refresh of %s should give a reason", context);
        check(view.definition.notInSubquery() == null || reason.contains("NOT IN subquery"),
            "a FULL refresh of %s should name the NOT IN subquery whose state changed: %s", context, reason);
      }
      verifyContents(view, result.isNullAt(8) ? null : result.getLong(8), when);
    }

    /**
     * Checks the storage table's current snapshot and refresh state, then the rows against the
     * definition recomputed at the recorded snapshots.
     */
    private void verifyContents(OracleView view, Long refreshSnapshotId, String when) {
      String context = describe(view, when);
      Snapshot current = iceberg().loadTable(TableIdentifier.of(ns, view.name + "__storage")).currentSnapshot();
      check(current != null, "storage table of %s should have a snapshot", context);
      check(
          refreshSnapshotId == null
              || refreshSnapshotId == current.snapshotId()
              || refreshSnapshotId == compactedFrom(storageTable(view), current).snapshotId(),
          "storage snapshot of %s should be the one the refresh returned, %s, or an automatic compaction of it, but is %s",
          context, refreshSnapshotId, current.snapshotId());
      String stateJson = refreshStateAt(iceberg().loadTable(TableIdentifier.of(ns, view.name + "__storage")), current);
      check(stateJson != null, "storage snapshot of %s should carry a refresh-state: %s", context, current.summary());
      Map<String, Long> recorded = new TreeMap<>();
      for (SourceState source : RefreshStateParser.fromJson(stateJson).sourceStates()) {
        check(
            source.namespace().equals(List.of(ns))
                && (source.type() == SourceState.Type.TABLE || view.upstream != null && source.name().equals(view.upstream.name)),
            "refresh state of %s should record the tables (and the upstream MV) of namespace %s only, recorded %s",
            context, ns, source);
        if (source.type() == SourceState.Type.TABLE) {
          recorded.put(source.name(), source.snapshotId().orElse(null));
        }
      }
      Map<String, Long> now = sourceSnapshots(view);
      check(
          recorded.equals(now),
          "refresh state of %s should record the sources at their current snapshots %s, recorded %s",
          context, now, recorded);
      view.recordedSnapshots = recorded;
      if (Objects.equals(view.verifiedStorageSnapshot, current.snapshotId())) {
        // NO_CHANGE commits nothing: these are the very rows compared after the last refresh.
        return;
      }
      compareWithRecomputation(view, recorded, context);
      view.verifiedStorageSnapshot = current.snapshotId();
    }

    private void compareWithRecomputation(OracleView view, Map<String, Long> pinned, String context) {
      String columns = String.join(", ", view.comparedColumns);
      String actual = "SELECT " + columns + " FROM " + q(view.name);
      String recomputed =
          "SELECT " + columns + " FROM (" + view.definition.sql(t -> pinnedReference(view, pinned, t)) + ") AS recomputed";
      String extra = "(" + actual + ") EXCEPT ALL (" + recomputed + ")";
      String missing = "(" + recomputed + ") EXCEPT ALL (" + actual + ")";
      // One pass for both directions: A EXCEPT ALL B and B EXCEPT ALL A are both empty exactly
      // when every row has as many copies on each side (Spark plans EXCEPT ALL as these sums).
      String names = view.comparedNames.stream().collect(Collectors.joining(", "));
      String difference =
          "SELECT count(*) FROM (SELECT " + names + ", sum(side) AS surplus FROM ("
              + "SELECT *, 1 AS side FROM (" + actual + ") UNION ALL SELECT *, -1 AS side FROM (" + recomputed + ")"
              + ") GROUP BY " + names + " HAVING sum(side) <> 0)";
      long differing = spark.sql(difference).collectAsList().get(0).getLong(0);
      if (differing == 0) {
        return;
      }
      failedCheck.add("-- oracle: rows of " + view.name + " not in its definition at the pinned snapshots\n" + extra);
      failedCheck.add("-- oracle: rows of the definition at the pinned snapshots missing in " + view.name + "\n" + missing);
      throw new AssertionError(
          String.format(
              "%s differs from its definition recomputed at %s:%n  rows not in the definition: %s%n"
                  + "  rows of the definition missing: %s",
              context,
              pinned,
              sample(extra),
              sample(missing)));
    }

    /**
     * Source {@code table} of the view read at its pinned snapshot. For a view over an upstream
     * MV, the upstream's definition recomputed at the source snapshots recorded by the upstream
     * refresh that wrote the pinned storage snapshot (or, after a compaction, the last one before).
     */
    private String pinnedReference(OracleView view, Map<String, Long> pinned, String table) {
      if (view.upstream == null) {
        return q(table) + " VERSION AS OF " + pinned.get(table);
      }
      org.apache.iceberg.Table storage = iceberg().loadTable(TableIdentifier.of(ns, view.upstream.name + "__storage"));
      String state = refreshStateAt(storage, storage.snapshot(pinned.get(view.upstream.name + "__storage")));
      Map<String, Long> upstreamPinned = new TreeMap<>();
      for (SourceState source : RefreshStateParser.fromJson(state).sourceStates()) {
        upstreamPinned.put(source.name(), source.snapshotId().orElse(null));
      }
      return "(" + view.upstream.definition.sql(t -> q(t) + " VERSION AS OF " + upstreamPinned.get(t)) + ") AS upstream";
    }

    /**
     * The refresh state of a storage snapshot: its own, or under compactions of the storage (which
     * change no row), that of the refresh they descend from; null when there is none.
     */
    private org.apache.iceberg.Table storageTable(OracleView view) {
      return iceberg().loadTable(TableIdentifier.of(ns, view.name + "__storage"));
    }

    /** The snapshot beneath the automatic compactions ending in {@code snapshot}, or itself. */
    private static Snapshot compactedFrom(org.apache.iceberg.Table storage, Snapshot snapshot) {
      while (snapshot.summary().get(StorageCompaction.SUMMARY_PROPERTY) != null && snapshot.parentId() != null) {
        snapshot = storage.snapshot(snapshot.parentId());
      }
      return snapshot;
    }

    private static String refreshStateAt(org.apache.iceberg.Table storage, Snapshot snapshot) {
      while (snapshot != null && snapshot.summary().get(RefreshState.SUMMARY_KEY) == null
          && "replace".equals(snapshot.operation()) && snapshot.parentId() != null) {
        snapshot = storage.snapshot(snapshot.parentId());
      }
      return snapshot == null ? null : snapshot.summary().get(RefreshState.SUMMARY_KEY);
    }

    private List<String> sample(String query) {
      return spark.sql(query + " LIMIT 10").collectAsList().stream().map(Row::toString).collect(Collectors.toList());
    }

    /** The view's columns for comparison: DOUBLE and FLOAT rounded to 6 decimals, others as they are. */
    private List<String> comparedColumns(OracleView view) {
      List<String> columns = new ArrayList<>();
      for (StructField field : spark.table(q(view.name)).schema().fields()) {
        String name = "`" + field.name().replace("`", "``") + "`";
        boolean floating = field.dataType().equals(DataTypes.DoubleType) || field.dataType().equals(DataTypes.FloatType);
        columns.add(floating ? "ROUND(" + name + ", 6) AS " + name : name);
      }
      return columns;
    }

    private Map<String, Long> currentSnapshots(List<String> tables) {
      Map<String, Long> snapshots = new TreeMap<>();
      for (String table : new TreeSet<>(tables)) {
        Snapshot snapshot = iceberg().loadTable(TableIdentifier.of(ns, table)).currentSnapshot();
        snapshots.put(table, snapshot == null ? null : snapshot.snapshotId());
      }
      return snapshots;
    }

    private String describe(OracleView view, String when) {
      return "seed " + seed + ", " + when + ", " + view.name + " (" + view.definition.shape() + "): "
          + view.definition.sql(t -> reference(view, t));
    }

    private static void check(boolean condition, String format, Object... args) {
      if (!condition) {
        throw new AssertionError(String.format(format, args));
      }
    }
  }
}
