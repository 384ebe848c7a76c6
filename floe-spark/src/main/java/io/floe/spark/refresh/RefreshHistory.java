package io.floe.spark.refresh;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;

import io.floe.FloeException;
import io.floe.mv.RefreshStateParser;
import io.floe.mv.SourceState;
import io.floe.refresh.RefreshRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The refresh history of one catalog: the Iceberg table {@code floe.refresh_history}, one row per
 * refresh, created on first use. An append writes one small Parquet file with Iceberg's generic
 * writer and commits it with one append; no Spark job runs.
 *
 * <p>{@code sources_before} and {@code sources_after} hold JSON arrays of source states, each in
 * the {@code source-states} form of the refresh-state (see {@link RefreshStateParser}).
 */
public final class RefreshHistory {
  private static final java.util.concurrent.ExecutorService SAME_THREAD =
      org.apache.iceberg.relocated.com.google.common.util.concurrent.MoreExecutors.newDirectExecutorService();

  /** The namespace reserved for Floe's system tables. */
  public static final Namespace NAMESPACE = Namespace.of("floe");

  public static final String TABLE_NAME = "refresh_history";

  public static final TableIdentifier IDENTIFIER = TableIdentifier.of(NAMESPACE, TABLE_NAME);

  /** The history's columns, in the order SHOW REFRESHES shows them. */
  public static final Schema SCHEMA =
      new Schema(
          required(1, "materialized_view", Types.StringType.get()),
          required(2, "status", Types.StringType.get()),
          optional(3, "refresh_type", Types.StringType.get()),
          optional(4, "reason", Types.StringType.get()),
          optional(5, "error", Types.StringType.get()),
          required(6, "trigger", Types.StringType.get()),
          required(7, "started_at", Types.TimestampType.withZone()),
          required(8, "ended_at", Types.TimestampType.withZone()),
          required(9, "duration_ms", Types.LongType.get()),
          required(10, "attempts", Types.IntegerType.get()),
          optional(11, "rows_read", Types.LongType.get()),
          optional(12, "rows_written", Types.LongType.get()),
          optional(13, "rows_removed", Types.LongType.get()),
          optional(14, "storage_snapshot_id", Types.LongType.get()),
          required(15, "run_id", Types.StringType.get()),
          required(16, "refresh_id", Types.StringType.get()),
          optional(17, "sources_before", Types.StringType.get()),
          optional(18, "sources_after", Types.StringType.get()),
          optional(19, "expectations", Types.StringType.get()));

  private static final Logger LOG = LoggerFactory.getLogger(RefreshHistory.class);
  private static final int EXPIRE_EVERY = 100;
  private static final int SNAPSHOTS_KEPT = 20;

  private final String catalogName;
  private final Catalog catalog;

  /**
   * @param catalogName the Spark name of the catalog, for messages
   * @param catalog the Iceberg catalog that holds the history
   */
  public RefreshHistory(String catalogName, Catalog catalog) {
    this.catalogName = catalogName;
    this.catalog = catalog;
  }

  /** {@code catalog.floe.refresh_history}. */
  public String tableName() {
    return catalogName + "." + IDENTIFIER;
  }

