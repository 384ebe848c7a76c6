package io.floe.spark.ingest;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.spark.ivm.BranchCommit;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.CreateStreamingTable;
import io.floe.sql.FileSource;
import io.floe.sql.QualifiedName;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.types.Types;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the files of a streaming table's folder that it has not loaded before, exactly once.
 *
 * <p>A run lists the folder, subtracts the files the table's history says it loaded, reads the rest (see
 * {@link RawRecords}), adds new fields as nullable columns, and writes the rows to a private branch whose commit
 * carries the list of files it loaded. Fast-forwarding main to that branch publishes the rows and the file list in
 * one step; a run that dies before it leaves main untouched, so the next run loads those files again, once. Two
 * runs racing: the second fast-forward is refused and that run starts over from the listing.
 */
public final class FileIngestion {
  private static final Logger LOG = LoggerFactory.getLogger(FileIngestion.class);
  private static final int MAX_ATTEMPTS = 4;
  private static final String BRANCH_PREFIX = "floe_ingest_";
  /** A branch of a run that died is removed by a later run once it is this old. */

  private final SparkSession spark;
  private final MaterializedViewCatalog catalog;
  private Runnable beforePublish = () -> {};

  public FileIngestion(SparkSession spark) {
    this.spark = spark;
    this.catalog = new MaterializedViewCatalog(spark);
  }

  /** Runs {@code hook} after a run wrote its rows and before it publishes them (tests simulate a crash there). */
  FileIngestion beforePublish(Runnable hook) {
    this.beforePublish = hook;
    return this;
  }

  /**
   * {@code CREATE [OR REFRESH] STREAMING TABLE}: creates the table and loads the folder's files; with
   * {@code OR REFRESH}, an existing streaming table over the same folder loads its new files instead.
   *
   * @return the first run's result, or empty for {@code IF NOT EXISTS} on an existing table
   */
  public Optional<IngestResult> create(CreateStreamingTable statement) {
    ResolvedName name = catalog.resolve(statement.name());
    FileSource source = absolute(statement.source());
    if (name.isView()) {
      throw new FloeException("Cannot create streaming table " + name + ": a view with that name exists"
          + (catalog.load(name).isPresent() ? " (a materialized view)" : ""));
    }
    if (name.catalog().tableExists(name.identifier())) {
      Table existing = name.catalog().loadTable(name.identifier());
      if (statement.ifNotExists()) {
        return Optional.empty();
      }
      if (!StreamingTable.isStreamingTable(existing)) {
        throw new FloeException("Cannot create streaming table " + name + ": a table with that name exists");
      }
      if (!statement.orRefresh()) {
        throw new FloeException(
            "Cannot create streaming table " + name + ": it already exists; use CREATE OR REFRESH STREAMING TABLE or "
                + "REFRESH STREAMING TABLE");
      }
      FileSource recorded = absolute(StreamingTable.source(existing));
      // Its files were parsed by the recorded definition, and a file is loaded once: a new path,
      // format or option would apply to the new files only, so the table would mix two parsings.
      String reload = "; to load every file with the new definition, drop the table (DROP TABLE " + name
          + ") and run the statement again";
      // A statement naming no format reads the files as the table does, whatever their extensions decided.
      boolean sameFormat = source.format().isEmpty() || recorded.format().equals(source.format());
      if (!recorded.path().equals(source.path()) || !sameFormat) {
        throw new FloeException(
            "Cannot refresh streaming table " + name + ": it ingests " + formatName(recorded) + " from "
                + recorded.path() + ", not " + formatName(source) + " from " + source.path() + reload);
      }
      if (!recorded.options().equals(source.options())) {
        throw new FloeException(
            "Cannot refresh streaming table " + name + ": it reads its files with the options "
                + new java.util.TreeMap<>(recorded.options()) + ", not " + new java.util.TreeMap<>(source.options()) + reload);
      }
      return Optional.of(run(name));
    }
    // List first: a missing folder fails the statement before anything is created.
    FileListing.list(name.toString(), source.path(), hadoopConf());
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("format-version", "2");
    properties.putAll(statement.tableProperties());
    properties.putAll(StreamingTable.properties(source));
    statement.comment().ifPresent(c -> properties.put("comment", c));
    Schema schema =
        new Schema(
            Types.NestedField.optional(1, StreamingTable.SOURCE_FILE, Types.StringType.get()),
            Types.NestedField.optional(2, StreamingTable.SOURCE_LINE, Types.LongType.get()),
            Types.NestedField.optional(3, StreamingTable.INGESTED_AT, Types.TimestampType.withZone()),
            Types.NestedField.optional(4, StreamingTable.RESCUED_DATA, Types.StringType.get()));
    Table table = name.catalog().createTable(name.identifier(), schema, PartitionSpec.unpartitioned(), properties);
    // An empty first snapshot gives every run a base to branch from.
    table.newAppend().set(StreamingTable.FILES_SUMMARY_KEY, "[]").commit();
    catalog.invalidateSparkCache(name);
    try {
      return Optional.of(run(name));
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      // A failed CREATE leaves nothing behind, so it can simply be run again once fixed.
      name.catalog().dropTable(name.identifier(), true);
      catalog.invalidateSparkCache(name);
      throw e;
    }
  }

