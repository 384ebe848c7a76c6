package io.floe.spark.ingest;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import io.floe.ErrorMessages;
import io.floe.FloeException;
import io.floe.sql.FileSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Reads a batch of new files into Bronze rows: every field typed (the table's types where they hold, inferred
 * ones for new fields), plus the file, the line and, for a record that does not parse or a value that does not fit
 * its column, the raw record as text in {@value StreamingTable#RESCUED_DATA}. No record is dropped.
 *
 * <p>JSON lines and CSV files are read whole and split into lines, so each record knows its line number; a CSV
 * record must therefore sit on one line. A CSV file's first line is its header; files with different headers are
 * parsed separately and matched by column name.
 */
final class RawRecords {
  private static final String LINE_TEXT = "__floe_line";

  /** The rows of a batch and what its schema did to the table's. */
  record Batch(Dataset<Row> rows, SchemaDrift drift) {}

  private final SparkSession spark;
  private final String table;
  private final FileSource source;
  private final List<Dataset<Row>> cached = new ArrayList<>();

  RawRecords(SparkSession spark, String table, FileSource source) {
    this.spark = spark;
    this.table = table;
    this.source = source;
  }

  /** Reads {@code files} (none empty) against the table's data columns {@code tableSchema}. */
  Batch read(List<SourceFile> files, StructType tableSchema) {
    String[] paths = files.stream().map(SourceFile::path).map(RawRecords::literalPath).toArray(String[]::new);
    String format =
        source.format().orElseThrow(() -> new IllegalStateException("The format of " + table + "'s files is not decided"));
    switch (format) {
      case "json":
        return readJson(paths, tableSchema);
      case "csv":
        return readCsv(paths, tableSchema);
      case "parquet":
        return readParquet(files, paths, tableSchema);
      default:
        throw new FloeException("Cannot ingest into " + table + ": unsupported format " + format);
    }
  }

  /**
   * A listed file's path as Spark's readers take it: they expand glob patterns, so a name's own
   * {@code * ? [ ] { } \\} are escaped to mean themselves.
   */
  private static String literalPath(String path) {
    return path.replaceAll("([*?\\[\\]{}\\\\])", "\\\\$1");
  }

  /**
   * The file a row was read from, spelled as the listing spells it ({@link FileLog#normalize}):
   * Spark gives the file's URI, whose {@code %XX} escapes are decoded here ({@code +} is no
   * escape in a URI, so it is kept).
   */
  private static Column sourceFile() {
    return functions.url_decode(functions.replace(col("_metadata.file_path"), lit("+"), lit("%2B")))
        .as(StreamingTable.SOURCE_FILE);
  }

  /** The files' lines with their file and 1-based number; blank lines are skipped. */
  private Dataset<Row> lines(String[] paths) {
    return spark.read()
        .option("wholetext", "true")
        .text(paths)
        .select(col("value"), sourceFile())
        .selectExpr(StreamingTable.SOURCE_FILE, "posexplode(split(value, '\\r?\\n')) AS (__floe_pos, " + LINE_TEXT + ")")
        .withColumn(StreamingTable.SOURCE_LINE, col("__floe_pos").plus(1).cast(DataTypes.LongType))
        .drop("__floe_pos");
  }

  private Batch readJson(String[] paths, StructType tableSchema) {
    Dataset<Row> lines = lines(paths).filter(functions.trim(col(LINE_TEXT)).notEqual(""));
    cached.add(lines.persist());
    Map<String, String> options = new HashMap<>(source.options());
    options.put("mode", "PERMISSIVE");
    options.put("columnNameOfCorruptRecord", StreamingTable.RESCUED_DATA);
    StructType inferred = spark.read().options(options).json(lines.select(LINE_TEXT).as(Encoders.STRING())).schema();
    SchemaDrift drift = new SchemaDrift(tableSchema, inferred);
    StructType parseSchema = drift.readSchema().add(StreamingTable.RESCUED_DATA, DataTypes.StringType, true);
    Dataset<Row> rows =
        lines.select(
            col(StreamingTable.SOURCE_FILE),
            col(StreamingTable.SOURCE_LINE),
            functions.from_json(col(LINE_TEXT), parseSchema, options).as("__floe_record"));
    return new Batch(rows.select(expand(parseSchema)), drift);
  }

  private Batch readCsv(String[] paths, StructType tableSchema) {
    Dataset<Row> lines = lines(paths);
    cached.add(lines.persist());
    Dataset<Row> headers =
        lines.filter(col(StreamingTable.SOURCE_LINE).equalTo(1))
            .select(col(StreamingTable.SOURCE_FILE).as("__floe_header_file"), col(LINE_TEXT).as("__floe_header"));
    Dataset<Row> records =
        lines.filter(col(StreamingTable.SOURCE_LINE).gt(1).and(functions.trim(col(LINE_TEXT)).notEqual("")))
            .join(headers, col(StreamingTable.SOURCE_FILE).equalTo(col("__floe_header_file")));
    Map<String, String> options = new HashMap<>(source.options());
    options.put("mode", "PERMISSIVE");
    options.put("columnNameOfCorruptRecord", StreamingTable.RESCUED_DATA);
    List<String> distinctHeaders = new ArrayList<>();
    headers.select("__floe_header").distinct().collectAsList().forEach(r -> distinctHeaders.add(r.getString(0)));
    distinctHeaders.sort(null);
    // Infer one schema over all header groups, so a column's type does not depend on the group it is in.
    StructType inferredAll = new StructType();
    Map<String, StructType> groupSchemas = new LinkedHashMap<>();
    for (String header : distinctHeaders) {
      Dataset<String> group =
          spark.createDataset(List.of(header), Encoders.STRING())
              .union(records.filter(col("__floe_header").equalTo(header)).select(LINE_TEXT).as(Encoders.STRING()));
      StructType inferred =
          spark.read().options(source.options()).option("header", "true").option("inferSchema", "true").csv(group).schema();
      groupSchemas.put(header, inferred);
      for (StructField field : inferred.fields()) {
        if (Arrays.stream(inferredAll.fieldNames()).noneMatch(field.name()::equalsIgnoreCase)) {
          inferredAll = inferredAll.add(field);
        }
      }
    }
    SchemaDrift drift = new SchemaDrift(tableSchema, inferredAll);
    Map<String, StructField> readTypes = new HashMap<>();
    for (StructField field : drift.readSchema().fields()) {
      readTypes.put(field.name().toLowerCase(Locale.ROOT), field);
    }
    Dataset<Row> all = null;
    for (Map.Entry<String, StructType> group : groupSchemas.entrySet()) {
      List<StructField> fields = new ArrayList<>();
      for (StructField field : group.getValue().fields()) {
        StructField typed = readTypes.get(field.name().toLowerCase(Locale.ROOT));
        fields.add(typed != null ? typed : DataTypes.createStructField(field.name(), DataTypes.StringType, true));
      }
      fields.add(DataTypes.createStructField(StreamingTable.RESCUED_DATA, DataTypes.StringType, true));
      StructType parseSchema = new StructType(fields.toArray(new StructField[0]));
      Dataset<Row> parsed =
          records.filter(col("__floe_header").equalTo(group.getKey()))
              .select(
                  col(StreamingTable.SOURCE_FILE),
                  col(StreamingTable.SOURCE_LINE),
                  functions.from_csv(col(LINE_TEXT), lit(parseSchema.toDDL()), options).as("__floe_record"))
              .select(expand(parseSchema));
      all = all == null ? parsed : all.unionByName(parsed, true);
    }
    if (all == null) {
      StructType empty = drift.readSchema().add(StreamingTable.RESCUED_DATA, DataTypes.StringType, true);
      all = spark.createDataFrame(List.of(), empty.add(StreamingTable.SOURCE_FILE, DataTypes.StringType).add(StreamingTable.SOURCE_LINE, DataTypes.LongType));
    }
    return new Batch(all, drift);
  }

  private Batch readParquet(List<SourceFile> listed, String[] paths, StructType tableSchema) {
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    for (SourceFile file : listed) {
      checkParquetMagic(file.path(), conf);
    }
    Dataset<Row> files;
    try {
      files = spark.read().options(source.options()).option("mergeSchema", "true").parquet(paths);
    } catch (Exception e) { // AnalysisException is thrown undeclared
      throw new FloeException(
          "Cannot ingest into " + table + ": cannot read the Parquet files' schemas: " + ErrorMessages.firstLineOf(e), e);
    }
    SchemaDrift drift = new SchemaDrift(tableSchema, files.schema());
    List<Column> columns = new ArrayList<>();
    List<Column> rescued = new ArrayList<>();
    for (StructField field : drift.readSchema().fields()) {
      String inFile = Arrays.stream(files.schema().fieldNames()).filter(field.name()::equalsIgnoreCase).findFirst().orElseThrow();
      boolean conflict = drift.conflicts().stream().anyMatch(c -> c.field().equals(field.name()));
      Column value = col("`" + inFile + "`");
      if (conflict) {
        columns.add(value.try_cast(field.dataType()).as(field.name()));
        rescued.add(functions.when(value.isNotNull().and(value.try_cast(field.dataType()).isNull()),
            functions.to_json(functions.struct(value.as(inFile)))));
      } else {
        columns.add(value.cast(field.dataType()).as(field.name()));
      }
    }
    columns.add(sourceFile());
    columns.add(col("_metadata.row_index").plus(1).cast(DataTypes.LongType).as(StreamingTable.SOURCE_LINE));
    columns.add(
        rescued.isEmpty()
            ? lit(null).cast(DataTypes.StringType).as(StreamingTable.RESCUED_DATA)
            : functions.coalesce(rescued.toArray(new Column[0])).as(StreamingTable.RESCUED_DATA));
    return new Batch(files.select(columns.toArray(new Column[0])), drift);
  }

  /** Frees what reading the batch cached; call after the batch is written. */
  void release() {
    cached.forEach(Dataset::unpersist);
    cached.clear();
  }

  /** Binary garbage named {@code .parquet} gets a message naming the file instead of a reader stack trace. */
  private void checkParquetMagic(String path, Configuration conf) {
    Path file = new Path(path);
    try {
      FileSystem fs = file.getFileSystem(conf);
      long length = fs.getFileStatus(file).getLen();
      byte[] head = new byte[4];
      byte[] tail = new byte[4];
      if (length >= 12) {
        try (FSDataInputStream in = fs.open(file)) {
          in.readFully(0, head);
          in.readFully(length - 4, tail);
        }
      }
      if (length < 12 || !"PAR1".equals(new String(head, StandardCharsets.ISO_8859_1))
          || !"PAR1".equals(new String(tail, StandardCharsets.ISO_8859_1))) {
        throw new FloeException(
            "Cannot ingest into " + table + ": file " + path + " is not a Parquet file (no PAR1 header and footer); "
                + "move it out of " + source.path() + " or fix it, then run again");
      }
    } catch (IOException e) {
      throw new FloeException("Cannot ingest into " + table + ": cannot read file " + path + ": " + e.getMessage(), e);
    }
  }

  private static Column[] expand(StructType parseSchema) {
    List<Column> columns = new ArrayList<>();
    for (String name : parseSchema.fieldNames()) {
      columns.add(col("__floe_record").getField(name).as(name));
    }
    columns.add(col(StreamingTable.SOURCE_FILE));
    columns.add(col(StreamingTable.SOURCE_LINE));
    return columns.toArray(new Column[0]);
  }
}
