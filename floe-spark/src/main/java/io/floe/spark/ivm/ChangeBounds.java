package io.floe.spark.ivm;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.unix_date;
import static org.apache.spark.sql.functions.unix_micros;
import static org.apache.spark.sql.functions.when;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FindFiles;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.util.DateTimeUtil;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Literal$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegralType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The range of each column's values in a change, written as a condition on the storage rows a
 * MERGE matches on those columns with {@code <=>}: a stored row outside a column's range, or NULL
 * there when the change has no NULL, cannot match. The condition is implied by the match, so it
 * changes which storage files a MERGE reads, never its result: Iceberg skips the files whose column
 * bounds lie outside it. That is what makes a change of recent rows (new trips, late corrections)
 * read only the few storage files holding them when the storage is clustered by such a column.
 * A condition that leaves out no file, as the storage's manifests tell, is not given at all.
 *
 * <p>Only types whose order Spark and Iceberg's file bounds agree on are used: integers, decimals,
 * dates, timestamps, and strings whose bounds are ASCII (Java's UTF-16 order and UTF-8's byte
 * order differ only above it). Floating point (NaN) and collated strings are left out.
 */
final class ChangeBounds {
  private final List<String> columns;
  private final List<DataType> types;

  private ChangeBounds(List<String> columns, List<DataType> types) {
    this.columns = columns;
    this.types = types;
  }

  /** The bounds of the {@code matched} columns of {@code change} that files can be pruned on. */
  static ChangeBounds of(Dataset<Row> change, List<String> matched) {
    List<String> columns = new ArrayList<>();
    List<DataType> types = new ArrayList<>();
    for (StructField field : change.schema().fields()) {
      if (matched.contains(field.name()) && prunable(field.dataType())) {
        columns.add(field.name());
        types.add(field.dataType());
      }
    }
    return new ChangeBounds(columns, types);
  }

  static boolean prunable(DataType type) {
    return type instanceof IntegralType
        || type instanceof DecimalType
        || type instanceof DateType
        || type instanceof TimestampType
        || type instanceof TimestampNTZType
        || type.equals(DataTypes.StringType);
  }

