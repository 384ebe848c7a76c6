package io.floe.spark.refresh;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.spark.Plans;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.iceberg.spark.source.SparkTable;
import scala.Option;
import scala.runtime.AbstractPartialFunction;

/**
 * Step 1 of the refresh protocol: reads a definition's source references, pins one snapshot per
 * source, and rewrites every reference into a read of that snapshot.
 */
public final class SourcePinning {
  private final SparkSession spark;
  private final MaterializedViewCatalog catalog;

  public SourcePinning(SparkSession spark) {
    this.spark = spark;
    this.catalog = new MaterializedViewCatalog(spark);
  }

  /** Parses {@code query}; names in it default to {@code defaultCatalog.defaultNamespace}. */
  public LogicalPlan parse(String query) {
    try {
      return spark.sessionState().sqlParser().parseQuery(query);
    } catch (Exception e) {
      throw new FloeException("Cannot parse the definition: " + ErrorMessages.firstLine(e.getMessage()), e);
    }
  }

  /** The fully qualified names of the relations {@code parsed} reads, CTE names excluded. */
  public List<ResolvedName> sourceNames(LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace) {
    Set<String> cteNames = new HashSet<>();
    List<List<String>> references = new ArrayList<>();
    collectReferences(parsed, cteNames, references, new ArrayList<>());
    return resolved(references, cteNames, defaultCatalog, defaultNamespace);
  }

  /**
   * The tables a definition reads at a snapshot it names itself ({@code t VERSION AS OF 123}), fully
   * qualified: they are not its sources (their changes never reach it, so nothing pins them), but
   * it depends on them all the same.
   */
  public List<ResolvedName> fixedReadNames(LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace) {
    Set<String> cteNames = new HashSet<>();
    List<RelationTimeTravel> fixed = new ArrayList<>();
    collectReferences(parsed, cteNames, new ArrayList<>(), fixed);
    List<List<String>> names = new ArrayList<>();
    fixed.forEach(read -> names.add(Scala.list(((UnresolvedRelation) read.relation()).multipartIdentifier())));
    return resolved(names, Set.of(), defaultCatalog, defaultNamespace);
  }

  /**
   * Refuses a definition that reads a table {@code VERSION AS OF} a snapshot id the table no longer
   * has (its snapshots were expired): Iceberg's own error names neither the table nor why. A read
   * {@code TIMESTAMP AS OF} is left to Spark.
   */
  private void checkFixedReads(LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace) {
    List<RelationTimeTravel> fixed = new ArrayList<>();
    // The same walk as for the sources, so that reads inside common table expressions count too.
    collectReferences(parsed, new HashSet<>(), new ArrayList<>(), fixed);
    for (RelationTimeTravel travel : fixed) {
      if (travel.version().isEmpty() || !travel.version().get().chars().allMatch(Character::isDigit)) {
        continue;
      }
      UnresolvedRelation read = (UnresolvedRelation) travel.relation();
      ResolvedName name = catalog.resolve(Scala.list(read.multipartIdentifier()), defaultCatalog, defaultNamespace);
      String version = travel.version().get();
      Table table;
      try {
        table = name.catalog().loadTable(name.identifier());
      } catch (NoSuchTableException e) {
        continue; // reported as a missing table when the definition is read
      }
      if (table.snapshot(Long.parseLong(version)) == null && !table.refs().containsKey(version)) {
        throw new FloeException("the definition reads " + name + " VERSION AS OF " + version + ", a snapshot "
            + name + " no longer has (its snapshots were expired), so it can no longer be computed;"
            + " recreate the view on a snapshot the table keeps (a tag keeps one: ALTER TABLE " + name
            + " CREATE TAG ... AS OF VERSION ...)");
      }
    }
  }

  private List<ResolvedName> resolved(
      List<List<String>> references, Set<String> cteNames, String defaultCatalog, List<String> defaultNamespace) {
    Map<String, ResolvedName> names = new LinkedHashMap<>();
    for (List<String> parts : references) {
      if (parts.size() == 1 && cteNames.contains(parts.get(0).toLowerCase(Locale.ROOT))) {
        continue;
      }
      ResolvedName name = catalog.resolve(parts, defaultCatalog, defaultNamespace);
      names.putIfAbsent(name.toString(), name);
    }
    return new ArrayList<>(names.values());
  }

