package io.floe.spark.parser;

import io.floe.FloeException;
import io.floe.spark.Scala;
import io.floe.spark.command.AlterMaterializedViewCommand;
import io.floe.spark.command.CreateMaterializedViewCommand;
import io.floe.spark.command.CreateFlowCommand;
import io.floe.spark.command.CreateStreamingTableCommand;
import io.floe.spark.command.CreateTableFedStreamingTableCommand;
import io.floe.spark.command.DescribeMaterializedViewCommand;
import io.floe.spark.command.DropMaterializedViewCommand;
import io.floe.spark.command.DropNamespaceCascadeCommand;
import io.floe.spark.command.DropTableCommand;
import io.floe.spark.command.ExplainRefreshCommand;
import io.floe.spark.command.RefreshMaterializedViewCommand;
import io.floe.spark.command.RefreshStreamingTableCommand;
import io.floe.spark.command.RefreshTableFedStreamingTableCommand;
import io.floe.spark.ingest.TableIngestion;
import io.floe.spark.command.ShowMaterializedViewPropertiesCommand;
import io.floe.spark.command.ShowMaterializedViewsCommand;
import io.floe.spark.command.ShowRefreshesCommand;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.MaterializedViewDdl;
import io.floe.sql.AlterMaterializedView;
import io.floe.sql.CreateMaterializedView;
import io.floe.sql.CreateFlow;
import io.floe.sql.CreateStreamingTable;
import io.floe.sql.CreateTableFedStreamingTable;
import io.floe.sql.DescribeRelation;
import io.floe.sql.DropMaterializedView;
import io.floe.sql.DropTable;
import io.floe.sql.ExplainRefresh;
import io.floe.sql.FloeStatement;
import io.floe.sql.FloeStatementParser;
import io.floe.sql.QualifiedName;
import io.floe.sql.RefreshMaterializedView;
import io.floe.sql.RefreshStreamingTable;
import io.floe.sql.ShowMaterializedViews;
import io.floe.sql.ShowRefreshes;
import io.floe.sql.ShowTableProperties;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.UnresolvedNamespace;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.DropNamespace;
import org.apache.spark.sql.catalyst.plans.logical.InsertIntoStatement;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.analysis.UnresolvedTableOrView;
import org.apache.spark.sql.catalyst.plans.logical.ShowColumns;
import org.apache.spark.sql.execution.command.SetCommand;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.Seq;

/**
 * Adds Floe's statements to whatever parser the session already has (Spark's, or Iceberg's
 * extension parser): a Floe statement becomes a Floe command; everything else goes to the
 * delegate, with one check on the way: writes aimed at a materialized view are refused.
 */
public final class FloeSparkSqlParser implements ParserInterface {
  private final SparkSession spark;
  private final ParserInterface delegate;

  public FloeSparkSqlParser(SparkSession spark, ParserInterface delegate) {
    this.spark = spark;
    this.delegate = delegate;
  }

  @Override
  public LogicalPlan parsePlan(String sql) throws ParseException {
    Optional<FloeStatement> statement = FloeStatementParser.parse(sql);
    if (statement.isPresent()) {
      Optional<LogicalPlan> command = toCommand(statement.get());
      if (command.isPresent()) {
        return command.get();
      }
    }
    Matcher set = HYPHENATED_SET.matcher(sql);
    if (set.matches()) {
      Option<String> value = set.group(2) == null ? Scala.none() : Scala.some(set.group(2).trim());
      if (value.isDefined() && set.group(1).equalsIgnoreCase(io.floe.spark.rewrite.RewriteSettings.STALENESS_TOLERANCE)) {
        try {
          io.floe.spark.rewrite.RewriteSettings.stalenessToleranceMillis(value.get());
        } catch (IllegalArgumentException e) {
          throw new FloeException(e.getMessage(), e);
        }
      }
      return new SetCommand(Scala.some(new Tuple2<>(set.group(1), value)));
    }
    LogicalPlan plan = delegate.parsePlan(sql);
    if (plan instanceof DropNamespace drop && drop.cascade() && drop.namespace() instanceof UnresolvedNamespace namespace) {
      return new DropNamespaceCascadeCommand(
          new DropNamespaceCascadeCommand.Target(Scala.list(namespace.multipartIdentifier())), plan);
    }
    if (plan instanceof ShowColumns show && show.child() instanceof UnresolvedTableOrView relation) {
      Optional<LogicalPlan> columns = materializedViewColumns(show, relation);
      if (columns.isPresent()) {
        return columns.get();
      }
    }
    if (plan instanceof org.apache.spark.sql.catalyst.plans.logical.ShowCreateTable show
        && show.child() instanceof UnresolvedTableOrView relation) {
      Optional<MaterializedView> mv = materializedView(spark, new QualifiedName(Scala.list(relation.multipartIdentifier())));
      if (mv.isPresent()) {
        // Spark would print the Iceberg view as a plain CREATE VIEW, which defines no MV.
        return new org.apache.spark.sql.catalyst.plans.logical.LocalRelation(
            show.output(),
            Scala.seq(List.of(new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(
                new Object[] {org.apache.spark.unsafe.types.UTF8String.fromString(MaterializedViewDdl.of(mv.get()))}))),
            false,
            Scala.none());
      }
    }
    refuseWritesToMaterializedViews(plan);
    new ViewStatementGuard(spark).check(plan);
    return plan;
  }

