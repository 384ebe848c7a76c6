package io.floe.spark.capture;

import java.util.Arrays;
import java.util.Set;
import org.apache.iceberg.MetadataColumns;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A staged Iceberg table seen with a given schema and the file path and row position metadata
 * columns ({@code _file}, {@code _pos}). Iceberg's staged table for format v3 puts its row lineage
 * columns in its schema, and Spark then resolves no other metadata column of it; this view hides
 * them, so that the rows' positions can be read. Reads go to the staged table's own scan, which
 * fills the metadata columns it is asked for.
 */
final class PositionedTable implements Table, SupportsRead, SupportsMetadataColumns {
  private static final Set<String> EXPOSED =
      Set.of(MetadataColumns.FILE_PATH.name(), MetadataColumns.ROW_POSITION.name());

  private final Table staged;
  private final StructType schema;

  /**
   * @param staged Iceberg's table of a staged task set, which must support reads
   * @param schema the data columns to expose, all of them columns of {@code staged}
   */
  PositionedTable(Table staged, StructType schema) {
    if (!(staged instanceof SupportsRead) || !(staged instanceof SupportsMetadataColumns)) {
      throw new IllegalArgumentException("Table " + staged.name() + " cannot be read with row positions");
    }
    this.staged = staged;
    this.schema = schema;
  }

  @Override
  public String name() {
    return staged.name();
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return Set.of(TableCapability.BATCH_READ);
  }

  @Override
  public MetadataColumn[] metadataColumns() {
    return Arrays.stream(((SupportsMetadataColumns) staged).metadataColumns())
        .filter(column -> EXPOSED.contains(column.name()))
        .toArray(MetadataColumn[]::new);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return ((SupportsRead) staged).newScanBuilder(options);
  }
}
