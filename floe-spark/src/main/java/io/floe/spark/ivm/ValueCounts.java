package io.floe.spark.ivm;

import io.floe.spark.FieldsExpression;
import io.floe.spark.Scala;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.catalyst.util.TypeUtils;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The value counts a COUNT(DISTINCT x) column keeps per group ({@link DistinctState}), packed in
 * one {@code BINARY} value: every value of x in the group with its number of source rows, sorted
 * by the value's bytes.
 *
 * <p>Layout: a format byte ({@value #FORMAT}), the number of entries (4 bytes, big-endian), then
 * each entry as the length of the value's bytes (unsigned varint), those bytes, and the count
 * (zigzag varint: a change to merge holds negative counts). A value's bytes are its Spark internal
 * form: the UTF-8 of a string, the big-endian bits of a number, date, time or interval, the
 * unscaled digits of a decimal; two values are equal exactly when their bytes are, which holds for
 * the types {@link #keeps} accepts.
 *
 * <p>A group's counts are read, merged and written as one value, so a refresh that touches a group
 * of a million distinct values costs about a copy of its bytes: merging a small sorted change into
 * it copies the runs of entries between changed values whole. Kept as a Parquet map instead, every
 * entry was a repeated field to decode, hash and encode, and that was most of an incremental
 * refresh of a view with COUNT(DISTINCT) over a large table.
 */
public final class ValueCounts {
  /** The format byte the packed counts start with. */
  static final byte FORMAT = 1;

  private static final int HEADER = 5;

  private ValueCounts() {}

  /**
   * Whether values of this type can be kept packed: atomic types whose equality is that of their
   * internal form. Not binary values (Spark compares arrays by reference), not strings of a
   * collation that is not binary (where 'a' and 'A' may be one value), not types without an
   * encoding here.
   */
  static boolean keeps(DataType type) {
    return TypeUtils.typeWithProperEquals(type)
        && (type instanceof StringType
            || type instanceof BooleanType
            || type instanceof ByteType
            || type instanceof ShortType
            || type instanceof IntegerType
            || type instanceof DateType
            || type instanceof YearMonthIntervalType
            || type instanceof LongType
            || type instanceof TimestampType
            || type instanceof TimestampNTZType
            || type instanceof DayTimeIntervalType
            || type instanceof FloatType
            || type instanceof DoubleType
            || type instanceof DecimalType);
  }

  /** The packed counts of a group without values. */
  static byte[] empty() {
    return new byte[] {FORMAT, 0, 0, 0, 0};
  }

  /** The number of values in {@code packed}. */
  static int size(byte[] packed) {
    checkFormat(packed);
    return ByteBuffer.wrap(packed, 1, 4).getInt();
  }

  /**
   * Packs {@code entries}, structs of a value of {@code type} and a {@code BIGINT} count: counts of
   * one value are added up, NULL values and counts and values whose count is 0 are left out.
   */
  static byte[] pack(ArrayData entries, DataType type) {
    int n = entries.numElements();
    byte[][] keys = new byte[n][];
    long[] counts = new long[n];
    Integer[] order = new Integer[n];
    int kept = 0;
    for (int i = 0; i < n; i++) {
      InternalRow entry = entries.getStruct(i, 2);
      if (entry == null || entry.isNullAt(0) || entry.isNullAt(1)) {
        continue;
      }
      keys[kept] = encode(entry.get(0, type), type);
      counts[kept] = entry.getLong(1);
      order[kept] = kept;
      kept++;
    }
    Arrays.sort(order, 0, kept, Comparator.comparing(i -> keys[i], Arrays::compareUnsigned));
    Writer out = new Writer(kept * 12 + HEADER);
    int i = 0;
    while (i < kept) {
      byte[] key = keys[order[i]];
      long count = 0;
      while (i < kept && Arrays.equals(keys[order[i]], key)) {
        count += counts[order[i]];
        i++;
      }
      if (count != 0) {
        out.entry(key, 0, key.length, count);
      }
    }
    return out.finish();
  }

  /**
   * {@code stored} (positive counts) with {@code change} added value by value: a value whose count
   * is no longer positive leaves, a changed value not stored yet joins when its change is positive.
   * The runs of stored entries between changed values are copied as they are.
   */
  static byte[] merge(byte[] stored, byte[] change) {
    int changes = size(change);
    if (changes == 0) {
      return stored;
    }
    int storedEntries = size(stored);
    Writer out = new Writer(stored.length + change.length);
    Reader s = new Reader(stored);
    Reader c = new Reader(change);
    boolean storedLeft = s.next();
    boolean changeLeft = c.next();
    int runStart = HEADER;
    int kept = storedEntries;
    while (storedLeft && changeLeft) {
      int order = Arrays.compareUnsigned(stored, s.keyFrom, s.keyTo, change, c.keyFrom, c.keyTo);
      if (order < 0) {
        storedLeft = s.next();
        continue;
      }
      if (order == 0) {
        out.copy(stored, runStart, s.entryFrom);
        long count = s.count + c.count;
        if (count > 0) {
          out.entry(stored, s.keyFrom, s.keyTo, count);
        } else {
          kept--;
        }
        runStart = s.entryTo;
        storedLeft = s.next();
      } else {
        out.copy(stored, runStart, s.entryFrom);
        runStart = s.entryFrom;
        if (c.count > 0) {
          out.entry(change, c.keyFrom, c.keyTo, c.count);
          kept++;
        }
      }
      changeLeft = c.next();
    }
    out.copy(stored, runStart, stored.length);
    while (changeLeft) {
      if (c.count > 0) {
        out.entry(change, c.keyFrom, c.keyTo, c.count);
        kept++;
      }
      changeLeft = c.next();
    }
    return out.finish(kept);
  }

  /** The values of {@code packed}, of {@code type}, each with its count. */
  static ArrayBasedMapData unpack(byte[] packed, DataType type) {
    Object[] values = new Object[size(packed)];
    Object[] counts = new Object[values.length];
    Reader entries = new Reader(packed);
    int i = 0;
    while (entries.next()) {
      values[i] = decode(packed, entries.keyFrom, entries.keyTo, type);
      counts[i] = entries.count;
      i++;
    }
    return new ArrayBasedMapData(new GenericArrayData(values), new GenericArrayData(counts));
  }

  private static void checkFormat(byte[] packed) {
    if (packed.length < HEADER || packed[0] != FORMAT) {
      throw new IllegalStateException(
          "COUNT(DISTINCT) state is not in a format this Floe reads (format byte "
              + (packed.length == 0 ? "missing" : String.valueOf(packed[0])) + ", expected " + FORMAT + ")");
    }
  }

  private static byte[] encode(Object value, DataType type) {
    if (type instanceof StringType) {
      return ((UTF8String) value).getBytes();
    }
    if (type instanceof BooleanType) {
      return new byte[] {(byte) ((Boolean) value ? 1 : 0)};
    }
    if (type instanceof ByteType) {
      return new byte[] {(Byte) value};
    }
    if (type instanceof ShortType) {
      return ByteBuffer.allocate(2).putShort((Short) value).array();
    }
    if (type instanceof IntegerType || type instanceof DateType || type instanceof YearMonthIntervalType) {
      return ByteBuffer.allocate(4).putInt((Integer) value).array();
    }
    if (type instanceof FloatType) {
      float f = (Float) value;
      return ByteBuffer.allocate(4).putInt(Float.floatToIntBits(f == 0.0f ? 0.0f : f)).array();
    }
    if (type instanceof DoubleType) {
      double d = (Double) value;
      return ByteBuffer.allocate(8).putLong(Double.doubleToLongBits(d == 0.0d ? 0.0d : d)).array();
    }
    if (type instanceof DecimalType decimal) {
      return ((Decimal) value).toJavaBigDecimal().setScale(decimal.scale()).unscaledValue().toByteArray();
    }
    // BIGINT, timestamps, day-time intervals.
    return ByteBuffer.allocate(8).putLong((Long) value).array();
  }

  private static Object decode(byte[] bytes, int from, int to, DataType type) {
    ByteBuffer buffer = ByteBuffer.wrap(bytes, from, to - from);
    if (type instanceof StringType) {
      return UTF8String.fromBytes(bytes, from, to - from);
    }
    if (type instanceof BooleanType) {
      return bytes[from] != 0;
    }
    if (type instanceof ByteType) {
      return bytes[from];
    }
    if (type instanceof ShortType) {
      return buffer.getShort();
    }
    if (type instanceof IntegerType || type instanceof DateType || type instanceof YearMonthIntervalType) {
      return buffer.getInt();
    }
    if (type instanceof FloatType) {
      return Float.intBitsToFloat(buffer.getInt());
    }
    if (type instanceof DoubleType) {
      return Double.longBitsToDouble(buffer.getLong());
    }
    if (type instanceof DecimalType decimal) {
      BigDecimal value = new BigDecimal(new BigInteger(Arrays.copyOfRange(bytes, from, to)), decimal.scale());
      return Decimal.apply(value, decimal.precision(), decimal.scale());
    }
    return buffer.getLong();
  }

  /** Walks the entries of packed counts. */
  private static final class Reader {
    private final byte[] bytes;
    private int position = HEADER;
    int entryFrom;
    int entryTo;
    int keyFrom;
    int keyTo;
    long count;

    Reader(byte[] bytes) {
      checkFormat(bytes);
      this.bytes = bytes;
    }

    boolean next() {
      if (position >= bytes.length) {
        return false;
      }
      entryFrom = position;
      long length = varint();
      keyFrom = position;
      keyTo = position + (int) length;
      position = keyTo;
      long zigzag = varint();
      count = (zigzag >>> 1) ^ -(zigzag & 1);
      entryTo = position;
      return true;
    }

    private long varint() {
      long value = 0;
      int shift = 0;
      while (true) {
        byte b = bytes[position++];
        value |= (long) (b & 0x7f) << shift;
        if (b >= 0) {
          return value;
        }
        shift += 7;
      }
    }
  }

  /** Writes packed counts. */
  private static final class Writer {
    private byte[] bytes;
    private int position = HEADER;
    private int entries;

    Writer(int capacity) {
      bytes = new byte[Math.max(capacity, HEADER + 16)];
    }

    void entry(byte[] source, int keyFrom, int keyTo, long count) {
      int length = keyTo - keyFrom;
      ensure(length + 20);
      varint(length);
      System.arraycopy(source, keyFrom, bytes, position, length);
      position += length;
      varint((count << 1) ^ (count >> 63));
      entries++;
    }

    /** Copies the entries in {@code source} from {@code from} to {@code to}, counted by the caller. */
    void copy(byte[] source, int from, int to) {
      if (to > from) {
        ensure(to - from);
        System.arraycopy(source, from, bytes, position, to - from);
        position += to - from;
      }
    }

    byte[] finish() {
      return finish(entries);
    }

    byte[] finish(int count) {
      byte[] packed = Arrays.copyOf(bytes, position);
      packed[0] = FORMAT;
      ByteBuffer.wrap(packed, 1, 4).putInt(count);
      return packed;
    }

    private void varint(long value) {
      while ((value & ~0x7fL) != 0) {
        bytes[position++] = (byte) ((value & 0x7f) | 0x80);
        value >>>= 7;
      }
      bytes[position++] = (byte) value;
    }

    private void ensure(int more) {
      if (position + more > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, position + more));
      }
    }
  }

  /**
   * A function of packed value counts as a Catalyst expression: NULL when an argument is NULL,
   * evaluated in Java (the work is in the bytes, not in the call).
   */
  private abstract static class Function extends FieldsExpression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    private final scala.collection.immutable.Seq<Expression> children;

    Function(Expression... children) {
      this.children = Scala.seq(children);
    }

    /** The result for the arguments' values, none of them NULL. */
    abstract Object compute(List<Object> arguments);

    @Override
    public final Object eval(InternalRow input) {
      List<Object> arguments = new java.util.ArrayList<>(children.size());
      for (Expression child : Scala.list(children)) {
        Object value = child.eval(input);
        if (value == null) {
          return null;
        }
        arguments.add(value);
      }
      return compute(arguments);
    }

    @Override
    public final boolean nullable() {
      return Scala.list(children).stream().anyMatch(Expression::nullable);
    }

    @Override
    public final scala.collection.immutable.Seq<Expression> children() {
      return children;
    }

    @Override
    public final ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
      return CodegenFallback.super.doGenCode(ctx, ev);
    }
  }

  /** {@code floe_pack_value_counts(entries)}: an array of (value, count) structs, packed. */
  public static final class Pack extends Function {
    private static final long serialVersionUID = 1L;

    private final Expression entries;

    public Pack(Expression entries) {
      super(entries);
      this.entries = entries;
    }

    @Override
    Object compute(List<Object> arguments) {
      StructType entry = (StructType) ((org.apache.spark.sql.types.ArrayType) entries.dataType()).elementType();
      return pack((ArrayData) arguments.get(0), entry.fields()[0].dataType());
    }

    @Override
    public DataType dataType() {
      return DataTypes.BinaryType;
    }

    @Override
    public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> newChildren) {
      return new Pack(newChildren.apply(0));
    }

    @Override
    public String prettyName() {
      return "floe_pack_value_counts";
    }

    @Override
    protected List<Object> fields() {
      return List.of(entries);
    }
  }

  /** {@code floe_merge_value_counts(stored, change)}: see {@link ValueCounts#merge}. */
  public static final class Merge extends Function {
    private static final long serialVersionUID = 1L;

    private final Expression stored;
    private final Expression change;

    public Merge(Expression stored, Expression change) {
      super(stored, change);
      this.stored = stored;
      this.change = change;
    }

    @Override
    Object compute(List<Object> arguments) {
      return merge((byte[]) arguments.get(0), (byte[]) arguments.get(1));
    }

    @Override
    public DataType dataType() {
      return DataTypes.BinaryType;
    }

    @Override
    public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> newChildren) {
      return new Merge(newChildren.apply(0), newChildren.apply(1));
    }

    @Override
    public String prettyName() {
      return "floe_merge_value_counts";
    }

    @Override
    protected List<Object> fields() {
      return List.of(stored, change);
    }
  }

  /** {@code floe_value_count_size(packed)}: the number of values, a {@code BIGINT}. */
  public static final class Size extends Function {
    private static final long serialVersionUID = 1L;

    private final Expression packed;

    public Size(Expression packed) {
      super(packed);
      this.packed = packed;
    }

    @Override
    Object compute(List<Object> arguments) {
      return (long) size((byte[]) arguments.get(0));
    }

    @Override
    public DataType dataType() {
      return DataTypes.LongType;
    }

    @Override
    public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> newChildren) {
      return new Size(newChildren.apply(0));
    }

    @Override
    public String prettyName() {
      return "floe_value_count_size";
    }

    @Override
    protected List<Object> fields() {
      return List.of(packed);
    }
  }

  /** {@code floe_unpack_value_counts(packed)}: a map from each value, of {@code valueType}, to its count. */
  public static final class Unpack extends Function {
    private static final long serialVersionUID = 1L;

    private final Expression packed;
    private final DataType valueType;

    public Unpack(Expression packed, DataType valueType) {
      super(packed);
      this.packed = packed;
      this.valueType = valueType;
    }

    @Override
    Object compute(List<Object> arguments) {
      return unpack((byte[]) arguments.get(0), valueType);
    }

    @Override
    public DataType dataType() {
      return new MapType(valueType, DataTypes.LongType, false);
    }

    @Override
    public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> newChildren) {
      return new Unpack(newChildren.apply(0), valueType);
    }

    @Override
    public String prettyName() {
      return "floe_unpack_value_counts";
    }

    @Override
    protected List<Object> fields() {
      return List.of(packed, valueType);
    }
  }
}
