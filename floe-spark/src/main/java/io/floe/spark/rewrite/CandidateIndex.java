package io.floe.spark.rewrite;

import io.floe.mv.RefreshState;
import io.floe.mv.SourceState;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.refresh.DefinitionColumns;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The materialized views that could answer parts of one query: those of the query's catalogs whose
 * last refresh read only tables the query reads. Built once per query; each definition is analyzed
 * at most once per view version and source schemas, across queries.
 */
final class CandidateIndex {
  private static final Logger LOG = LoggerFactory.getLogger(CandidateIndex.class);
  private static final int CACHED_DEFINITIONS = 256;
  private static final Map<String, QueryBlock.Result> DEFINITIONS =
      Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, QueryBlock.Result> eldest) {
              return size() > CACHED_DEFINITIONS;
            }
          });

  private final List<ViewCandidate> candidates;

  private CandidateIndex(List<ViewCandidate> candidates) {
    this.candidates = candidates;
  }

  /** Candidates among the MVs of {@code catalogs} that read only tables in {@code queryTables}. */
  static CandidateIndex load(SparkSession spark, Set<String> catalogs, Set<String> queryTables) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    List<ViewCandidate> found = new ArrayList<>();
    for (String catalogName : catalogs) {
      if (catalog.icebergCatalog(catalogName).isEmpty()) {
        continue;
      }
      for (MaterializedView mv : catalog.listAll(catalogName)) {
        Table storage;
        try {
          storage = mv.storageTable();
        } catch (RuntimeException e) {
          LOG.warn("Materialized view {} is not considered for query rewrite: {}", mv, e.getMessage());
          continue;
        }
        Optional<RefreshState> last = mv.refreshState(storage);
        Set<String> tables =
            last.map(
                    s ->
                        s.sourceStates().stream()
                            .filter(st -> st.type() == SourceState.Type.TABLE)
                            .map(SourceState::uuid)
                            .collect(Collectors.toCollection(TreeSet::new)))
                .orElse(new TreeSet<>());
        if (last.isPresent() && !queryTables.containsAll(tables)) {
          continue;
        }
        found.add(new ViewCandidate(mv, storage, last, tables, Optional.empty(), ""));
      }
    }
    return new CandidateIndex(found);
  }

  List<ViewCandidate> all() {
    return candidates;
  }

  /** The candidate with its definition analyzed into a block (cached). */
  static ViewCandidate analyzed(SparkSession spark, ViewCandidate candidate) {
    String key =
        candidate.mv().view().uuid()
            + ":"
            + candidate.mv().versionId()
            + ":"
            + candidate.lastRefresh()
                .map(s -> s.sourceStates().stream().map(st -> st.uuid() + "/" + st.schemaId().orElse(-1)).sorted().collect(Collectors.joining(",")))
                .orElse("");
    QueryBlock.Result result = DEFINITIONS.get(key);
    if (result == null) {
      result = RewriteSuppression.withoutRewrite(() -> analyze(spark, candidate.mv()));
      DEFINITIONS.put(key, result);
    }
    return new ViewCandidate(
        candidate.mv(), candidate.storage(), candidate.lastRefresh(), candidate.sourceTables(), result.block(), result.reason());
  }

  /**
   * Why {@code mv} cannot answer queries over its sources whatever its definition: its expectations
   * drop rows (ON VIOLATION DROP ROW), so its rows are fewer than its definition gives. Read from
   * the view's properties each time: a replacement that adds expectations may keep the version id.
   */
  static Optional<String> dropsRows(MaterializedView mv) {
    List<String> dropping =
        mv.expectations().stream()
            .filter(e -> e.onViolation() == io.floe.mv.OnViolation.DROP_ROW)
            .map(io.floe.sql.Expectation::name)
            .toList();
    return dropping.isEmpty()
        ? Optional.empty()
        : Optional.of("its expectations " + String.join(", ", dropping) + " drop rows (ON VIOLATION DROP ROW)");
  }

  /**
   * Why {@code mv} cannot answer queries: a column of it carries a collation, which its storage
   * table does not keep, and the rewrite reads the storage table as it is.
   */
  static Optional<String> keepsCollations(MaterializedView mv) {
    Map<String, org.apache.spark.sql.types.DataType> collated = mv.collatedColumns();
    return collated.isEmpty()
        ? Optional.empty()
        : Optional.of("its column" + (collated.size() == 1 ? " " : "s ") + String.join(", ", collated.keySet())
            + " carr" + (collated.size() == 1 ? "ies" : "y") + " a collation, which its storage table does not keep");
  }

  private static QueryBlock.Result analyze(SparkSession spark, MaterializedView mv) {
    try {
      SourcePinning pinning = new SourcePinning(spark);
      LogicalPlan parsed = pinning.parse(mv.query());
      LogicalPlan qualified =
          pinning.substitute(
              parsed,
              mv.defaultCatalog(),
              mv.defaultNamespace(),
              (parts, name) -> new UnresolvedRelation(Scala.seq(name.parts()), CaseInsensitiveStringMap.empty(), false));
      LogicalPlan analyzed = Dataset.ofRows(spark, qualified).queryExecution().analyzed();
      Optional<List<String>> asView = DefinitionColumns.projection(mv, List.of(analyzed.schema().fieldNames()));
      if (asView.isPresent()) {
        analyzed = Dataset.ofRows(spark, DefinitionColumns.select(qualified, asView.get())).queryExecution().analyzed();
      }
      QueryBlock.Result block = QueryBlock.of(analyzed);
      if (block.block().isPresent() && block.block().get().outputs().size() != mv.viewColumns().size()) {
        return new QueryBlock.Result(Optional.empty(), "its definition's columns do not match the view's");
      }
      return block;
    } catch (Exception e) { // Spark's AnalysisException is checked but undeclared
      LOG.warn("Cannot analyze the definition of {} for query rewrite", mv, e);
      return new QueryBlock.Result(Optional.empty(), "its definition cannot be analyzed: " + e.getMessage());
    }
  }
}
