package io.floe.spark.capture;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.DataOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.VariantType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 2 of the refresh protocol: captures what changed in one Iceberg table between two of its
 * snapshots as a Z-set, the table's rows with a signed weight ({@link #WEIGHT}). Works for appends,
 * copy-on-write and merge-on-read (position deletes, deletion vectors) changes: only the data files
 * whose live rows differ are read. A file live at only one snapshot (appended, or rewritten by
 * copy-on-write) is read whole at that side; a file live at both that only gained position deletes
 * is read once for the rows at the newly deleted positions ({@link PositionCapture}); any other
 * differing file is read whole at both sides. The rows read are consolidated so that rows a rewrite
 * left unchanged, or an update left as they were, cancel out. A compaction ({@code replace}: files
 * rewritten, no row changed) costs nothing on its own; amid other changes, the runs of snapshots
 * between compactions are captured one by one and summed when that reads fewer rows than the whole
 * range, so the files a compaction wrote are not read.
 *
 * <p>When a change cannot be captured incrementally the result is {@link
 * CapturedChange.Unsupported} with the reason, and the caller refreshes in full.
 */
public final class ChangeCapture {
  /** The weight column of a Z-set: +n rows appeared, −n rows disappeared (BIGINT). */
  public static final String WEIGHT = "__floe_weight";

  private static final Logger LOG = LoggerFactory.getLogger(ChangeCapture.class);
  private static final Set<String> COMPACTION = Set.of(DataOperations.REPLACE);
  private static final Set<String> NOT_REWRITES =
      Set.of(DataOperations.APPEND, DataOperations.OVERWRITE, DataOperations.DELETE);
  private static final Set<String> ADDING_ONLY = Set.of(DataOperations.APPEND, DataOperations.REPLACE);

  private final SparkSession spark;
  private final long scanLimit;
  private final String limitReason;
  private final boolean acrossSchemas;
  private final Optional<Set<String>> columns;
  private final boolean byLineage;

  public ChangeCapture(SparkSession spark) {
    this(spark, Long.MAX_VALUE, "", false, Optional.empty(), false);
  }

  private ChangeCapture(
      SparkSession spark, long scanLimit, String limitReason, boolean acrossSchemas, Optional<Set<String>> columns,
      boolean byLineage) {
    this.spark = spark;
    this.scanLimit = scanLimit;
    this.limitReason = limitReason;
    this.acrossSchemas = acrossSchemas;
    this.columns = columns;
    this.byLineage = byLineage;
  }

  /**
   * A capture that reads a range whose snapshots were written in different schemas, all in the
   * newer snapshot's schema. Only for a caller that checked that every column it reads is the same
   * field, of the same type, in each schema involved; otherwise such a range is unsupported.
   */
  public ChangeCapture acrossSchemaChanges() {
    return new ChangeCapture(spark, scanLimit, limitReason, true, columns, byLineage);
  }

  /**
   * A capture of only the given columns (names, any case) of the table, for a reader whose rows
   * depend on no other column: the files are read for these columns alone, and a change that
   * leaves them as they were (an update of other columns) cancels out. The Z-set has the table's
   * columns among these, in the table's order; with none of them, its first column, so that rows
   * can still be counted.
   */
  public ChangeCapture reading(Set<String> columns) {
    Set<String> lower = new java.util.HashSet<>();
    columns.forEach(c -> lower.add(c.toLowerCase(java.util.Locale.ROOT)));
    return new ChangeCapture(spark, scanLimit, limitReason, acrossSchemas, Optional.of(Set.copyOf(lower)), byLineage);
  }

  /**
   * A capture of a table of format 3 or later that identifies each row version by its row lineage:
   * the Z-set gains the columns {@value #ROW_ID} and {@value #ROW_SEQUENCE} (the row's id and the
   * sequence number of the commit that last wrote it), and a version that disappeared (weight −1)
   * is read for those two columns alone, its other columns NULL. The older side of a change then
   * decodes two columns where it would decode every column read: for deletes spread over a large
   * table, most of a capture's time. A version cannot be live twice, so versions that a rewrite
   * kept, or that were added and removed within the range, still cancel out. A change that
   * touches rows without row ids (written before the table's upgrade to format 3) is unsupported.
   */
  public ChangeCapture byRowLineage() {
    return new ChangeCapture(spark, scanLimit, limitReason, acrossSchemas, columns, true);
  }

  /** The row id column of a capture {@link #byRowLineage}. */
  public static final String ROW_ID = "_row_id";

