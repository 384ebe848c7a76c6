package io.floe.spark.ingest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * How a batch's inferred schema meets the table's: fields the table lacks become new nullable columns, a
 * narrower table type Iceberg can promote (int to long, float to double, a wider decimal) is widened, and any
 * other difference is a conflict: the column keeps its type and the values that do not fit go to
 * {@value StreamingTable#RESCUED_DATA} as text.
 */
final class SchemaDrift {
  /** A field whose values in the batch do not fit the table's column type. */
  record Conflict(String field, DataType columnType, DataType fileType) {}

  private final StructType readSchema;
  private final List<StructField> added = new ArrayList<>();
  private final Map<String, DataType> widened = new LinkedHashMap<>();
  private final List<Conflict> conflicts = new ArrayList<>();

  /**
   * @param table the table's data columns (no metadata columns); empty for a new table
   * @param inferred the batch's inferred fields, in the order the reader must see them
   */
  SchemaDrift(StructType table, StructType inferred) {
    Map<String, StructField> existing = new LinkedHashMap<>();
    for (StructField field : table.fields()) {
      existing.put(field.name().toLowerCase(Locale.ROOT), field);
    }
    List<StructField> read = new ArrayList<>();
    for (StructField field : inferred.fields()) {
      if (StreamingTable.METADATA_COLUMNS.contains(field.name())) {
        continue;
      }
      StructField column = existing.get(field.name().toLowerCase(Locale.ROOT));
      if (column == null) {
        added.add(DataTypes.createStructField(field.name(), field.dataType(), true));
        read.add(DataTypes.createStructField(field.name(), field.dataType(), true));
      } else if (column.dataType().equals(field.dataType()) || column.dataType().equals(DataTypes.StringType)) {
        read.add(column);
      } else if (promotable(field.dataType(), column.dataType())) {
        read.add(DataTypes.createStructField(column.name(), column.dataType(), true));
      } else if (promotable(column.dataType(), field.dataType())) {
        widened.put(column.name(), field.dataType());
        read.add(DataTypes.createStructField(column.name(), field.dataType(), true));
      } else {
        conflicts.add(new Conflict(column.name(), column.dataType(), field.dataType()));
        read.add(column);
      }
    }
    this.readSchema = new StructType(read.toArray(new StructField[0]));
  }

  /** The schema to parse the batch with: the table's types where they hold, the inferred ones for new fields. */
  StructType readSchema() {
    return readSchema;
  }

  List<StructField> added() {
    return added;
  }

  Map<String, DataType> widened() {
    return widened;
  }

  List<Conflict> conflicts() {
    return conflicts;
  }

  /** Whether Iceberg can promote a column of type {@code from} to {@code to} in place. */
  static boolean promotable(DataType from, DataType to) {
    Type icebergFrom;
    Type icebergTo;
    try {
      icebergFrom = SparkSchemaUtil.convert(from);
      icebergTo = SparkSchemaUtil.convert(to);
    } catch (RuntimeException unsupported) {
      return false;
    }
    return icebergFrom.isPrimitiveType()
        && icebergTo.isPrimitiveType()
        && TypeUtil.isPromotionAllowed(icebergFrom, icebergTo.asPrimitiveType());
  }
}
