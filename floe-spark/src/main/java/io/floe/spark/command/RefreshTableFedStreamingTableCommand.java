package io.floe.spark.command;

import io.floe.spark.ingest.TableIngestion;
import io.floe.sql.RefreshStreamingTable;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code REFRESH STREAMING TABLE name [FULL]} of a streaming table fed by tables: runs its flows over the rows
 * their sources appended since their checkpoints, or, with {@code FULL}, over all of their rows.
 */
public final class RefreshTableFedStreamingTableCommand extends FloeCommand<RefreshStreamingTable> {

  public RefreshTableFedStreamingTableCommand(RefreshStreamingTable statement) {
    super(statement, StreamingRefreshOutput.attributes());
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    return List.of(StreamingRefreshOutput.row(new TableIngestion(spark).refresh(statement().name(), statement().full())));
  }
}
