package io.floe.spark.command;

import io.floe.spark.ingest.TableIngestion;
import io.floe.sql.CreateFlow;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code CREATE FLOW name AS INSERT INTO target [BY NAME] SELECT ... FROM STREAM(source)}: adds a flow to a
 * streaming table fed by tables (or replaces its query) and refreshes the table.
 */
public final class CreateFlowCommand extends FloeCommand<CreateFlow> {

  public CreateFlowCommand(CreateFlow statement) {
    super(statement, StreamingRefreshOutput.attributes());
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    return List.of(StreamingRefreshOutput.row(new TableIngestion(spark).createFlow(statement())));
  }
}
