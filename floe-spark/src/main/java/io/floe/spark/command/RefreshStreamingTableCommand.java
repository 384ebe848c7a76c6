package io.floe.spark.command;

import io.floe.spark.ingest.FileIngestion;
import io.floe.sql.RefreshStreamingTable;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/** {@code REFRESH STREAMING TABLE name}: loads the files that arrived in its folder since the last run. */
public final class RefreshStreamingTableCommand extends FloeCommand<RefreshStreamingTable> {

  public RefreshStreamingTableCommand(RefreshStreamingTable statement) {
    super(statement, IngestOutput.attributes());
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    if (statement().full()) {
      throw new io.floe.FloeException("Cannot refresh streaming table " + statement().name() + " in full: FULL applies to "
          + "streaming tables fed by tables; this one loads files, each once");
    }
    return List.of(IngestOutput.row(new FileIngestion(spark).refresh(statement().name())));
  }
}
