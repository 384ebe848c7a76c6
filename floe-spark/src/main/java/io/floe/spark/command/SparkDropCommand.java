package io.floe.spark.command;

import io.floe.spark.Scala;
import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import scala.collection.immutable.Seq;

/**
 * A Floe command standing in for one of Spark's drop statements: it does what materialized views
 * need first, and leaves the rest (or a catalog Floe does not manage) to Spark's own plan of the
 * statement, which it carries.
 */
abstract class SparkDropCommand<S> extends FloeCommand<S> {
  private final LogicalPlan sparkDrop;

  SparkDropCommand(S statement, LogicalPlan sparkDrop) {
    super(statement, List.of());
    this.sparkDrop = sparkDrop;
  }

  /** Spark copies plan nodes through their constructor; Spark's plan is its second argument. */
  @Override
  public final Seq<Object> otherCopyArgs() {
    return Scala.seq(List.<Object>of(sparkDrop));
  }

  /** Runs Spark's own plan of the statement. */
  final void runSparkDrop(SparkSession spark) {
    Dataset.ofRows(spark, sparkDrop);
  }
}
