package io.floe.spark.ingest;

import io.floe.FloeException;
import io.floe.spark.Plans;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.spark.refresh.SourcePinning;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A flow's query, parsed: the one table it reads with {@code STREAM(source)} (or {@code STREAM source}) and the
 * static tables it reads without, and the plans that read them.
 */
public final class StreamedQuery {
  /** Stream option (as in Spark Declarative Pipelines): ignore source commits that update or delete rows. */
  static final String SKIP_CHANGE_COMMITS_OPTION = "skipChangeCommits";

  private final SparkSession spark;
  private final String owner;
  private final StreamFlow flow;
  private final LogicalPlan parsed;
  private final MaterializedViewCatalog catalog;
  private final ResolvedName source;
  private final boolean skipChangeCommits;

  /** How a substitution reads one relation of the query. */
  @FunctionalInterface
  public interface Reads {
    /**
     * @param parts the name as the query wrote it
     * @param name the name resolved
     * @param streamed whether the query reads it with STREAM
     */
    LogicalPlan read(List<String> parts, ResolvedName name, boolean streamed);
  }

  private StreamedQuery(SparkSession spark, String owner, StreamFlow flow) {
    this.spark = spark;
    this.owner = owner;
    this.flow = flow;
    this.catalog = new MaterializedViewCatalog(spark);
    try {
      this.parsed = new SourcePinning(spark).parse(flow.query());
    } catch (FloeException e) {
      throw new FloeException(owner + ": " + e.getMessage(), e);
    }
    List<UnresolvedRelation> streams = new ArrayList<>();
    collectStreams(parsed, streams);
    if (streams.isEmpty()) {
      throw new FloeException(
          owner + ": its query reads no table with STREAM(name); a streaming table appends what its query computes "
              + "over the rows newly appended to one table, read as FROM STREAM(source)");
    }
    List<String> names = streams.stream().map(r -> String.join(".", Scala.list(r.multipartIdentifier()))).toList();
    if (streams.size() > 1) {
      throw new FloeException(
          owner + ": its query streams " + streams.size() + " tables (" + String.join(", ", names) + "); a flow "
              + "streams exactly one table: give each source its own CREATE FLOW into the same streaming table");
    }
    this.source = catalog.resolve(
        Scala.list(streams.get(0).multipartIdentifier()), flow.defaultCatalog(), flow.defaultNamespace());
    String option = streams.get(0).options().get(SKIP_CHANGE_COMMITS_OPTION);
    this.skipChangeCommits = option != null && Boolean.parseBoolean(option.trim());
  }

  /**
   * Parses {@code flow}'s query.
   *
   * @param owner how errors start, such as {@code Cannot create streaming table lake.db.silver}
   * @throws FloeException when the query does not parse or does not stream exactly one table
   */
  public static StreamedQuery of(SparkSession spark, String owner, StreamFlow flow) {
    return new StreamedQuery(spark, owner, flow);
  }

  public StreamFlow flow() {
    return flow;
  }

  public LogicalPlan parsed() {
    return parsed;
  }

  /** The table the query streams. */
  public ResolvedName source() {
    return source;
  }

  /** Whether the query's STREAM read carries the {@value #SKIP_CHANGE_COMMITS_OPTION} option. */
  boolean skipChangeCommits() {
    return skipChangeCommits;
  }

  /** The fully qualified names of the tables the query reads without STREAM. */
  public List<String> staticSources() {
    List<String> names = new ArrayList<>();
    substitute((parts, name, streamed) -> {
      if (!streamed && !names.contains(name.toString())) {
        names.add(name.toString());
      }
      return Plans.relation(parts);
    });
    return names;
  }

  /**
   * The query reading the streamed table's rows appended after snapshot {@code fromExclusive} up to
   * {@code toInclusive} (all of {@code toInclusive} when {@code fromExclusive} is null) and every static table
   * at its current snapshot (a materialized view: its storage table's).
   */
  LogicalPlan read(Long fromExclusive, long toInclusive) {
    SourcePinning pinning = new SourcePinning(spark);
    return substitute((parts, name, streamed) -> {
      if (!streamed) {
        return pinning.read(parts, pinning.pinSource(name));
      }
      if (fromExclusive == null) {
        return new RelationTimeTravel(
            Plans.relation(name.parts()),
            Scala.none(),
            Scala.some(Long.toString(toInclusive)));
      }
      // Iceberg's incremental append scan: the data files that append snapshots in the range added.
      CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(Map.of(
          "start-snapshot-id", Long.toString(fromExclusive),
          "end-snapshot-id", Long.toString(toInclusive)));
      return Plans.relation(name.parts(), options);
    });
  }

  /**
   * {@code read} analyzed on its own and replaced by an empty relation of its columns, under the name the query
   * used: checks of the query then see its own operators only, not those of the views it reads.
   */
  public static LogicalPlan asLeaf(SparkSession spark, List<String> parts, LogicalPlan read) {
    LogicalPlan analyzed = Dataset.ofRows(spark, read).queryExecution().analyzed();
    List<Attribute> output = new ArrayList<>();
    for (Attribute attribute : Scala.list(analyzed.output())) {
      output.add(attribute.newInstance());
    }
    return new SubqueryAlias(
        new AliasIdentifier(parts.get(parts.size() - 1), Scala.seq(parts.subList(0, parts.size() - 1))),
        LocalRelation$.MODULE$.apply(Scala.seq(output)));
  }

  /** The query with every table reference replaced by what {@code reads} returns, CTE references excepted. */
  public LogicalPlan substitute(Reads reads) {
    return new SourcePinning(spark)
        .substitute(
            parsed,
            flow.defaultCatalog(),
            flow.defaultNamespace(),
            (relation, parts, name) -> reads.read(parts, name, relation.isStreaming()));
  }

  private static void collectStreams(LogicalPlan plan, List<UnresolvedRelation> streams) {
    plan.foreachWithSubqueries(
        node -> {
          if (node instanceof UnresolvedWith with) {
            Scala.list(with.cteRelations()).forEach(cte -> collectStreams(cte._2(), streams));
          } else if (node instanceof UnresolvedRelation relation && relation.isStreaming()) {
            streams.add(relation);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  String owner() {
    return owner;
  }
}
