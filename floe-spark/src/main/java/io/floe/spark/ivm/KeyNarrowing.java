package io.floe.spark.ivm;

import io.floe.spark.refresh.Source;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.spark.source.SparkTable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import io.floe.spark.IntegralIn;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.TryEval;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Window;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.runtime.AbstractPartialFunction;

/**
 * Narrows the source reads of a keyed recomputation to the keys a change touches. A view row of a
 * {@link KeyedShape} depends on the source rows of its key alone, so the definition can read, of
 * each source column equal to a key column ({@link KeyedShape#keyReads}), the rows holding a
 * touched value only. The filter is put on the read itself: Iceberg skips the data files (and
 * partitions) whose column bounds hold none of the values, and the joins, windows and aggregates
 * above see the touched keys' rows instead of every row. The recomputation still keeps the view
 * rows of the touched keys alone, so a read left whole (a column of a type compared otherwise than
 * by value, a key spread over several classes) only costs more.
 *
 * <p>Up to {@value #MAX_LISTED_KEYS} touched keys, their values are listed in the filter, along
 * with their range; beyond that the filter is the range of each key column's values alone, which
 * still skips the files outside it (the recomputation keeps the touched keys' rows either way).
 */
public final class KeyNarrowing {
  /** Up to how many touched keys are listed in the reads' filters. */
  public static final int MAX_LISTED_KEYS = 50_000;

  /**
   * The values of one key column among the touched keys (Spark internal values): listed when there
   * are few enough touched keys, their range (null when every value is NULL), and whether NULL is
   * among them.
   */
  private record Values(DataType type, Optional<Set<Object>> listed, Object min, Object max, boolean withNull) {
    static Values of(DataType type, Set<Object> values, boolean withNull) {
      // A type not compared by value narrows no read, and need not be ordered (BINARY is not).
      if (!comparedByValue(type)) {
        return new Values(type, Optional.of(values), null, null, withNull);
      }
      return new Values(type, Optional.of(values), least(values, 1), least(values, -1), withNull);
    }
  }

  /** A source read of the narrowed plan: its table and the filter of its planned files, if any. */
  private record Read(SparkTable table, Optional<org.apache.iceberg.expressions.Expression> filter) {}

  private final LogicalPlan plan;
  private final List<Read> reads;

  private KeyNarrowing(LogicalPlan plan, List<Read> reads) {
    this.plan = plan;
    this.reads = List.copyOf(reads);
  }

  /** The values of the touched keys' columns, collected once for the reads of several plans. */
  record Touched(List<Values> columns) {
    /**
     * The values of {@code touched} (a row per touched key): listed up to {@value
     * #MAX_LISTED_KEYS} keys, their ranges alone beyond that; empty when there are none.
     */
    static Optional<Touched> of(Dataset<Row> keys) {
      StructType schema = keys.schema();
      Dataset<Row> touched = exact(keys);
      List<Row> rows = touched.limit(MAX_LISTED_KEYS + 1).collectAsList();
      if (rows.isEmpty()) {
        return Optional.empty();
      }
      List<Values> columns = new ArrayList<>();
      if (rows.size() <= MAX_LISTED_KEYS) {
        for (int c = 0; c < schema.size(); c++) {
          Set<Object> values = new LinkedHashSet<>();
          boolean withNull = false;
          for (Row row : rows) {
            if (row.isNullAt(c)) {
              withNull = true;
            } else {
              values.add(internal(row.get(c), schema.fields()[c].dataType()));
            }
          }
          columns.add(Values.of(schema.fields()[c].dataType(), values, withNull));
        }
        return Optional.of(new Touched(columns));
      }
      // Too many to list: one pass for each column's range and whether it holds NULL. A column of
      // a type not compared by value narrows no read, so it needs no range.
      List<Column> aggregates = new ArrayList<>();
      for (StructField field : schema.fields()) {
        Column value = touched.col(StorageLayout.quote(field.name()));
        boolean ranged = comparedByValue(field.dataType());
        aggregates.add(ranged ? functions.min(value) : functions.lit(null));
        aggregates.add(ranged ? functions.max(value) : functions.lit(null));
        aggregates.add(functions.bool_or(value.isNull()));
      }
      Row ranges = touched.agg(aggregates.get(0), aggregates.subList(1, aggregates.size()).toArray(new Column[0])).first();
      for (int c = 0; c < schema.size(); c++) {
        columns.add(
            new Values(
                schema.fields()[c].dataType(),
                Optional.empty(),
                internal(ranges.get(3 * c), schema.fields()[c].dataType()),
                internal(ranges.get(3 * c + 1), schema.fields()[c].dataType()),
                ranges.getBoolean(3 * c + 2)));
      }
      return Optional.of(new Touched(columns));
    }
  }