  /** The column of a capture {@link #byRowLineage} holding the sequence number that last wrote the row. */
  public static final String ROW_SEQUENCE = "_last_updated_sequence_number";

  /**
   * A capture that gives up, as {@link CapturedChange.Unsupported}, before reading data files
   * holding more than {@code rows} records: beyond that a full refresh reads less.
   */
  public ChangeCapture limitScanTo(long rows) {
    return limitScanTo(rows, "more than a full refresh reads (%d)");
  }

  /**
   * As {@link #limitScanTo(long)}, with the limit described for the reason the capture gives: a
   * format whose {@code %d} is the limit, such as {@code "more than the view stores (%d)"}.
   */
  public ChangeCapture limitScanTo(long rows, String description) {
    return new ChangeCapture(spark, rows, description, acrossSchemas, columns, byLineage);
  }

  /**
   * What a capture between two snapshots would find, from table metadata alone (no data is read):
   * the operations in the range, or why the change cannot be captured incrementally.
   */
  public static Inspection inspect(Table table, String sparkName, Long fromSnapshotExclusive, long toSnapshotInclusive) {
    return inspect(table, sparkName, fromSnapshotExclusive, toSnapshotInclusive, false);
  }

  /** As {@link #inspect(Table, String, Long, long)}, for a capture {@link #acrossSchemaChanges}. */
  public static Inspection inspect(
      Table table, String sparkName, Long fromSnapshotExclusive, long toSnapshotInclusive, boolean acrossSchemas) {
    Snapshot to = table.snapshot(toSnapshotInclusive);
    if (to == null) {
      return new Inspection(List.of(), Optional.of("snapshot " + toSnapshotInclusive + " is not in the metadata of " + sparkName));
    }
    if (fromSnapshotExclusive != null && fromSnapshotExclusive == toSnapshotInclusive) {
      return new Inspection(List.of(), Optional.empty());
    }
    SnapshotRange range = SnapshotRange.between(table, sparkName, fromSnapshotExclusive, to, acrossSchemas);
    return new Inspection(range.operations(), range.unsupportedReason());
  }

  /**
   * Whether the table holds the same rows at both snapshots: they are equal, or one descends from
   * the other through compactions only ({@code replace} snapshots). Reads table metadata only.
   */
  public static boolean sameRows(Table table, Long a, Long b) {
    if (java.util.Objects.equals(a, b)) {
      return true;
    }
    if (a == null || b == null) {
      return false;
    }
    return SnapshotRange.onlyRewritesBetween(table, a, b) || SnapshotRange.onlyRewritesBetween(table, b, a);
  }

  /** The result of {@link #inspect}: the snapshot operations in the range, oldest first. */
  public record Inspection(List<String> operations, Optional<String> unsupportedReason) {}