  /**
   * {@code SHOW COLUMNS IN mv [IN namespace]}: the view's columns, as for a table (Spark cannot
   * plan the statement for an Iceberg view); empty when the name is not a materialized view.
   */
  private Optional<LogicalPlan> materializedViewColumns(ShowColumns show, UnresolvedTableOrView relation) {
    List<String> parts = new java.util.ArrayList<>(Scala.list(relation.multipartIdentifier()));
    if (show.namespace().isDefined()) {
      String table = parts.get(parts.size() - 1);
      parts = new java.util.ArrayList<>(Scala.list(show.namespace().get()));
      parts.add(table);
    }
    return materializedView(spark, new QualifiedName(parts))
        .map(mv -> {
          List<org.apache.spark.sql.catalyst.InternalRow> rows = new java.util.ArrayList<>();
          for (String column : mv.viewColumns()) {
            rows.add(new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(
                new Object[] {org.apache.spark.unsafe.types.UTF8String.fromString(column)}));
          }
          return new org.apache.spark.sql.catalyst.plans.logical.LocalRelation(show.output(), Scala.seq(rows), false, Scala.none());
        });
  }

  /**
   * {@code SET key=value} or {@code SET key} for a key with a hyphen, such as Floe's {@code
   * floe.refresh.max-attempts}: Spark's grammar reads such a key only backquoted.
   */
  private static final Pattern HYPHENATED_SET =
      Pattern.compile("(?is)\\s*SET\\s+([a-z_][a-z0-9_.:]*-[a-z0-9_.:-]*)\\s*(?:=(.*?))?\\s*;?\\s*");

  private Optional<LogicalPlan> toCommand(FloeStatement statement) throws ParseException {
    if (statement instanceof CreateMaterializedView) {
      return Optional.of(new CreateMaterializedViewCommand((CreateMaterializedView) statement));
    } else if (statement instanceof RefreshMaterializedView) {
      return Optional.of(new RefreshMaterializedViewCommand((RefreshMaterializedView) statement));
    } else if (statement instanceof CreateStreamingTable) {
      return Optional.of(new CreateStreamingTableCommand((CreateStreamingTable) statement));
    } else if (statement instanceof CreateTableFedStreamingTable create) {
      return Optional.of(new CreateTableFedStreamingTableCommand(create));
    } else if (statement instanceof CreateFlow flow) {
      return Optional.of(new CreateFlowCommand(flow));
    } else if (statement instanceof RefreshStreamingTable refresh) {
      return Optional.of(tableFed(refresh.name())
          ? new RefreshTableFedStreamingTableCommand(refresh)
          : new RefreshStreamingTableCommand(refresh));
    } else if (statement instanceof DropMaterializedView) {
      return Optional.of(new DropMaterializedViewCommand((DropMaterializedView) statement));
    } else if (statement instanceof AlterMaterializedView) {
      return Optional.of(new AlterMaterializedViewCommand((AlterMaterializedView) statement));
    } else if (statement instanceof ShowMaterializedViews) {
      return Optional.of(new ShowMaterializedViewsCommand((ShowMaterializedViews) statement));
    } else if (statement instanceof DescribeRelation) {
      DescribeRelation describe = (DescribeRelation) statement;
      return materializedView(spark, describe.name()).map(mv -> new DescribeMaterializedViewCommand(describe));
    } else if (statement instanceof ShowTableProperties) {
      ShowTableProperties show = (ShowTableProperties) statement;
      return materializedView(spark, show.name()).map(mv -> new ShowMaterializedViewPropertiesCommand(show));
    } else if (statement instanceof ShowRefreshes) {
      return Optional.of(new ShowRefreshesCommand((ShowRefreshes) statement));
    } else if (statement instanceof ExplainRefresh) {
      return Optional.of(new ExplainRefreshCommand((ExplainRefresh) statement));
    } else if (statement instanceof DropTable) {
      DropTable drop = (DropTable) statement;
      String sparkSql =
          "DROP TABLE " + (drop.ifExists() ? "IF EXISTS " : "") + drop.name() + (drop.purge() ? " PURGE" : "");
      return Optional.of(new DropTableCommand(drop, delegate.parsePlan(sparkSql)));
    }
    return Optional.empty();
  }

