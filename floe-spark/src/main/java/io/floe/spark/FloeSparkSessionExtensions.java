package io.floe.spark;

import io.floe.spark.analysis.ManagedStorageWriteCheck;
import io.floe.spark.analysis.ResolveMaterializedViewReads;
import io.floe.spark.parser.FloeSparkSqlParser;
import io.floe.spark.rewrite.AnswerQueriesFromViews;
import org.apache.spark.sql.SparkSessionExtensions;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Adds materialized views to any SparkSession. Enable it next to Iceberg's extensions:
 *
 * <pre>
 * spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,io.floe.spark.FloeSparkSessionExtensions
 * </pre>
 *
 * Then {@code spark.sql("CREATE MATERIALIZED VIEW ...")}, {@code REFRESH}, {@code DROP}, {@code
 * ALTER}, {@code SHOW MATERIALIZED VIEWS}, {@code DESCRIBE} and {@code SHOW TBLPROPERTIES} work in
 * that session, reads of a materialized view read its storage table, and, with {@code
 * spark.sql.optimizer.answerQueriesWithMVs.enabled=true}, queries over base tables are answered
 * from materialized views where that gives the same result.
 */
public final class FloeSparkSessionExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectParser((spark, delegate) -> new FloeSparkSqlParser(spark, delegate));
    extensions.injectResolutionRule(ResolveMaterializedViewReads::new);
    extensions.injectPostHocResolutionRule(AnswerQueriesFromViews::new);
    extensions.injectCheckRule(spark -> new ManagedStorageWriteCheck());
    return BoxedUnit.UNIT;
  }
}