  /**
   * Captures the change of {@code table} after {@code fromSnapshotExclusive} up to {@code
   * toSnapshotInclusive}. A {@link CapturedChange.Delta}'s Z-set is computed before this returns.
   *
   * @param sparkName the table's multi-part Spark name, e.g. {@code `lake`.`ns`.`t`}, used to name
   *     the table in reasons and logs
   * @param fromSnapshotExclusive the snapshot the change starts after, or null when the table had
   *     no snapshot then (every row live at {@code toSnapshotInclusive} is then +1)
   * @throws IllegalArgumentException when {@code toSnapshotInclusive} is not a snapshot of the table
   */
  public CapturedChange capture(
      Table table, String sparkName, Long fromSnapshotExclusive, long toSnapshotInclusive) {
    Snapshot to = table.snapshot(toSnapshotInclusive);
    if (to == null) {
      throw new IllegalArgumentException(
          "Snapshot " + toSnapshotInclusive + " is not in the metadata of " + sparkName);
    }
    Schema schema = SnapshotUtil.schemaFor(table, toSnapshotInclusive);
    StructType sparkSchema = SparkSchemaUtil.convert(schema);
    StructType readSchema = readSchema(sparkSchema);
    if (fromSnapshotExclusive != null && fromSnapshotExclusive == toSnapshotInclusive) {
      return noChange(readSchema, List.of(), sparkName);
    }

    SnapshotRange range = SnapshotRange.between(table, sparkName, fromSnapshotExclusive, to, acrossSchemas);
    Optional<String> unsupported = range.unsupportedReason();
    if (unsupported.isPresent()) {
      LOG.debug("No incremental capture of {}: {}", sparkName, unsupported.get());
      return new CapturedChange.Unsupported(unsupported.get());
    }
    if (fromSnapshotExclusive != null && range.consistsOnlyOf(COMPACTION)) {
      return noChange(readSchema, range.operations(), sparkName);
    }
    Optional<String> incomparable = incomparableColumn(readSchema, sparkName);
    if (incomparable.isPresent()) {
      LOG.debug("No incremental capture of {}: {}", sparkName, incomparable.get());
      return new CapturedChange.Unsupported(incomparable.get());
    }

    List<Read> reads = plan(table, range, fromSnapshotExclusive, toSnapshotInclusive);
    long rowsRead = reads.stream().mapToLong(Read::recordCount).sum();
    if (rowsRead > scanLimit) {
      return new CapturedChange.Unsupported(
          "the change of " + sparkName + " is spread over data files holding " + rowsRead
              + " rows, " + String.format(java.util.Locale.ROOT, limitReason, scanLimit));
    }
    if (reads.stream().allMatch(Read::isEmpty)) {
      // Nothing changed but delete files, rewritten without deleting any further row.
      return noChange(readSchema, range.operations(), sparkName);
    }
    ChangeKind kind =
        fromSnapshotExclusive == null || range.consistsOnlyOf(ADDING_ONLY)
            ? ChangeKind.APPEND_ONLY
            : ChangeKind.ROW_LEVEL;
    Dataset<Row> zset = consolidatedRead(table, schema, sparkSchema, readSchema, reads);
    if (byLineage) {
      Optional<String> untraced = untracedVersions(zset, sparkName);
      if (untraced.isPresent()) {
        return new CapturedChange.Unsupported(untraced.get());
      }
    }
    if (kind == ChangeKind.ROW_LEVEL && zset.isEmpty()) {
      // The rows read cancelled out: updates that changed no column read.
      kind = ChangeKind.NONE;
    }
    LOG.debug(
        "Captured {} change of {} after snapshot {} up to {} ({}) in {} run(s) between rewrites: {} rows",
        kind,
        sparkName,
        fromSnapshotExclusive,
        toSnapshotInclusive,
        range.operations(),
        reads.size(),
        rowsRead);
    return new CapturedChange.Delta(zset, kind, rowsRead, range.operations());
  }

  /**
   * What the capture reads, from table metadata and delete files. A compaction in the range makes
   * the files it rewrote differ between the range's ends, so reading the range as one reads them
   * all; reading each run between compactions on its own never reads them, but reads a file
   * touched in several runs once per run. With a compaction in the range, both are planned and the
   * one reading fewer rows is kept.
   */
  private static List<Read> plan(Table table, SnapshotRange range, Long fromExclusive, long toInclusive) {
    if (fromExclusive == null) {
      return List.of(Read.of(table, TouchedFiles.allAt(table, toInclusive)));
    }
    List<SnapshotRange.Run> runs = range.runsBetweenRewrites(fromExclusive);
    List<Read> byRun = new ArrayList<>();
    for (SnapshotRange.Run run : runs) {
      TouchedFiles touched =
          run.appendsOnly()
              ? TouchedFiles.appendedBetween(table, run.fromExclusive(), run.toInclusive())
              : TouchedFiles.differingBetween(table, run.fromExclusive(), run.toInclusive());
      byRun.add(Read.of(table, touched));
    }
    if (range.consistsOnlyOf(NOT_REWRITES)) {
      return byRun;
    }
    Read whole = Read.of(table, TouchedFiles.differingBetween(table, fromExclusive, toInclusive));
    long byRunRows = byRun.stream().mapToLong(Read::recordCount).sum();
    return whole.recordCount() < byRunRows ? List.of(whole) : byRun;
  }

  private CapturedChange.Delta noChange(StructType sparkSchema, List<String> operations, String sparkName) {
    LOG.debug("No data change in {} ({})", sparkName, operations);
    Dataset<Row> empty = spark.createDataFrame(List.of(), sparkSchema.add(WEIGHT, DataTypes.LongType, true));
    return new CapturedChange.Delta(empty, ChangeKind.NONE, 0, operations);
  }

  /**
   * What one run of the range reads: the data files read whole at the older (−1) or the newer
   * (+1) side, and those read once for their newly deleted positions ({@link PositionCapture}).
   */
  private record Read(TouchedFiles whole, PositionCapture byPosition) {
    /** Reads delete files only; the files it cannot describe are read whole at both sides. */
    static Read of(Table table, TouchedFiles touched) {
      PositionCapture byPosition = PositionCapture.load(table, touched.deletesChanged());
      return new Read(touched.readingWhole(byPosition.wholeFile()), byPosition);
    }

