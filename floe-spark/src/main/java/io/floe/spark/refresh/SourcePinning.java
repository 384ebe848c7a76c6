package io.floe.spark.refresh;

import io.floe.FloeException;
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
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.spark.sql.catalyst.AliasIdentifier;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.types.StructField;
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
      throw new FloeException("Cannot parse the definition: " + firstLine(e.getMessage()), e);
    }
  }

  /** The fully qualified names of the relations {@code parsed} reads, CTE names excluded. */
  public List<ResolvedName> sourceNames(LogicalPlan parsed, String defaultCatalog, List<String> defaultNamespace) {
    Set<String> cteNames = new HashSet<>();
    List<List<String>> references = new ArrayList<>();
    parsed.foreachWithSubqueries(
        node -> {
          if (node instanceof UnresolvedWith) {
            Scala.list(((UnresolvedWith) node).cteRelations())
                .forEach(cte -> cteNames.add(cte._1().toLowerCase(Locale.ROOT)));
          } else if (node instanceof UnresolvedRelation) {
            references.add(Scala.list(((UnresolvedRelation) node).multipartIdentifier()));
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
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

  /** Pins the current snapshot of every source of {@code query}. */
  public PinnedDefinition pin(String query, String defaultCatalog, List<String> defaultNamespace) {
    LogicalPlan parsed = parse(query);
    Map<String, Source> sources = new LinkedHashMap<>();
    for (ResolvedName name : sourceNames(parsed, defaultCatalog, defaultNamespace)) {
      sources.put(name.toString(), pinSource(name));
    }
    Set<String> cteNames = new HashSet<>();
    parsed.foreachWithSubqueries(
        node -> {
          if (node instanceof UnresolvedWith) {
            Scala.list(((UnresolvedWith) node).cteRelations())
                .forEach(cte -> cteNames.add(cte._1().toLowerCase(Locale.ROOT)));
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    LogicalPlan pinned =
        parsed.transformUpWithSubqueries(
            new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
              @Override
              public boolean isDefinedAt(LogicalPlan node) {
                return node instanceof UnresolvedRelation;
              }

              @Override
              public LogicalPlan apply(LogicalPlan node) {
                List<String> parts = Scala.list(((UnresolvedRelation) node).multipartIdentifier());
                if (parts.size() == 1 && cteNames.contains(parts.get(0).toLowerCase(Locale.ROOT))) {
                  return node;
                }
                ResolvedName name = catalog.resolve(parts, defaultCatalog, defaultNamespace);
                return pinnedRead(parts, sources.get(name.toString()));
              }
            });
    return new PinnedDefinition(parsed, pinned, new ArrayList<>(sources.values()));
  }

  private Source pinSource(ResolvedName name) {
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
      throw new FloeException("Source " + name + " does not exist", e);
    }
    catalog.invalidateSparkCache(name);
    return new Source(name, Optional.empty(), table, Optional.ofNullable(table.currentSnapshot()));
  }

  /** A read of the source at its pinned snapshot, under the name the definition used. */
  private static LogicalPlan pinnedRead(List<String> referenceParts, Source source) {
    ResolvedName tableName =
        source.materializedView().map(MaterializedView::storageName).orElse(source.name());
    LogicalPlan read =
        new UnresolvedRelation(Scala.seq(tableName.parts()), CaseInsensitiveStringMap.empty(), false);
    if (source.snapshot().isPresent()) {
      read =
          new RelationTimeTravel(
              read, Scala.none(), Scala.some(Long.toString(source.snapshot().get().snapshotId())));
    }
    if (source.materializedView().isEmpty()) {
      return read;
    }
    // An MV source exposes the view's columns only, whatever else its storage table keeps.
    List<NamedExpression> columns = new ArrayList<>();
    for (StructField field : org.apache.iceberg.spark.SparkSchemaUtil.convert(
        source.materializedView().get().view().schema()).fields()) {
      columns.add(UnresolvedAttribute.quoted(field.name()));
    }
    List<String> alias = source.name().parts();
    return new SubqueryAlias(
        new AliasIdentifier(alias.get(alias.size() - 1), Scala.seq(alias.subList(0, alias.size() - 1))),
        new Project(Scala.seq(columns), read));
  }

  static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