  /**
   * {@code keys} with its dates and timestamps as days and microseconds since the epoch, which are
   * their Spark internal values: collected as {@code java.sql} values they would go through the
   * hybrid Julian calendar and come back shifted when they fall in the days of October 1582 it
   * lacks.
   */
  private static Dataset<Row> exact(Dataset<Row> keys) {
    List<Column> columns = new ArrayList<>();
    for (StructField field : keys.schema().fields()) {
      columns.add(ChangeBounds.exact(keys.col(StorageLayout.quote(field.name())), field.dataType()).as(field.name()));
    }
    return keys.select(columns.toArray(new Column[0]));
  }

  /** A value collected from {@link #exact} as the Spark internal value of a column of {@code type}. */
  private static Object internal(Object value, DataType type) {
    if (value == null || type instanceof DateType || type instanceof TimestampType) {
      return value; // days (int) and microseconds (long) already
    }
    return CatalystTypeConverters.convertToCatalyst(value);
  }

  /**
   * {@code analyzed} (a definition of a keyed shape) with the reads of {@code key}'s columns
   * filtered to the values of {@code touched} (a row per touched key, its columns those of the
   * key, NULL matching NULL); empty when there are no touched keys or no read to narrow.
   */
  static Optional<KeyNarrowing> of(LogicalPlan analyzed, KeyedShape.Key key, Dataset<Row> touched) {
    if (KeyedShape.keyReads(analyzed, key).isEmpty() && KeyedShape.computedPartitions(analyzed, key).isEmpty()) {
      return Optional.empty();
    }
    return Touched.of(touched).flatMap(t -> of(analyzed, key, t));
  }