    long recordCount() {
      return whole.recordCount() + byPosition.recordCount();
    }

    boolean isEmpty() {
      return whole.atFrom().isEmpty() && whole.atTo().isEmpty() && byPosition.files().isEmpty();
    }
  }

  /**
   * Reads what every run reads, weighs it −1 (older side, deleted positions) or +1 (newer side),
   * and sums the weights per row of the columns read. The result is computed here, because the staged task sets
   * it reads must be released before returning.
   */
  private Dataset<Row> consolidatedRead(
      Table table, Schema schema, StructType sparkSchema, StructType readSchema, List<Read> reads) {
    List<Column> columns = new ArrayList<>();
    // What the older side reads: every column read, or for a capture by row lineage only the
    // lineage columns, the others NULL.
    List<Column> older = new ArrayList<>();
    for (StructField field : readSchema.fields()) {
      Column column = functions.col(quoted(field.name()));
      columns.add(column);
      older.add(!byLineage || isLineage(field.name()) ? column : functions.lit(null).cast(field.dataType()).as(field.name()));
    }
    StructType positionedSchema = byLineage ? withLineage(sparkSchema) : sparkSchema;
    List<StagedScan> scans = new ArrayList<>();
    RuntimeException failure = null;
    try {
      List<Dataset<Row>> weighted = new ArrayList<>();
      for (Read read : reads) {
        if (!read.whole().atFrom().isEmpty()) {
          StagedScan scan = StagedScan.stage(spark, table, schema, read.whole().atFrom());
          scans.add(scan);
          weighted.add(scan.rows(older).withColumn(WEIGHT, functions.lit(-1L)));
        }
        if (!read.whole().atTo().isEmpty()) {
          StagedScan newer = StagedScan.stage(spark, table, schema, read.whole().atTo());
          scans.add(newer);
          weighted.add(newer.rows(columns).withColumn(WEIGHT, functions.lit(1L)));
        }
        if (!read.byPosition().files().isEmpty()) {
          StagedScan positioned = StagedScan.stage(spark, table, schema, read.byPosition().files());
          scans.add(positioned);
          weighted.add(read.byPosition().deletedRows(spark, positioned, positionedSchema, older, WEIGHT));
        }
      }
      Dataset<Row> all = weighted.get(0);
      for (int i = 1; i < weighted.size(); i++) {
        all = all.union(weighted.get(i));
      }
      Dataset<Row> consolidated = byLineage ? byVersion(all, readSchema) : byValue(all, columns);
      // Eager: the staged scans are planned and read now, so they can be released below, and the
      // caller can read the Z-set as often as it needs without reading the table again.
      return consolidated.localCheckpoint(true);
    } catch (RuntimeException e) {
      failure = e;
      throw e;
    } finally {
      release(scans, failure);
    }
  }

  /**
   * Why a Z-set captured by row lineage does not identify its rows: a changed row without a row id
   * (written before the table's upgrade to format 3), or a version counted more than once, which a
   * table whose writers keep row lineage never holds.
   */
  private static Optional<String> untracedVersions(Dataset<Row> zset, String sparkName) {
    Row counts =
        zset.agg(
                functions.count(functions.when(functions.col(ROW_ID).isNull(), 1)),
                functions.count(functions.when(functions.abs(functions.col(WEIGHT)).gt(1L), 1)))
            .head();
    if (counts.getLong(0) > 0) {
      return Optional.of(
          counts.getLong(0) + " changed row(s) of " + sparkName + " have no row id (written before the table's upgrade"
              + " to format version 3), so they cannot be matched by row lineage");
    }
    if (counts.getLong(1) > 0) {
      return Optional.of(
          counts.getLong(1) + " row version(s) of " + sparkName + " are live more than once, so rows cannot be matched"
              + " by row lineage");
    }
    return Optional.empty();
  }

  /** The weights summed per row of the columns read. */
  private static Dataset<Row> byValue(Dataset<Row> weighted, List<Column> columns) {
    return weighted.groupBy(columns.toArray(Column[]::new))
        .agg(functions.sum(WEIGHT).as(WEIGHT))
        .where(functions.col(WEIGHT).notEqual(0L));
  }