  /** Whether {@code name} is a streaming table fed by tables (whose refresh returns other columns). */
  private boolean tableFed(QualifiedName name) {
    try {
      return new TableIngestion((org.apache.spark.sql.classic.SparkSession) spark)
          .isTableFed(new MaterializedViewCatalog(spark).resolve(name));
    } catch (FloeException notAnIcebergCatalog) {
      return false;
    }
  }

  /**
   * The materialized view a statement names, or empty when there is none or the name is not in an
   * Iceberg catalog: such a statement is Spark's to run. Shared with {@link ViewStatementGuard}.
   */
  static Optional<MaterializedView> materializedView(SparkSession spark, QualifiedName name) {
    try {
      return new MaterializedViewCatalog(spark).load(name);
    } catch (FloeException notAnIcebergCatalog) {
      return Optional.empty();
    }
  }

  private void refuseWritesToMaterializedViews(LogicalPlan plan) {
    LogicalPlan target;
    String verb;
    if (plan instanceof InsertIntoStatement) {
      target = ((InsertIntoStatement) plan).table();
      verb = "INSERT INTO";
    } else if (plan instanceof MergeIntoTable) {
      target = ((MergeIntoTable) plan).targetTable();
      verb = "MERGE INTO";
    } else if (plan instanceof UpdateTable) {
      target = ((UpdateTable) plan).table();
      verb = "UPDATE";
    } else if (plan instanceof DeleteFromTable) {
      target = ((DeleteFromTable) plan).table();
      verb = "DELETE FROM";
    } else {
      return;
    }
    while (target instanceof SubqueryAlias) {
      target = ((SubqueryAlias) target).child();
    }
    if (!(target instanceof UnresolvedRelation)) {
      return;
    }
    List<String> parts = Scala.list(((UnresolvedRelation) target).multipartIdentifier());
    Optional<MaterializedView> mv = materializedView(spark, new QualifiedName(parts));
    if (mv.isPresent()) {
      throw new FloeException(
          "Cannot "
              + verb
              + " "
              + mv.get()
              + ": it is a materialized view; its rows change only through REFRESH MATERIALIZED VIEW");
    }
  }

  @Override
  public Expression parseExpression(String sqlText) throws ParseException {
    return delegate.parseExpression(sqlText);
  }

  @Override
  public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
    return delegate.parseTableIdentifier(sqlText);
  }

  @Override
  public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
    return delegate.parseFunctionIdentifier(sqlText);
  }

  @Override
  public Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
    return delegate.parseMultipartIdentifier(sqlText);
  }

  @Override
  public LogicalPlan parseQuery(String sqlText) throws ParseException {
    return delegate.parseQuery(sqlText);
  }

  @Override
  public StructType parseRoutineParam(String sqlText) throws ParseException {
    return delegate.parseRoutineParam(sqlText);
  }

  @Override
  public StructType parseTableSchema(String sqlText) throws ParseException {
    return delegate.parseTableSchema(sqlText);
  }

  @Override
  public DataType parseDataType(String sqlText) throws ParseException {
    return delegate.parseDataType(sqlText);
  }
}