  /** {@code REFRESH STREAMING TABLE}: loads the files that arrived since the last run. */
  public IngestResult refresh(QualifiedName qualified) {
    ResolvedName name = catalog.resolve(qualified);
    if (!name.catalog().tableExists(name.identifier())) {
      throw new FloeException("Cannot refresh streaming table " + name + ": it does not exist");
    }
    if (!StreamingTable.isStreamingTable(name.catalog().loadTable(name.identifier()))) {
      throw new FloeException(
          "Cannot refresh streaming table " + name + ": it is a plain table, not created by CREATE STREAMING TABLE");
    }
    return run(name);
  }

  /**
   * Session setting: the folder a relative {@code read_files} path is relative to; unset, the
   * working directory of this process. {@code floe sql} sends its own working directory to a
   * server, so a path means the same folder as without one.
   */
  public static final String BASE_DIRECTORY = "floe.files.base-directory";

  /**
   * The source with a relative local folder made absolute, so the table records (and every later
   * run, wherever it runs from, reads) one folder.
   */
  private FileSource absolute(FileSource source) {
    return source.resolvedAgainst(java.nio.file.Paths.get(spark.conf().get(BASE_DIRECTORY, System.getProperty("user.dir"))));
  }

  private static String formatName(FileSource source) {
    return source.format().map(format -> format + " files").orElse("files of the format their extensions name");
  }

  private IngestResult run(ResolvedName name) {
    for (int attempt = 1; ; attempt++) {
      try {
        return runOnce(name);
      } catch (CommitFailedException e) {
        if (attempt >= MAX_ATTEMPTS) {
          throw new FloeException("Cannot ingest into " + name + ": " + MAX_ATTEMPTS + " runs in a row lost a commit race", e);
        }
        LOG.info("Ingestion into {} lost a commit race (attempt {}), listing again: {}", name, attempt, e.getMessage());
      }
    }
  }

