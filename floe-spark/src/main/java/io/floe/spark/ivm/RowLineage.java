package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.lit;

import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.refresh.Source;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.analysis.UnresolvedStar;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LeafNode;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;

/**
 * Storage rows keyed by the row lineage of their source row. A view that filters and projects one
 * Iceberg table of format 3 or later stores, beside each row, the id Iceberg gave the source row
 * it came from ({@value #COLUMN}, from the table's {@code _row_id}). Iceberg keeps that id through
 * updates, copy-on-write rewrites and compactions, so a refresh finds the stored row of a deleted
 * or updated source row by its id alone: the change is captured {@linkplain
 * io.floe.spark.capture.ChangeCapture#byRowLineage() by row lineage}, which reads a disappeared
 * row for its id, not for every column the view reads. Deletes spread over a large table then
 * cost a scan of one column rather than of all of them.
 *
 * <p>A storage row keyed so still has the {@link StorageLayout#ROWS} layout, with a multiplicity
 * of 1 and no hashes of its values (nothing matches it by them), so readers see no difference. Each full refresh decides
 * anew whether it keys the rows (it cannot when some of the table's rows have no id yet, after an
 * upgrade from format 2) and records that in its snapshot ({@value #SUMMARY_KEY}); an incremental
 * refresh keeps the rows as the last full refresh keyed them.
 */
public final class RowLineage {
  /** The storage column holding the source row's id; NULL in rows a full refresh did not key. */
  public static final String COLUMN = StorageLayout.HIDDEN_PREFIX + "row_id";

  /** Storage snapshot summary property: whether the refresh's rows are keyed by row lineage. */
  public static final String SUMMARY_KEY = "floe.row-lineage";

  private static final String SOURCE_ROW_ID = "_row_id";

  /**
   * Keyed storage rows: {@code rows} (the row columns and {@value #COLUMN}) with a multiplicity of
   * 1 and no value hashes. Nothing matches a keyed row by its values: refreshes match it by id,
   * and a full refresh that stops keying rows writes every row again, with its hashes.
   */
  public static Dataset<Row> storageRows(Dataset<Row> rows) {
    Column none = lit(null).cast(DataTypes.LongType);
    return rows.withColumn(StorageLayout.COUNT, lit(1L))
        .withColumn(StorageLayout.KEY, none)
        .withColumn(StorageLayout.KEY2, none);
  }

  private RowLineage() {}

  /**
   * The definition with the source row's id appended to its select list as {@value #COLUMN}, when
   * its rows can be keyed by it: the definition is a projection of filters of one read of {@code
   * source} (each source row gives at most one view row), {@code source} is a table, not a view,
   * of format 3 or later, and no subquery reads anything else. A {@code *} in the select list is
   * spelled out as the source's columns, so that it does not take a read's row id column too.
   *
   * @param parsed the definition as parsed
   * @param analyzed the definition as analyzed
   */
  public static Optional<LogicalPlan> keyedDefinition(LogicalPlan parsed, LogicalPlan analyzed, List<Source> sources) {
    if (sources.size() != 1 || sources.get(0).materializedView().isPresent()) {
      return Optional.empty();
    }
    Table table = sources.get(0).table();
    if (TableUtil.formatVersion(table) < 3 || !projectsFiltersOfOneRead(analyzed, 0)) {
      return Optional.empty();
    }
    if (!(parsed instanceof Project project) || !filtersOfOneRelation(project.child())) {
      return Optional.empty();
    }
    List<NamedExpression> items = new ArrayList<>();
    for (NamedExpression item : Scala.list(project.projectList())) {
      if (item instanceof UnresolvedStar) {
        for (StructField field : org.apache.iceberg.spark.SparkSchemaUtil.convert(table.schema()).fields()) {
          items.add(new UnresolvedAttribute(Scala.seq(field.name())));
        }
      } else if (holds((Expression) item, UnresolvedStar.class) || holds((Expression) item, SubqueryExpression.class)) {
        return Optional.empty();
      } else {
        items.add(item);
      }
    }
    items.add(new Alias(
        new UnresolvedAttribute(Scala.seq(SOURCE_ROW_ID)), COLUMN, NamedExpression.newExprId(), Scala.seq(),
        Scala.none(), Scala.seq()));
    return Optional.of(new Project(Scala.seq(items), project.child()));
  }

  /**
   * Whether every live data file of {@code table} at {@code snapshot} gives its rows ids: files
   * written before an upgrade to format 3 have none until the table assigns them. Reads manifests.
   */
  public static boolean rowsHaveIds(Table table, Snapshot snapshot) {
    try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.file().firstRowId() == null) {
          return false;
        }
      }
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Whether the storage rows as of {@code readSnapshot} are keyed by row lineage: the refresh that
   * wrote them (or, after compactions, the one before them) recorded so.
   */
  public static boolean keys(Table storage, Snapshot readSnapshot) {
    return storage.schema().findField(COLUMN) != null
        && MaterializedView.lastRefreshSnapshot(storage, readSnapshot)
            .map(snapshot -> Boolean.parseBoolean(snapshot.summary().get(SUMMARY_KEY)))
            .orElse(false);
  }

  private static boolean projectsFiltersOfOneRead(LogicalPlan plan, int depth) {
    for (Expression expression : Scala.list(plan.expressions())) {
      if (holds(expression, SubqueryExpression.class)) {
        return false;
      }
    }
    if (plan instanceof LeafNode) {
      return depth > 0;
    }
    if (!(plan instanceof Project || plan instanceof Filter || plan instanceof SubqueryAlias)) {
      return false;
    }
    return plan.children().size() == 1 && projectsFiltersOfOneRead(plan.children().head(), depth + 1);
  }

  private static boolean filtersOfOneRelation(LogicalPlan plan) {
    if (plan instanceof UnresolvedRelation) {
      return true;
    }
    if (plan instanceof Filter filter) {
      return !holds(filter.condition(), SubqueryExpression.class) && filtersOfOneRelation(filter.child());
    }
    if (plan instanceof SubqueryAlias alias) {
      return filtersOfOneRelation(alias.child());
    }
    return false;
  }

  private static boolean holds(Expression expression, Class<?> kind) {
    if (kind.isInstance(expression)) {
      return true;
    }
    for (Expression child : Scala.list(expression.children())) {
      if (holds(child, kind)) {
        return true;
      }
    }
    return false;
  }
}