  /**
   * A key computed by an expression ({@code PARTITION BY upper(trim(id))}) narrows no read: no
   * file bounds hold the expression's values. The windows partitioned by it are given the rows of
   * the touched values alone instead, so a window sorts and numbers the rows of a few partitions,
   * not of every row the definition reads.
   */
  private static Optional<KeyNarrowing> ofComputed(LogicalPlan analyzed, KeyedShape.Key key, Touched touched) {
    Map<ExprId, Integer> partitions = KeyedShape.computedPartitions(analyzed, key);
    List<Values> columns = touched.columns();
    boolean[] narrowed = {false};
    LogicalPlan plan =
        analyzed.transformUpWithSubqueries(
            new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
              @Override
              public boolean isDefinedAt(LogicalPlan node) {
                return node instanceof Window;
              }

              @Override
              public LogicalPlan apply(LogicalPlan node) {
                Window window = (Window) node;
                Expression condition = null;
                for (Expression partition : io.floe.spark.Scala.list(window.partitionSpec())) {
                  Integer c = partition instanceof Attribute ? partitions.get(((Attribute) partition).exprId()) : null;
                  if (c == null || !comparedByValue(partition.dataType()) || !partition.dataType().equals(columns.get(c).type())) {
                    continue;
                  }
                  Expression matches = matches((Attribute) partition, columns.get(c));
                  condition = condition == null ? matches : new And(condition, matches);
                }
                if (condition == null) {
                  return window;
                }
                narrowed[0] = true;
                // Spark may run the filter ahead of the definition's own (it pushes it down through
                // the projection computing the partition), on rows those drop, where the expression
                // may fail (a CAST under ANSI mode). A row it fails on never reaches the window, so
                // the filter drops it: NULL, as try_ functions give.
                condition = new TryEval(condition);
                return window.withNewChildren(io.floe.spark.Scala.<LogicalPlan>seq(List.of(new Filter(condition, window.child()))));
              }
            });
    // No read is filtered: each source counts as read whole (rowsRead).
    return narrowed[0] ? Optional.of(new KeyNarrowing(plan, List.of())) : Optional.empty();
  }

  /** {@link #of(LogicalPlan, KeyedShape.Key, Dataset)} with the touched keys collected. */
  static Optional<KeyNarrowing> of(LogicalPlan analyzed, KeyedShape.Key key, Touched touched) {
    if (key.computed()) {
      return ofComputed(analyzed, key, touched);
    }
    Map<ExprId, Integer> keyReads = KeyedShape.keyReads(analyzed, key);
    if (keyReads.isEmpty()) {
      return Optional.empty();
    }
    List<Values> columns = touched.columns();
    List<Read> reads = new ArrayList<>();
    boolean[] narrowed = {false};
    LogicalPlan plan =
        analyzed.transformUpWithSubqueries(
            new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
              @Override
              public boolean isDefinedAt(LogicalPlan node) {
                return node instanceof DataSourceV2Relation && ((DataSourceV2Relation) node).table() instanceof SparkTable;
              }

              @Override
              public LogicalPlan apply(LogicalPlan node) {
                DataSourceV2Relation relation = (DataSourceV2Relation) node;
                Expression condition = null;
                org.apache.iceberg.expressions.Expression filter = Expressions.alwaysTrue();
                for (Attribute attribute : io.floe.spark.Scala.list(relation.output())) {
                  Integer c = keyReads.get(attribute.exprId());
                  if (c == null || !comparedByValue(attribute.dataType()) || !attribute.dataType().equals(columns.get(c).type())) {
                    continue;
                  }
                  Values values = columns.get(c);
                  condition = condition == null ? matches(attribute, values) : new And(condition, matches(attribute, values));
                  filter = Expressions.and(filter, icebergMatches(attribute.name(), values));
                }
                reads.add(new Read((SparkTable) relation.table(), Optional.ofNullable(condition == null ? null : filter)));
                if (condition == null) {
                  return relation;
                }
                narrowed[0] = true;
                return new Filter(condition, relation);
              }
            });
    return narrowed[0] ? Optional.of(new KeyNarrowing(plan, reads)) : Optional.empty();
  }

  /**
   * Whether {@link #of} can narrow a read of {@code analyzed} to values of the view columns at
   * {@code keyPositions} (one key column each): whether some source column equal to one of them in
   * every row has a type compared by value.
   */
  public static boolean narrows(LogicalPlan analyzed, List<Integer> keyPositions) {
    Map<ExprId, Integer> keyReads = KeyedShape.keyReads(analyzed, KeyedShape.Key.ofPositions(keyPositions));
    boolean[] found = {false};
    analyzed.foreachWithSubqueries(
        node -> {
          if (node instanceof DataSourceV2Relation && ((DataSourceV2Relation) node).table() instanceof SparkTable) {
            for (Attribute attribute : io.floe.spark.Scala.list(node.output())) {
              found[0] |= keyReads.containsKey(attribute.exprId()) && comparedByValue(attribute.dataType());
            }
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
    return found[0];
  }

  /** The definition with its key reads filtered. */
  LogicalPlan plan() {
    return plan;
  }

  /**
   * Rows in the data files the narrowed plan reads from {@code source}: those of the files its
   * filtered reads plan (each file once), or all of the source's when a read of it is whole.
   */
  long rowsRead(Source source) {
    String uuid = source.table().uuid().toString();
    Map<String, Long> files = new HashMap<>();
    boolean read = false;
    for (Read r : reads) {
      if (!r.table().table().uuid().toString().equals(uuid)) {
        continue;
      }
      read = true;
      if (r.filter().isEmpty()) {
        return source.totalRecords();
      }
      TableScan scan = r.table().table().newScan().filter(r.filter().get());
      if (r.table().snapshotId() != null) {
        scan = scan.useSnapshot(r.table().snapshotId());
      } else if (r.table().branch() != null) {
        scan = scan.useRef(r.table().branch());
      }
      try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
        tasks.forEach(task -> files.put(task.file().location(), task.file().recordCount()));
      } catch (IOException e) {
        throw new UncheckedIOException("could not plan the narrowed read of " + source.name(), e);
      }
    }
    return read ? files.values().stream().mapToLong(Long::longValue).sum() : source.totalRecords();
  }

  /**
   * Types whose equality is equality of value, as both Spark and Iceberg's file bounds see it
   * (floating point is not: NaN and -0.0).
   */
  private static boolean comparedByValue(DataType type) {
    return type.equals(DataTypes.StringType)
        || type instanceof IntegerType
        || type instanceof LongType
        || type instanceof ShortType
        || type instanceof ByteType
        || type instanceof DateType
        || type instanceof TimestampType
        || type instanceof TimestampNTZType
        || type instanceof DecimalType
        || type instanceof BooleanType;
  }

  /**
   * The values, and their range as well: Iceberg prunes files by an IN of up to 200 values only,
   * and by a range always.
   */
  private static Expression matches(Attribute attribute, Values values) {
    return matches(attribute, attribute.dataType(), values);
  }

  /** {@link #matches(Attribute, Values)} of an expression of {@code type}, resolved or not. */
  private static Expression matches(Expression column, DataType type, Values values) {
    Expression in;
    if (values.min() == null) {
      in = Literal.create(false, DataTypes.BooleanType);
    } else {
      in =
          new And(
              new GreaterThanOrEqual(column, new Literal(values.min(), type)),
              new LessThanOrEqual(column, new Literal(values.max(), type)));
      if (values.listed().isPresent()) {
        in = new And(listed(column, type, values.listed().get()), in);
      }
    }
    return values.withNull() ? new Or(in, new IsNull(column)) : in;
  }

  /**
   * The test that {@code column} holds one of {@code values}: Catalyst's {@code InSet}, which a scan
   * pushes down (a Parquet dictionary can skip row groups by it), after the cheaper {@link
   * IntegralIn} for more integral values than Iceberg prunes files by. Spark keeps a test it cannot
   * push down before those it can, so a stored row the change does not touch is turned down by the
   * cheaper one.
   */
  private static Expression listed(Expression column, DataType type, Set<Object> values) {
    Expression in = new InSet(column, io.floe.spark.Scala.set(values));
    return IntegralIn.tests(type) && values.size() > IntegralIn.PRUNING_LIMIT
        ? new And(IntegralIn.of(column, values), in)
        : in;
  }

  /**
   * A condition that {@code column}, an expression of {@code type} (resolved or not), holds one of
   * the values of column {@code c} of {@code touched}: listed, and their range, as on the narrowed
   * reads. Empty for a type whose equality is not equality of value, or whose values are of
   * another type.
   */
  static Optional<Expression> holdsTouched(Expression column, DataType type, Touched touched, int c) {
    Values values = touched.columns().get(c);
    if (!comparedByValue(type) || !type.equals(values.type())) {
      return Optional.empty();
    }
    return Optional.of(matches(column, type, values));
  }

  private static org.apache.iceberg.expressions.Expression icebergMatches(String column, Values values) {
    org.apache.iceberg.expressions.Expression in;
    if (values.min() == null) {
      in = Expressions.alwaysFalse();
    } else {
      in =
          Expressions.and(
              Expressions.greaterThanOrEqual(column, icebergValue(values.min())),
              Expressions.lessThanOrEqual(column, icebergValue(values.max())));
      if (values.listed().isPresent()) {
        List<Object> literals = new ArrayList<>();
        values.listed().get().forEach(v -> literals.add(icebergValue(v)));
        in = Expressions.and(Expressions.in(column, literals), in);
      }
    }
    return values.withNull() ? Expressions.or(in, Expressions.isNull(column)) : in;
  }

  /**
   * The smallest of Spark internal values of one type ({@code sign} 1), or the largest (-1); null
   * when there are none.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Object least(Set<Object> values, int sign) {
    Object best = null;
    for (Object value : values) {
      if (best == null || sign * ((Comparable) value).compareTo(best) < 0) {
        best = value;
      }
    }
    return best;
  }

  /** A Spark internal value as Iceberg takes it: dates as days and timestamps as microseconds already are. */
  private static Object icebergValue(Object value) {
    if (value instanceof UTF8String) {
      return value.toString();
    }
    if (value instanceof Decimal) {
      return ((Decimal) value).toJavaBigDecimal();
    }
    if (value instanceof Byte || value instanceof Short) {
      return ((Number) value).intValue();
    }
    return value;
  }
}