  /**
   * The weights summed per row version (row id and sequence number), each version with the values
   * its newer side read: the older side holds none.
   */
  private static Dataset<Row> byVersion(Dataset<Row> weighted, StructType readSchema) {
    List<Column> values = new ArrayList<>();
    List<Column> unpacked = new ArrayList<>();
    for (StructField field : readSchema.fields()) {
      if (!isLineage(field.name())) {
        values.add(functions.col(quoted(field.name())));
        unpacked.add(functions.col("__floe_values." + quoted(field.name())).as(field.name()));
      }
    }
    // Never empty: a capture reads at least one column of the table.
    Column newer = functions.when(functions.col(WEIGHT).gt(0L), functions.struct(values.toArray(Column[]::new)));
    unpacked.add(functions.col(ROW_ID));
    unpacked.add(functions.col(ROW_SEQUENCE));
    unpacked.add(functions.col(WEIGHT));
    return weighted.groupBy(functions.col(ROW_ID), functions.col(ROW_SEQUENCE))
        .agg(functions.sum(WEIGHT).as(WEIGHT), functions.first(newer, true).as("__floe_values"))
        .where(functions.col(WEIGHT).notEqual(0L))
        .select(unpacked.toArray(Column[]::new));
  }

  private static boolean isLineage(String column) {
    return column.equals(ROW_ID) || column.equals(ROW_SEQUENCE);
  }

  /**
   * Closes every scan. A failure to close is added to the read's failure, if any, so it does not
   * hide it, and thrown otherwise.
   */
  private static void release(List<StagedScan> scans, RuntimeException readFailure) {
    RuntimeException closeFailure = null;
    for (StagedScan scan : scans) {
      try {
        scan.close();
      } catch (RuntimeException e) {
        if (readFailure != null) {
          readFailure.addSuppressed(e);
        } else if (closeFailure == null) {
          closeFailure = e;
        } else {
          closeFailure.addSuppressed(e);
        }
      }
    }
    if (closeFailure != null) {
      throw closeFailure;
    }
  }

  /** The columns of {@code sparkSchema} this capture reads, in the table's order. */
  private StructType readSchema(StructType sparkSchema) {
    StructType data = dataSchema(sparkSchema);
    return byLineage ? withLineage(data) : data;
  }

  private static StructType withLineage(StructType schema) {
    return schema.add(ROW_ID, DataTypes.LongType, true).add(ROW_SEQUENCE, DataTypes.LongType, true);
  }

  private StructType dataSchema(StructType sparkSchema) {
    if (columns.isEmpty()) {
      return sparkSchema;
    }
    List<StructField> kept = new ArrayList<>();
    for (StructField field : sparkSchema.fields()) {
      if (columns.get().contains(field.name().toLowerCase(java.util.Locale.ROOT))) {
        kept.add(field);
      }
    }
    if (kept.isEmpty()) {
      kept.add(sparkSchema.fields()[0]);
    }
    return new StructType(kept.toArray(StructField[]::new));
  }

  /**
   * Why this capture cannot read a change of {@code table} up to {@code toSnapshot}, whatever the
   * change: a column it reads cannot be compared. Reads table metadata only, for {@code EXPLAIN
   * REFRESH}.
   */
  public Optional<String> incomparableColumn(Table table, String sparkName, long toSnapshot) {
    return incomparableColumn(readSchema(SparkSchemaUtil.convert(SnapshotUtil.schemaFor(table, toSnapshot))), sparkName);
  }

  /** Consolidation groups by every column; Spark cannot group maps (or variants). */
  private static Optional<String> incomparableColumn(StructType sparkSchema, String sparkName) {
    for (StructField field : sparkSchema.fields()) {
      Optional<DataType> incomparable = incomparableType(field.dataType());
      if (incomparable.isPresent()) {
        return Optional.of(
            "column " + field.name() + " of " + sparkName + " is of type " + incomparable.get().typeName()
                + ", which cannot be compared to match a change's rows");
      }
    }
    return Optional.empty();
  }

  private static Optional<DataType> incomparableType(DataType type) {
    if (type instanceof MapType || type instanceof VariantType) {
      return Optional.of(type);
    }
    if (type instanceof ArrayType array) {
      return incomparableType(array.elementType());
    }
    if (type instanceof StructType struct) {
      for (StructField field : struct.fields()) {
        Optional<DataType> nested = incomparableType(field.dataType());
        if (nested.isPresent()) {
          return nested;
        }
      }
    }
    return Optional.empty();
  }

  private static String quoted(String name) {
    return "`" + name.replace("`", "``") + "`";
  }
}
