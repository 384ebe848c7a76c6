package io.floe.spark.rewrite;

import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.source.SparkTable;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers parts of a query from materialized views when {@value RewriteSettings#ENABLED} is on:
 * each select-project-join block, with or without a GROUP BY, that an MV's definition matches
 * exactly or subsumes is replaced by a read of the MV's storage table at the refresh whose source
 * snapshots are the ones the query reads, plus the filter and rollup that make the result equal.
 * Among several MVs the one whose storage snapshot holds the fewest bytes wins.
 *
 * <p>Runs at the end of analysis, so EXPLAIN shows the storage table scan. Never runs while Floe
 * computes a definition (see {@link RewriteSuppression}).
 */
public final class AnswerQueriesFromViews extends Rule<LogicalPlan> {
  private static final Logger LOG = LoggerFactory.getLogger(AnswerQueriesFromViews.class);

  private final SparkSession spark;

  public AnswerQueriesFromViews(org.apache.spark.sql.SparkSession spark) {
    this.spark = (SparkSession) spark;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (RewriteSuppression.suppressed() || !plan.resolved() || !RewriteSettings.enabled(spark)) {
      return plan;
    }
    Set<String> catalogs = new LinkedHashSet<>();
    Set<String> tables = new TreeSet<>();
    plan.foreach(
        node -> {
          if (node instanceof DataSourceV2Relation
              && ((DataSourceV2Relation) node).table() instanceof SparkTable
              && !QueryBlock.isMetadataTable((SparkTable) ((DataSourceV2Relation) node).table())) {
            DataSourceV2Relation relation = (DataSourceV2Relation) node;
            tables.add(((SparkTable) relation.table()).table().uuid().toString());
            if (relation.catalog().isDefined()) {
              catalogs.add(relation.catalog().get().name());
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    if (tables.isEmpty()) {
      return plan;
    }
    return RewriteSuppression.withoutRewrite(
        () -> {
          try {
            return new Attempt(catalogs, tables).rewrite(plan);
          } catch (RuntimeException e) {
            // Rewrite is an optimization: when it fails, the query still runs, computed from its tables.
            LOG.warn("Query rewrite failed; the query is computed from its tables", e);
            RewriteReport.begin(spark).failed(e.toString());
            return plan;
          }
        });
  }

  /** One query's rewrite: its candidates are loaded once, on the first block that needs them. */
  private final class Attempt {
    private final Set<String> catalogs;
    private final Set<String> tables;
    private final long tolerance;
    private final RewriteReport report;
    private CandidateIndex index;
    private final Map<String, ViewCandidate> analyzed = new HashMap<>();

    Attempt(Set<String> catalogs, Set<String> tables) {
      this.catalogs = catalogs;
      this.tables = tables;
      this.tolerance = RewriteSettings.stalenessToleranceMillis(spark);
      this.report = RewriteReport.begin(spark);
    }

    LogicalPlan rewrite(LogicalPlan node) {
      if (node instanceof Aggregate || node instanceof Distinct || node instanceof Project || node instanceof Filter
          || node instanceof Join) {
        QueryBlock.Result block = QueryBlock.of(node);
        if (block.block().isPresent() && !block.block().get().trivial()) {
          Optional<LogicalPlan> answer = answer(block.block().get());
          if (answer.isPresent()) {
            return answer.get();
          }
        }
      }
      List<LogicalPlan> children = Scala.list(node.children());
      List<LogicalPlan> rewritten = new ArrayList<>();
      boolean changed = false;
      for (LogicalPlan child : children) {
        LogicalPlan r = rewrite(child);
        changed |= r != child;
        rewritten.add(r);
      }
      return changed ? node.withNewChildren(Scala.seq(rewritten)) : node;
    }

    private Optional<LogicalPlan> answer(QueryBlock query) {
      if (index == null) {
        index = CandidateIndex.load(spark, catalogs, tables);
      }
      Map<String, Optional<Long>> reads = new HashMap<>();
      Map<String, Table> tables = new HashMap<>();
      Map<String, Integer> schemas = new HashMap<>();
      boolean current = true;
      for (QueryBlock.TableRead read : query.tables().values()) {
        Optional<Long> snapshot = snapshotRead(read);
        reads.put(read.uuid(), snapshot);
        schemas.put(read.uuid(), schemaRead(read));
        tables.put(read.uuid(), read.table().table());
        current &= snapshot.equals(currentSnapshot(read));
      }
      LogicalPlan best = null;
      long bestBytes = Long.MAX_VALUE;
      String bestName = null;
      String bestHow = null;
      for (ViewCandidate c : index.all()) {
        if (c.lastRefresh().isEmpty()) {
          continue;
        }
        if (!c.sourceTables().equals(query.tables().keySet())) {
          continue;
        }
        Optional<String> dropsRows = CandidateIndex.dropsRows(c.mv());
        if (dropsRows.isPresent()) {
          report.rejected(c.name(), dropsRows.get());
          continue;
        }
        Optional<String> collated = CandidateIndex.keepsCollations(c.mv());
        if (collated.isPresent()) {
          report.rejected(c.name(), collated.get());
          continue;
        }
        Map<String, String> differing = io.floe.spark.mv.DefinitionSettings.differing(spark, c.mv());
        if (!differing.isEmpty()) {
          // Its rows mean what its definition says under those settings, not under this session's.
          report.rejected(c.name(), "it was created under other SQL settings: "
              + io.floe.spark.mv.DefinitionSettings.describe(spark, differing));
          continue;
        }
        ViewCandidate candidate = analyzed.computeIfAbsent(c.name(), n -> CandidateIndex.analyzed(spark, c));
        if (candidate.definition().isEmpty()) {
          report.rejected(candidate.name(), candidate.reason());
          continue;
        }
        QueryBlock definition = candidate.definition().get();
        Optional<String> mismatch = ViewMatcher.precheck(query, definition);
        if (mismatch.isPresent()) {
          report.rejected(candidate.name(), mismatch.get());
          continue;
        }
        FreshnessMatch.Outcome fresh =
            FreshnessMatch.find(candidate.storage(), candidate.mv().versionId(), reads, schemas, tables, current, tolerance);
        if (fresh.snapshot().isEmpty()) {
          report.rejected(candidate.name(), fresh.note());
          continue;
        }
        Snapshot snapshot = fresh.snapshot().get();
        LogicalPlan read = storageRead(candidate, snapshot);
        Map<String, Attribute> columns = new HashMap<>();
        for (Attribute a : Scala.list(read.output())) {
          columns.put(a.name(), a);
        }
        ViewColumns view = new ViewColumns(definition, candidate.mv().layout(), candidate.mv().viewColumns(), columns);
        ViewMatcher.Outcome outcome = ViewMatcher.answer(query, view, read, spark.sessionState().conf().sessionLocalTimeZone());
        if (outcome.plan().isEmpty()) {
          report.rejected(candidate.name(), outcome.how());
          continue;
        }
        long bytes = bytes(snapshot);
        String how = outcome.how() + "; " + fresh.note() + "; storage snapshot " + snapshot.snapshotId() + ", " + bytes + " bytes";
        if (best != null) {
          if (bytes < bestBytes) {
            report.rejected(bestName, "reads more than " + candidate.name());
          } else {
            report.rejected(candidate.name(), "reads more than " + bestName);
            continue;
          }
        }
        best = outcome.plan().get();
        bestBytes = bytes;
        bestName = candidate.name();
        bestHow = how;
      }
      if (best == null) {
        return Optional.empty();
      }
      report.answeredBy(bestName, bestHow);
      LOG.info("Query block answered from {}: {}", bestName, bestHow);
      return Optional.of(best);
    }

    /** The snapshot the query reads of a table: its time travel target, else the current one. */
    private Optional<Long> snapshotRead(QueryBlock.TableRead read) {
      SparkTable table = read.table();
      if (read.snapshotId().isPresent()) {
        return read.snapshotId();
      }
      if (table.branch() != null) {
        Snapshot s = table.table().snapshot(table.branch());
        return Optional.ofNullable(s).map(Snapshot::snapshotId);
      }
      return currentSnapshot(read);
    }

    /**
     * The id of the schema the query reads a table in. Iceberg's Spark table reads a snapshot it
     * travelled to in that snapshot's schema and the current state in the table's current schema,
     * and keeps the schema it reads in a field without an accessor; when that field cannot be read,
     * the table's current schema stands in.
     */
    private int schemaRead(QueryBlock.TableRead read) {
      try {
        java.lang.reflect.Field field = SparkTable.class.getDeclaredField("schema");
        field.setAccessible(true);
        return ((org.apache.iceberg.Schema) field.get(read.table())).schemaId();
      } catch (ReflectiveOperationException | RuntimeException e) {
        return read.table().table().schema().schemaId();
      }
    }

    /** The table's current snapshot in the catalog now. */
    private Optional<Long> currentSnapshot(QueryBlock.TableRead read) {
      // A catalog with a table cache may hand out an old table object; the scan reads the latest.
      read.table().table().refresh();
      return Optional.ofNullable(read.table().table().currentSnapshot()).map(Snapshot::snapshotId);
    }

    private LogicalPlan storageRead(ViewCandidate candidate, Snapshot snapshot) {
      MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
      catalog.invalidateSparkCache(candidate.mv().storageName());
      String reference = candidate.mv().storageName().quoted() + " VERSION AS OF " + snapshot.snapshotId();
      String sql =
          candidate.mv().layout() == io.floe.spark.ivm.StorageLayout.ROWS
              ? candidate.mv().layout().readSql(reference, candidate.mv().readColumns())
              : "SELECT * FROM " + reference;
      LogicalPlan parsed = new SourcePinning(spark).parse(sql);
      return Dataset.ofRows(spark, parsed).queryExecution().analyzed();
    }

    private long bytes(Snapshot snapshot) {
      String size = snapshot.summary().get("total-files-size");
      return size == null ? Long.MAX_VALUE - 1 : Long.parseLong(size);
    }
  }
}
