package io.floe.spark.command;

import io.floe.spark.ingest.TableIngestion;
import io.floe.sql.CreateTableFedStreamingTable;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code CREATE [OR REFRESH] STREAMING TABLE name [(columns)] [AS SELECT ... FROM STREAM(source) ...]}: creates a
 * streaming table fed by tables and runs its query over its source's rows; without a query, a target for flows.
 */
public final class CreateTableFedStreamingTableCommand extends FloeCommand<CreateTableFedStreamingTable> {

  public CreateTableFedStreamingTableCommand(CreateTableFedStreamingTable statement) {
    super(statement, StreamingRefreshOutput.attributes());
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    return new TableIngestion(spark).create(statement()).map(StreamingRefreshOutput::row).map(List::of).orElse(List.of());
  }
}
