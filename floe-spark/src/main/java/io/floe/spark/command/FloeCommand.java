package io.floe.spark.command;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.trees.TreePattern;
import org.apache.spark.sql.execution.command.RunnableCommand;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import scala.Enumeration;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Floe statement as a Spark command: Spark runs it eagerly when {@code spark.sql(...)} is called,
 * as it runs its own DDL, and {@code EXPLAIN} shows it without running it.
 *
 * <p>Written in Java against Catalyst's Scala traits: the class extends {@link LogicalPlan} and
 * implements {@link RunnableCommand}, so Spark's planner wraps it in its own command executor. The
 * single product element is the statement, which keeps {@code makeCopy} working.
 */
public abstract class FloeCommand<S> extends LogicalPlan implements RunnableCommand {
  private final S statement;
  private final Seq<Attribute> output;

  protected FloeCommand(S statement, List<Attribute> output) {
    this.statement = statement;
    this.output = CollectionConverters.asScala(output).toList();
  }

  /** Runs the statement and returns its result rows, in the order of {@link #output()}. */
  protected abstract List<Row> execute(org.apache.spark.sql.classic.SparkSession spark);

  /** The statement this command runs, its one product element. */
  protected final S statement() {
    return statement;
  }

  /**
   * Runs the statement with query rewrite off: Floe's statements compute definitions, which must
   * read their sources, never a materialized view standing in for them.
   */
  @Override
  public final Seq<Row> run(SparkSession spark) {
    return io.floe.spark.rewrite.RewriteSuppression.withoutRewrite(
        () -> CollectionConverters.asScala(execute((org.apache.spark.sql.classic.SparkSession) spark)).toList());
  }

  static Attribute column(String name, DataType type) {
    return new AttributeReference(
        name, type, true, Metadata.empty(), NamedExpression.newExprId(), io.floe.spark.Scala.seq());
  }

  static Attribute stringColumn(String name) {
    return column(name, DataTypes.StringType);
  }

  @Override
  public Seq<Attribute> output() {
    return output;
  }

  @Override
  public Seq<LogicalPlan> children() {
    return io.floe.spark.Scala.seq();
  }

  @Override
  public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> newChildren) {
    return this;
  }

  @Override
  public Seq<Enumeration.Value> nodePatterns() {
    return CollectionConverters.asScala(List.<Enumeration.Value>of(TreePattern.COMMAND())).toList();
  }

  @Override
  public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(
      Seq<Enumeration.Value> patterns) {
    // nodePatterns is computed above; the trait's initializer is never called from Java.
  }

  @Override
  public int productArity() {
    return 1;
  }

  @Override
  public Object productElement(int n) {
    if (n == 0) {
      return statement();
    }
    throw new IndexOutOfBoundsException(n);
  }

  @Override
  public boolean canEqual(Object that) {
    return that != null && that.getClass() == getClass();
  }

  @Override
  public String simpleString(int maxFields) {
    return getClass().getSimpleName() + " " + statement();
  }

  @Override
  public boolean equals(Object o) {
    return o != null && o.getClass() == getClass() && ((FloeCommand<?>) o).statement().equals(statement());
  }

  @Override
  public int hashCode() {
    return statement().hashCode();
  }
}