  /**
   * How many times a definition without common table expressions names a table or view (a table
   * named twice counts twice); empty when it has common table expressions.
   */
  public static java.util.OptionalInt tableReferenceCount(LogicalPlan parsed) {
    Set<String> cteNames = new HashSet<>();
    List<List<String>> references = new ArrayList<>();
    collectReferences(parsed, cteNames, references, new ArrayList<>());
    return cteNames.isEmpty() ? java.util.OptionalInt.of(references.size()) : java.util.OptionalInt.empty();
  }

  /**
   * Collects relation references, those read at a snapshot the definition names ({@code fixed}; a
   * time-travel read is a leaf, so its relation is no child) and CTE names, inside CTE bodies too
   * (they are not children).
   */
  private static void collectReferences(
      LogicalPlan plan, Set<String> cteNames, List<List<String>> references, List<RelationTimeTravel> fixed) {
    plan.foreachWithSubqueries(
        node -> {
          if (node instanceof UnresolvedWith) {
            for (var cte : Scala.list(((UnresolvedWith) node).cteRelations())) {
              cteNames.add(cte._1().toLowerCase(Locale.ROOT));
              collectReferences(cte._2(), cteNames, references, fixed);
            }
          } else if (node instanceof UnresolvedRelation) {
            references.add(Scala.list(((UnresolvedRelation) node).multipartIdentifier()));
          } else if (node instanceof RelationTimeTravel travel && travel.relation() instanceof UnresolvedRelation) {
            fixed.add(travel);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
  }

  /** Pins the current snapshot of every source of {@code query}. */
  public PinnedDefinition pin(String query, String defaultCatalog, List<String> defaultNamespace) {
    return pin(parse(query), defaultCatalog, defaultNamespace);
  }

  /** Pins the current snapshot of every source of a parsed definition. */
  public PinnedDefinition pin(LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace) {
    return pin(parsed, defaultCatalog, defaultNamespace, Map.of());
  }

  /**
   * Pins every source of a parsed definition: a source in {@code prePinned} (by fully qualified
   * name) at the snapshot given there, any other at its current snapshot. A graph refresh pins its
   * sources once for every view it refreshes this way.
   */
  public PinnedDefinition pin(
      LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace, Map<String, Source> prePinned) {
    checkFixedReads(parsed, defaultCatalog, defaultNamespace);
    Map<String, Source> sources = new LinkedHashMap<>();
    for (ResolvedName name : sourceNames(parsed, defaultCatalog, defaultNamespace)) {
      Source given = prePinned.get(name.toString());
      sources.put(name.toString(), given != null ? given : pinSource(name));
    }
    LogicalPlan pinned =
        substitute(parsed, defaultCatalog, defaultNamespace, (parts, name) -> pinnedRead(parts, sources.get(name.toString())));
    return new PinnedDefinition(parsed, pinned, new ArrayList<>(sources.values()));
  }

  /** Rewrites {@code parsed} to read the sources already pinned in {@code pins}. */
  public LogicalPlan readPinned(
      LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace, List<Source> pins) {
    Map<String, Source> sources = new LinkedHashMap<>();
    pins.forEach(source -> sources.put(source.name().toString(), source));
    return substitute(
        parsed,
        defaultCatalog,
        defaultNamespace,
        (parts, name) -> {
          Source source = sources.get(name.toString());
          if (source == null) {
            throw new IllegalStateException("Source " + name + " was not pinned");
          }
          return pinnedRead(parts, source);
        });
  }

  /** Builds the plan that replaces one source reference. */
  @FunctionalInterface
  public interface Replacement {
    /**
     * @param referenceParts the name as the definition wrote it
     * @param name the name resolved
     */
    LogicalPlan replace(List<String> referenceParts, ResolvedName name);
  }

  /** Builds the plan that replaces one relation reference, seeing the reference itself. */
  @FunctionalInterface
  public interface RelationReplacement {
    /**
     * @param relation the reference as parsed ({@code STREAM(t)} is a streaming one)
     * @param referenceParts the name as the definition wrote it
     * @param name the name resolved
     */
    LogicalPlan replace(UnresolvedRelation relation, List<String> referenceParts, ResolvedName name);
  }

  /** Replaces every source reference of a parsed definition, CTE references excepted. */
  public LogicalPlan substitute(
      LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace, Replacement replacement) {
    return substitute(parsed, defaultCatalog, defaultNamespace, (relation, parts, name) -> replacement.replace(parts, name));
  }

  /**
   * Replaces every relation reference of a parsed query, CTE references excepted, in a fixed
   * order: CTE bodies and children before their parents, left before right.
   */
  public LogicalPlan substitute(
      LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace, RelationReplacement replacement) {
    Set<String> cteNames = new HashSet<>();
    collectReferences(parsed, cteNames, new ArrayList<>(), new ArrayList<>());
    return substituteReferences(parsed, cteNames, defaultCatalog, defaultNamespace, replacement);
  }

  private LogicalPlan substituteReferences(
      LogicalPlan parsed,
      Set<String> cteNames,
      String defaultCatalog,
      List<String> defaultNamespace,
      RelationReplacement replacement) {
    return parsed.transformUpWithSubqueries(
        new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
          @Override
          public boolean isDefinedAt(LogicalPlan node) {
            return node instanceof UnresolvedRelation || node instanceof UnresolvedWith;
          }

          @Override
          public LogicalPlan apply(LogicalPlan node) {
            if (node instanceof UnresolvedWith with) {
              List<scala.Tuple3<String, SubqueryAlias, scala.Option<Object>>> bodies = new ArrayList<>();
              for (var cte : Scala.list(with.cteRelations())) {
                LogicalPlan body =
                    substituteReferences(cte._2(), cteNames, defaultCatalog, defaultNamespace, replacement);
                bodies.add(new scala.Tuple3<>(cte._1(), (SubqueryAlias) body, cte._3()));
              }
              return new UnresolvedWith(with.child(), Scala.seq(bodies), with.allowRecursion());
            }
            UnresolvedRelation relation = (UnresolvedRelation) node;
            List<String> parts = Scala.list(relation.multipartIdentifier());
            if (parts.size() == 1 && cteNames.contains(parts.get(0).toLowerCase(Locale.ROOT))) {
              return node;
            }
            return replacement.replace(relation, parts, catalog.resolve(parts, defaultCatalog, defaultNamespace));
          }
        });
  }

  /**
   * A materialized view source pinned at a storage snapshot it has committed, such as the one an
   * upstream view of a graph refresh has just committed.
   */
  public Source pinMaterializedView(MaterializedView mv, Long storageSnapshotId) {
    Table storage = mv.storageTable();
    catalog.invalidateSparkCache(mv.storageName());
    Optional<Snapshot> snapshot = Optional.empty();
    if (storageSnapshotId != null) {
      snapshot = Optional.ofNullable(storage.snapshot(storageSnapshotId));
      if (snapshot.isEmpty()) {
        throw new FloeException(
            "Cannot pin materialized view " + mv + ": its storage snapshot " + storageSnapshotId + " is gone");
      }
    }
    return new Source(mv.name(), Optional.of(mv), storage, snapshot);
  }

  /** The source named {@code name} at its current snapshot. */
  public Source pinSource(ResolvedName name) {
    Optional<MaterializedView> mv = catalog.load(name);
    if (mv.isPresent()) {
      Table storage = mv.get().storageTable();
      catalog.invalidateSparkCache(mv.get().storageName());
      return new Source(name, mv, storage, Optional.ofNullable(storage.currentSnapshot()));
    }
    Table table;
    try {
      table = name.catalog().loadTable(name.identifier());
    } catch (NoSuchTableException e) {
      if (name.catalog() instanceof ViewCatalog && ((ViewCatalog) name.catalog()).viewExists(name.identifier())) {
        throw new FloeException(
            "Source "
                + name
                + " is a view; a materialized view can read tables and other materialized views only",
            e);
      }
      if (spark.sessionState().catalog().getTempView(name.name()).isDefined()) {
        throw new FloeException(
            "Source " + name.name() + " is a temporary view of this session; a materialized view reads tables and"
                + " materialized views of a catalog, which outlive the session (create a table or a materialized view"
                + " from it)",
            e);
      }
      throw new FloeException("Source " + name + " does not exist", e);
    }
    catalog.invalidateSparkCache(name);
    return new Source(name, Optional.empty(), table, Optional.ofNullable(table.currentSnapshot()));
  }

  /** A read of {@code source} at its snapshot (the current state when it has none). */
  public LogicalPlan read(List<String> referenceParts, Source source) {
    return pinnedRead(referenceParts, source);
  }

  /** A read of the source at its pinned snapshot, under the name the definition used. */
  private LogicalPlan pinnedRead(List<String> referenceParts, Source source) {
    if (source.materializedView().isPresent()) {
      return materializedViewRead(
          source.name().parts(), source.materializedView().get(), source.snapshot().map(s -> s.snapshotId()));
    }
    if (source.schemaChangedAfterSnapshot()) {
      return inCurrentSchema(source);
    }
    LogicalPlan read =
        Plans.relation(source.name().parts());
    if (source.snapshot().isPresent()) {
      read =
          new RelationTimeTravel(
              read, Scala.none(), Scala.some(Long.toString(source.snapshot().get().snapshotId())));
    }
    return read;
  }

  /**
   * A read of a table at its pinned snapshot in the table's current schema, as a query reads the
   * table today: Iceberg reads a snapshot by id in the schema it was written with, which after a
   * column was renamed (and nothing written since) would give the old column its old name. The read
   * goes through a frozen copy of the table's metadata whose main branch is the pinned snapshot.
   */
  private LogicalPlan inCurrentSchema(Source source) {
    Table table = source.table();
    if (!(table instanceof HasTableOperations)) {
      throw new FloeException(
          "Cannot read " + source.name() + " at snapshot " + source.snapshot().get().snapshotId()
              + " in its current schema: its metadata is not accessible");
    }
    TableOperations operations = ((HasTableOperations) table).operations();
    TableMetadata current = operations.current();
    long pinned = source.snapshot().get().snapshotId();
    TableMetadata frozen =
        current.currentSnapshot() != null && current.currentSnapshot().snapshotId() == pinned
            ? current
            : TableMetadata.buildFrom(current)
                .setBranchSnapshot(pinned, SnapshotRef.MAIN_BRANCH)
                .build();
    Table frozenTable =
        new BaseTable(
            new StaticTableOperations(frozen, table.io(), operations.locationProvider()), table.name());
    DataSourceV2Relation relation =
        DataSourceV2Relation.create(
            new SparkTable(frozenTable),
            Option.empty(),
            Option.empty());
    List<String> parts = source.name().parts();
    return new SubqueryAlias(
        new AliasIdentifier(parts.get(parts.size() - 1), Scala.seq(parts.subList(0, parts.size() - 1))), relation);
  }

  /**
   * A read of an MV's rows from its storage table, at a snapshot or the current one, under the
   * name {@code alias}: the view's columns only, duplicates restored where the layout counts them.
   */
  public LogicalPlan materializedViewRead(List<String> alias, MaterializedView mv, Optional<Long> snapshotId) {
    if (!mv.storageName().catalog().tableExists(mv.storageName().identifier())) {
      mv.storageTable(); // throws, naming the view and the storage table it lost
    }
    String reference =
        mv.storageName().quoted() + snapshotId.map(id -> " VERSION AS OF " + id).orElse("");
    LogicalPlan read;
    try {
      read = spark.sessionState().sqlParser().parseQuery(mv.layout().readSql(reference, mv.readColumns()));
    } catch (Exception e) {
      throw new FloeException("Cannot read materialized view " + mv + ": " + ErrorMessages.firstLine(e.getMessage()), e);
    }
    return new SubqueryAlias(
        new AliasIdentifier(alias.get(alias.size() - 1), Scala.seq(alias.subList(0, alias.size() - 1))), read);
  }
}
