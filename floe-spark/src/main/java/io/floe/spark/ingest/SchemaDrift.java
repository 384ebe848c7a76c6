package io.floe.spark.ingest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * How a batch's inferred schema meets the table's: fields the table lacks become new nullable columns
 * (also inside struct columns, their arrays' elements and their maps' values), a narrower table type
 * Iceberg can promote (int to long, float to double, a wider decimal) is widened, at any depth, and any
 * other difference is a conflict: the column keeps its type and the values that do not fit go to
 * {@value StreamingTable#RESCUED_DATA} as text.
 */
final class SchemaDrift {
  /** A field whose values in the batch do not fit the table's column type. */
  record Conflict(String field, DataType columnType, DataType fileType) {}

  /** A field the batch has and a struct column lacks: {@code parent} is the struct's Iceberg path. */
  record NestedField(String parent, StructField field) {
    String path() {
      return parent + "." + field.name();
    }
  }

  private final StructType readSchema;
  private final List<StructField> added = new ArrayList<>();
  private final List<NestedField> nestedAdded = new ArrayList<>();
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
        continue;
      }
      List<NestedField> adds = new ArrayList<>();
      Map<String, DataType> widens = new LinkedHashMap<>();
      DataType merged = merge(column.name(), column.dataType(), field.dataType(), adds, widens);
      if (merged == null) {
        conflicts.add(new Conflict(column.name(), column.dataType(), field.dataType()));
        read.add(column);
      } else {
        nestedAdded.addAll(adds);
        widened.putAll(widens);
        read.add(merged.equals(column.dataType()) ? column : DataTypes.createStructField(column.name(), merged, true));
      }
    }
    this.readSchema = new StructType(read.toArray(new StructField[0]));
  }

  /**
   * The type a column of type {@code column} at {@code path} takes to hold the batch's {@code file}
   * values, collecting the nested fields to add and the promotions; null when they conflict.
   */
  private static DataType merge(
      String path, DataType column, DataType file, List<NestedField> adds, Map<String, DataType> widens) {
    if (column.equals(file) || column.equals(DataTypes.StringType) || promotable(file, column)) {
      return column;
    }
    if (promotable(column, file)) {
      widens.put(path, file);
      return file;
    }
    if (column instanceof StructType table && file instanceof StructType batch) {
      Map<String, StructField> fileFields = new LinkedHashMap<>();
      for (StructField field : batch.fields()) {
        fileFields.put(field.name().toLowerCase(Locale.ROOT), field);
      }
      List<StructField> fields = new ArrayList<>();
      for (StructField field : table.fields()) {
        StructField other = fileFields.remove(field.name().toLowerCase(Locale.ROOT));
        DataType type = other == null ? field.dataType() : merge(path + "." + field.name(), field.dataType(), other.dataType(), adds, widens);
        if (type == null) {
          return null;
        }
        fields.add(DataTypes.createStructField(field.name(), type, true, field.metadata()));
      }
      for (StructField field : fileFields.values()) {
        StructField nullable = DataTypes.createStructField(field.name(), field.dataType(), true);
        adds.add(new NestedField(path, nullable));
        fields.add(nullable);
      }
      return new StructType(fields.toArray(new StructField[0]));
    }
    if (column instanceof ArrayType table && file instanceof ArrayType batch) {
      DataType element = merge(path + ".element", table.elementType(), batch.elementType(), adds, widens);
      return element == null ? null : DataTypes.createArrayType(element, true);
    }
    if (column instanceof MapType table && file instanceof MapType batch && table.keyType().equals(batch.keyType())) {
      // Iceberg cannot change a map's keys; its values may evolve.
      DataType value = merge(path + ".value", table.valueType(), batch.valueType(), adds, widens);
      return value == null ? null : DataTypes.createMapType(table.keyType(), value, true);
    }
    return null;
  }

  /** The schema to parse the batch with: the table's types where they hold, the inferred ones for new fields. */
  StructType readSchema() {
    return readSchema;
  }

  List<StructField> added() {
    return added;
  }

  /** Fields to add inside struct columns, parents first. */
  List<NestedField> nestedAdded() {
    return nestedAdded;
  }

  /** Columns and nested fields to promote, by Iceberg path. */
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