  private IngestResult runOnce(ResolvedName name) {
    long start = System.currentTimeMillis();
    Table table = name.catalog().loadTable(name.identifier());
    FileSource source = StreamingTable.source(table);
    List<SourceFile> listed = FileListing.list(name.toString(), source.path(), hadoopConf());
    catalog.invalidateSparkCache(name);
    Map<String, SourceFile> loaded = FileLog.loaded(spark, table, name.quoted());
    List<String> warnings = new ArrayList<>();
    List<SourceFile> fresh = new ArrayList<>();
    for (SourceFile file : listed) {
      SourceFile before = loaded.get(file.path());
      if (before == null) {
        fresh.add(file);
      } else if (before.size() >= 0 && (before.size() != file.size() || before.modifiedMs() != file.modifiedMs())) {
        warnings.add("file " + file.path() + " changed after it was loaded; it is not loaded again");
      }
    }
    if (listed.isEmpty()) {
      warnings.add("no files in " + source.path());
    }
    if (fresh.isEmpty()) {
      warnings.forEach(w -> LOG.warn("Ingestion into {}: {}", name, w));
      return new IngestResult(name.toString(), 0, 0, 0, List.of(), warnings, System.currentTimeMillis() - start, null);
    }
    List<SourceFile> toRead = new ArrayList<>();
    for (SourceFile file : fresh) {
      if (file.size() == 0) {
        warnings.add("file " + file.path() + " is empty");
      } else {
        toRead.add(file);
      }
    }

    if (source.format().isEmpty() && !toRead.isEmpty()) {
      // The first files decide, once: every later file is parsed the same way.
      String format = FolderFormat.of(name.toString(), source.path(), toRead);
      table.updateProperties().set(StreamingTable.SOURCE_FORMAT, format).commit();
      source = source.withFormat(format);
    }
    RawRecords reader = new RawRecords(spark, name.toString(), source);
    try {
      long rows = 0;
      long rescued = 0;
      List<String> added = new ArrayList<>();
      Dataset<Row> batchRows = null;
      if (!toRead.isEmpty()) {
        RawRecords.Batch batch;
        try {
          batch = reader.read(toRead, dataSchema(table));
        } catch (Exception e) { // Spark's AnalysisException is thrown undeclared
          if (e instanceof FloeException floe) {
            throw floe;
          }
          // A reader's own error (a bad option value gives "For input string: ...") names neither.
          String options = source.options().isEmpty() ? "" : " with the options " + new java.util.TreeMap<>(source.options());
          throw new FloeException("Cannot ingest into " + name + ": reading " + source.format().orElse("") + " files"
              + options + " failed: " + ErrorMessages.firstLineOf(e), e);
        }
        added = evolveSchema(name, table, batch.drift());
        table.refresh();
        catalog.invalidateSparkCache(name);
        batchRows = inTableOrder(table, batch.rows().withColumn(StreamingTable.INGESTED_AT, lit(new Timestamp(start))));
        Row counts =
            batchRows.agg(functions.count(lit(1)), functions.count(col(StreamingTable.RESCUED_DATA))).first();
        rows = counts.getLong(0);
        rescued = counts.getLong(1);
        warnings.addAll(conflictWarnings(batch.drift(), batch.rows()));
        if (rescued > 0) {
          warnings.add(rescued + " rows did not parse or had values that do not fit their column; their raw text is in "
              + StreamingTable.RESCUED_DATA);
        }
      }
      String fileLog = FileLog.toJson(fresh);
      long snapshot;
      try (BranchCommit commit = new BranchCommit(table, table.currentSnapshot().snapshotId(), BRANCH_PREFIX)) {
        if (batchRows == null) {
          table.newAppend().set(StreamingTable.FILES_SUMMARY_KEY, fileLog).toBranch(commit.branch()).commit();
        } else {
          try {
            batchRows.writeTo(commit.sparkName(name.quoted()))
                .option("snapshot-property." + StreamingTable.FILES_SUMMARY_KEY, fileLog)
                .append();
          } catch (org.apache.spark.sql.catalyst.analysis.NoSuchTableException e) {
            throw new FloeException("Cannot ingest into " + name + ": the table was dropped during the run", e);
          }
        }
        beforePublish.run();
        snapshot = commit.publish();
      }
      catalog.invalidateSparkCache(name);
      warnings.forEach(w -> LOG.warn("Ingestion into {}: {}", name, w));
      return new IngestResult(
          name.toString(), fresh.size(), rows, rescued, added, warnings, System.currentTimeMillis() - start, snapshot);
    } finally {
      reader.release();
    }
  }