  /**
   * Three aggregates per column (least value, greatest value, whether any is NULL). Dates and
   * timestamps are taken as their days and microseconds since the epoch: a {@code java.sql} value
   * of the collected row would go through the hybrid Julian calendar (shifting the days of October
   * 1582 it lacks), and a timestamp written as local text is ambiguous in the hour a clock falls
   * back; numbers are exact.
   */
  List<Column> aggregates() {
    List<Column> aggregates = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Column c = col(StorageLayout.quote(columns.get(i)));
      Column exact = exact(c, types.get(i));
      aggregates.add(min(exact));
      aggregates.add(max(exact));
      aggregates.add(max(when(c.isNull(), true).otherwise(false)));
    }
    return aggregates;
  }

  /**
   * Each column's value as {@link #aggregates()} takes it ({@link #exact}), to collect a few change
   * rows and find their bounds with {@link #aggregated} instead of a Spark aggregate.
   */
  List<Column> exactValues() {
    List<Column> values = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      values.add(exact(col(StorageLayout.quote(columns.get(i))), types.get(i)));
    }
    return values;
  }

  /**
   * What {@link #aggregates()} gives for the collected {@code rows}, which hold {@link
   * #exactValues()} from position {@code offset}: per column its least and greatest value (NULLs
   * skipped) and whether any is NULL, or three NULLs when there are no rows. Strings are compared as
   * Spark compares them, by their UTF-8 bytes.
   */
  List<Object> aggregated(List<Row> rows, int offset) {
    List<Object> aggregated = new ArrayList<>();
    for (int i = 0; i < columns.size(); i++) {
      Object least = null;
      Object greatest = null;
      Boolean nulls = rows.isEmpty() ? null : false;
      for (Row row : rows) {
        Object value = row.get(offset + i);
        if (value == null) {
          nulls = true;
        } else {
          if (least == null || compare(value, least) < 0) {
            least = value;
          }
          if (greatest == null || compare(value, greatest) > 0) {
            greatest = value;
          }
        }
      }
      aggregated.add(least);
      aggregated.add(greatest);
      aggregated.add(nulls);
    }
    return aggregated;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int compare(Object a, Object b) {
    if (a instanceof String x && b instanceof String y) {
      return UTF8String.fromString(x).compareTo(UTF8String.fromString(y));
    }
    return ((Comparable) a).compareTo(b);
  }

  /**
   * {@code value} in a form whose collected value is exact and is its Spark internal value: days
   * for a date, microseconds for a timestamp.
   */
  static Column exact(Column value, DataType type) {
    if (type instanceof DateType) {
      return unix_date(value);
    } else if (type instanceof TimestampType) {
      return unix_micros(value);
    }
    return value;
  }

  /**
   * The condition on {@code alias}'s columns from a row holding {@link #aggregates()} from position
   * {@code offset}, when it leaves out a data file of {@code storage} at {@code snapshot} by the
   * files' column bounds in its manifests; empty when no column bounds anything (no change rows,
   * or nothing prunable) or when every file is in the bounds (a change spread over the whole range
   * of a clustering column, say), where the condition would only make the MERGE read its columns
   * to drop no row.
   */
  Optional<String> condition(Row row, int offset, String alias, Table storage, Snapshot snapshot) {
    List<String> conditions = new ArrayList<>();
    Expression filter = Expressions.alwaysTrue();
    for (int i = 0; i < columns.size(); i++) {
      int at = offset + 3 * i;
      Object least = row.get(at);
      Object greatest = row.get(at + 1);
      if (row.isNullAt(at + 2)) {
        return Optional.empty(); // no change rows at all
      }
      boolean nulls = row.getBoolean(at + 2);
      String name = columns.get(i);
      String ref = alias + "." + StorageLayout.quote(name);
      if (least == null) {
        conditions.add(ref + " IS NULL");
        filter = Expressions.and(filter, Expressions.isNull(name));
      } else if (!(least instanceof String) || (ascii((String) least) && ascii((String) greatest))) {
        String range = ref + " >= " + literal(least, types.get(i)) + " AND " + ref + " <= " + literal(greatest, types.get(i));
        conditions.add(nulls ? "(" + range + " OR " + ref + " IS NULL)" : range);
        Expression inRange = Expressions.and(
            Expressions.greaterThanOrEqual(name, icebergValue(least)),
            Expressions.lessThanOrEqual(name, icebergValue(greatest)));
        filter = Expressions.and(filter, nulls ? Expressions.or(inRange, Expressions.isNull(name)) : inRange);
      }
    }
    if (conditions.isEmpty() || !excludesFiles(storage, snapshot, filter)) {
      return Optional.empty();
    }
    return Optional.of(String.join(" AND ", conditions));
  }

  /**
   * Whether {@code filter} leaves out any data file of {@code table} at {@code snapshot}. Only the
   * data manifests are read, in this thread: a scan plan would also load every delete file of the
   * storage and wait for Iceberg's worker pool, to answer a question about data files alone.
   */
  private static boolean excludesFiles(Table table, Snapshot snapshot, Expression filter) {
    long total = PropertyUtil.propertyAsLong(snapshot.summary(), SnapshotSummary.TOTAL_DATA_FILES_PROP, -1);
    if (total < 0) {
      return true; // a snapshot that does not count its files: keep the condition, always correct
    }
    long kept = 0;
    try (CloseableIterable<DataFile> files =
        FindFiles.in(table).inSnapshot(snapshot.snapshotId()).caseInsensitive().withRecordsMatching(filter).collect()) {
      for (DataFile ignored : files) {
        kept++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list the data files of " + table.name(), e);
    } catch (ValidationException e) {
      return true; // a column Iceberg resolves differently: keep the condition, always correct
    }
    return kept < total;
  }

  /**
   * A collected value of a {@link #prunable} type as Iceberg's expressions take it (dates and
   * timestamps already are days and microseconds, see {@link #aggregates}).
   */
  private static Object icebergValue(Object value) {
    if (value instanceof LocalDateTime timestamp) {
      return DateTimeUtil.microsFromTimestamp(timestamp);
    } else if (value instanceof Byte || value instanceof Short) {
      return ((Number) value).intValue();
    }
    return value; // Integer, Long, BigDecimal, String
  }

  private static boolean ascii(String value) {
    return value.chars().allMatch(c -> c < 0x80);
  }

  /** A collected value as SQL that gives it back exactly, whatever the session's time zone. */
  private static String literal(Object value, DataType type) {
    if (type instanceof DateType) {
      return "DATE_FROM_UNIX_DATE(" + value + ")";
    } else if (type instanceof TimestampType) {
      return "TIMESTAMP_MICROS(" + value + "L)";
    }
    return Literal$.MODULE$.create(value, type).sql();
  }
}
