package io.floe.spark.command;

import io.floe.spark.ingest.FileIngestion;
import io.floe.sql.CreateStreamingTable;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code CREATE [OR REFRESH] STREAMING TABLE name AS SELECT * FROM STREAM read_files(...)}: creates a Bronze
 * table over a folder and loads its files; {@code OR REFRESH} loads the new files of an existing one.
 */
public final class CreateStreamingTableCommand extends FloeCommand<CreateStreamingTable> {

  public CreateStreamingTableCommand(CreateStreamingTable statement) {
    super(statement, IngestOutput.attributes());
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    return new FileIngestion(spark).create(statement()).map(IngestOutput::row).map(List::of).orElse(List.of());
  }
}