  /** Appends one record with one commit. */
  public void append(RefreshRecord record) {
    Table table = loadOrCreate();
    GenericRecord row = GenericRecord.create(table.schema());
    row.setField("materialized_view", record.materializedView());
    row.setField("status", record.status().name());
    row.setField("refresh_type", record.refreshType() == null ? null : record.refreshType().name());
    row.setField("reason", record.reason());
    row.setField("error", record.error());
    row.setField("trigger", record.trigger().name());
    row.setField("started_at", timestamp(record.startedAtMs()));
    row.setField("ended_at", timestamp(record.endedAtMs()));
    row.setField("duration_ms", record.durationMs());
    row.setField("attempts", record.attempts());
    row.setField("rows_read", record.rowsRead());
    row.setField("rows_written", record.rowsWritten());
    row.setField("rows_removed", record.rowsRemoved());
    row.setField("storage_snapshot_id", record.storageSnapshotId());
    row.setField("run_id", record.runId());
    row.setField("refresh_id", record.refreshId());
    row.setField("sources_before", json(record.sourcesBefore()));
    row.setField("sources_after", json(record.sourcesAfter()));
    row.setField(
        "expectations",
        record.expectations().isEmpty() ? null : io.floe.refresh.ExpectationResultParser.toJson(record.expectations()));

    String fileName = FileFormat.PARQUET.addExtension(UUID.randomUUID().toString());
    OutputFile file = table.io().newOutputFile(table.locationProvider().newDataLocation(fileName));
    DataFile dataFile;
    try {
      DataWriter<Record> writer =
          Parquet.writeData(file)
              .forTable(table)
              .createWriterFunc(GenericParquetWriter::create)
              .overwrite()
              .build();
      try (writer) {
        writer.write(row);
      }
      dataFile = writer.toDataFile();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write a refresh history file for " + tableName(), e);
    }
    // One small file: the commit's manifest work runs on this thread. Iceberg's worker pool would
    // have this thread poll for it in 10 ms sleeps, which cost more than the work itself.
    table.newAppend().appendFile(dataFile).scanManifestsWith(SAME_THREAD).commit();
    expireOldSnapshots(table);
  }

  /**
   * Every {@value #EXPIRE_EVERY} appends, expires all but the last {@value #SNAPSHOTS_KEPT}
   * snapshots: each append adds one, and the table metadata rewritten by every commit lists them
   * all, so without this appends would slow down as the history grows. Rows are never removed.
   */
  private void expireOldSnapshots(Table table) {
    Snapshot current = table.currentSnapshot();
    if (current == null || current.sequenceNumber() % EXPIRE_EVERY != 0) {
      return;
    }
    try {
      table.expireSnapshots().expireOlderThan(current.timestampMillis()).retainLast(SNAPSHOTS_KEPT).commit();
    } catch (RuntimeException e) {
      // Maintenance only: the record is committed, and the next round tries again.
      LOG.warn("Cannot expire old snapshots of {}", tableName(), e);
    }
  }

  /** The history table, created when it does not exist yet. */
  public Table loadOrCreate() {
    Table table;
    try {
      table = catalog.loadTable(IDENTIFIER);
    } catch (NoSuchTableException missing) {
      table = create();
    }
    checkSchema(table);
    return table;
  }

  private Table create() {
    if (catalog instanceof SupportsNamespaces) {
      SupportsNamespaces namespaces = (SupportsNamespaces) catalog;
      if (!namespaces.namespaceExists(NAMESPACE)) {
        try {
          // Not Map.of: a REST catalog's request checks the map for null values, which Map.of answers
          // with a NullPointerException.
          namespaces.createNamespace(NAMESPACE, java.util.Collections.singletonMap("comment", "Floe system tables"));
        } catch (AlreadyExistsException createdMeanwhile) {
          // another refresh created it first
        }
      }
    }
    try {
      return catalog
          .buildTable(IDENTIFIER, SCHEMA)
          .withProperty(TableProperties.FORMAT_VERSION, "2")
          // Refreshes running in parallel append at once; each append is tiny, so retry freely.
          .withProperty(TableProperties.COMMIT_NUM_RETRIES, "20")
          .withProperty(TableProperties.COMMIT_MIN_RETRY_WAIT_MS, "20")
          .withProperty(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
          .withProperty(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, "20")
          .create();
    } catch (AlreadyExistsException createdMeanwhile) {
      return catalog.loadTable(IDENTIFIER);
    }
  }

  private void checkSchema(Table table) {
    for (Types.NestedField field : SCHEMA.columns()) {
      Types.NestedField found = table.schema().findField(field.name());
      if (found == null || !found.type().equals(field.type())) {
        throw new FloeException(
            "Cannot record refreshes in "
                + tableName()
                + ": the table there is not a refresh history (column "
                + field.name()
                + " "
                + (found == null ? "is missing" : "is " + found.type() + ", not " + field.type())
                + "); rename or drop it, Floe creates it");
      }
    }
  }

  private static OffsetDateTime timestamp(long epochMs) {
    return Instant.ofEpochMilli(epochMs).atOffset(ZoneOffset.UTC);
  }

  private static String json(List<SourceState> states) {
    return states == null ? null : RefreshStateParser.sourceStatesToJson(states);
  }
}