  /** The table's own columns: everything but Floe's metadata columns. */
  private static StructType dataSchema(Table table) {
    StructType all = SparkSchemaUtil.convert(table.schema());
    return new StructType(
        Arrays.stream(all.fields())
            .filter(f -> !StreamingTable.METADATA_COLUMNS.contains(f.name()))
            .toArray(StructField[]::new));
  }

  /** Adds the batch's new fields before the metadata columns and widens promotable columns; returns the added names. */
  private List<String> evolveSchema(ResolvedName name, Table table, SchemaDrift drift) {
    if (drift.added().isEmpty() && drift.nestedAdded().isEmpty() && drift.widened().isEmpty()) {
      return List.of();
    }
    UpdateSchema update = table.updateSchema();
    List<String> added = new ArrayList<>();
    for (StructField field : drift.added()) {
      update.addColumn(field.name(), SparkSchemaUtil.convert(field.dataType()));
      update.moveBefore(field.name(), StreamingTable.SOURCE_FILE);
      added.add(field.name());
    }
    for (SchemaDrift.NestedField field : drift.nestedAdded()) {
      update.addColumn(field.parent(), field.field().name(), SparkSchemaUtil.convert(field.field().dataType()));
      added.add(field.path());
    }
    for (Map.Entry<String, DataType> widen : drift.widened().entrySet()) {
      update.updateColumn(widen.getKey(), SparkSchemaUtil.convert(widen.getValue()).asPrimitiveType());
    }
    try {
      update.commit();
    } catch (RuntimeException e) {
      throw new FloeException("Cannot ingest into " + name + ": cannot add columns " + added + ": " + e.getMessage(), e);
    }
    return added;
  }

  /** The rows with exactly the table's columns, in its order; a column the batch lacks is NULL. */
  private static Dataset<Row> inTableOrder(Table table, Dataset<Row> rows) {
    StructType schema = SparkSchemaUtil.convert(table.schema());
    Set<String> present = Arrays.stream(rows.columns()).collect(Collectors.toSet());
    List<Column> columns = new ArrayList<>();
    for (StructField field : schema.fields()) {
      Column value = present.contains(field.name()) ? col("`" + field.name() + "`") : lit(null);
      columns.add(value.cast(field.dataType()).as(field.name()));
    }
    return rows.select(columns.toArray(new Column[0]));
  }

  /** One warning per type conflict, naming the field, both types and up to three files holding such values. */
  private static List<String> conflictWarnings(SchemaDrift drift, Dataset<Row> rows) {
    List<String> warnings = new ArrayList<>();
    for (SchemaDrift.Conflict conflict : drift.conflicts()) {
      Column offending =
          col(StreamingTable.RESCUED_DATA).isNotNull()
              .and(col("`" + conflict.field() + "`").isNull())
              .and(functions.get_json_object(col(StreamingTable.RESCUED_DATA), "$." + conflict.field()).isNotNull()
                  .or(functions.not(col(StreamingTable.RESCUED_DATA).startsWith("{"))));
      List<String> files =
          rows.filter(offending).select(StreamingTable.SOURCE_FILE).distinct().limit(3).collectAsList().stream()
              .map(r -> r.getString(0))
              .filter(Objects::nonNull)
              .sorted()
              .collect(Collectors.toList());
      warnings.add(
          "type conflict on field " + conflict.field() + ": column is " + conflict.columnType().sql() + ", "
              + (files.isEmpty() ? "new files" : "file" + (files.size() > 1 ? "s " : " ") + String.join(", ", files))
              + " hold " + conflict.fileType().sql() + " values; those rows keep the value as text in "
              + StreamingTable.RESCUED_DATA);
    }
    return warnings;
  }

  private org.apache.hadoop.conf.Configuration hadoopConf() {
    return spark.sparkContext().hadoopConfiguration();
  }
}
