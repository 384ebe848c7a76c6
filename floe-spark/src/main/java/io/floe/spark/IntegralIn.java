package io.floe.spark;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;

/**
 * {@code x IN (v1, v2, ...)} for an integral {@code x} and many listed values: the test Floe puts
 * on a scan of a large table to keep the few rows a refresh touches (the storage rows a MERGE can
 * match, the deleted positions a change capture reads).
 *
 * <p>Catalyst's {@link InSet} boxes every value it tests and looks it up in a Scala hash set, about
 * as costly per row as decoding the column itself: on a 10M-row storage table it added a third of
 * a second to a scan of its keys. Here a value is first tested against a bit set indexed by its low
 * bits, 64 bits per listed value, so nearly every row that does not match is turned down by one
 * array read; the rest are looked up exactly in the sorted values. The result is the same as
 * {@code InSet}'s with the same values: NULL for a NULL {@code x}, which no listed value is.
 *
 * <p>Spark cannot push this test into a scan. Where that costs pruning, keep an {@code InSet} beside
 * it for the scan (see {@link #PRUNING_LIMIT}); row keys that are hashes and row positions prune
 * nothing either way.
 */
public final class IntegralIn extends FieldsExpression implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * The most listed values for which an Iceberg scan still prunes files by an {@code IN} predicate;
   * beyond that, the {@code IN} pushed into the scan prunes nothing, and this test is the cheaper.
   */
  public static final int PRUNING_LIMIT = 200;

  private final Expression child;
  private final Values values;
  private final scala.collection.immutable.Seq<Expression> children;

  /** Public for Catalyst, which copies a node by calling its constructor with its fields; see {@link #of}. */
  public IntegralIn(Expression child, Values values) {
    this.child = child;
    this.values = values;
    this.children = Scala.seq(child);
  }

  /**
   * The test that {@code child}, an expression of type {@code BIGINT} or {@code INT} (resolved or
   * not), holds one of {@code listed}: {@link Long} values for a {@code BIGINT}, {@link Integer}
   * values for an {@code INT}.
   */
  public static IntegralIn of(Expression child, Collection<?> listed) {
    long[] sorted = new long[listed.size()];
    int i = 0;
    for (Object value : listed) {
      if (!(value instanceof Long) && !(value instanceof Integer)) {
        throw new IllegalArgumentException("IntegralIn lists integral values, not " + value);
      }
      sorted[i++] = ((Number) value).longValue();
    }
    return new IntegralIn(child, new Values(sorted));
  }

  /** Whether this test applies to values of {@code type}. */
  public static boolean tests(DataType type) {
    return type instanceof LongType || type instanceof IntegerType;
  }

  /** The listed values: a bit set over their low bits, then the sorted values themselves. */
  public static final class Values implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /** The largest bit set, in bits (2 MiB): it is shipped with every task of the scan. */
    private static final int MAX_BITS = 1 << 24;

    private final long[] sorted;
    private final BitSet lowBits;
    private final int mask;

    private Values(long[] values) {
      this.sorted = Arrays.stream(values).sorted().distinct().toArray();
      long wanted = Math.max(64L, sorted.length * 64L);
      int bits = (int) Math.min(MAX_BITS, Long.highestOneBit(wanted - 1) << 1);
      this.mask = bits - 1;
      this.lowBits = new BitSet(bits);
      for (long value : sorted) {
        lowBits.set((int) (value & mask));
      }
    }

    /** Whether {@code value} is listed. Called by the generated code of every row tested. */
    public boolean contains(long value) {
      return lowBits.get((int) (value & mask)) && Arrays.binarySearch(sorted, value) >= 0;
    }

    int size() {
      return sorted.length;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Values v && Arrays.equals(sorted, v.sorted);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(sorted);
    }

    /** Short: plans are logged and shown, and the values can be thousands. */
    @Override
    public String toString() {
      return sorted.length + " values";
    }
  }

  /** How many distinct values are listed. */
  public int listedCount() {
    return values.size();
  }

  @Override
  public scala.collection.immutable.Seq<Expression> children() {
    return children;
  }

  @Override
  public boolean nullable() {
    return child.nullable();
  }

  @Override
  public DataType dataType() {
    return DataTypes.BooleanType;
  }

  @Override
  public boolean resolved() {
    return childrenResolved() && tests(child.dataType());
  }

  @Override
  public Object eval(InternalRow input) {
    Object value = child.eval(input);
    return value == null ? null : values.contains(((Number) value).longValue());
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode tested = child.genCode(ctx);
    String listed = ctx.addReferenceObj("listedValues", values, Values.class.getCanonicalName());
    String code =
        "\nboolean " + ev.isNull() + " = " + tested.isNull() + ";\n"
            + "boolean " + ev.value() + " = false;\n"
            + "if (!" + ev.isNull() + ") {\n"
            + "  " + ev.value() + " = " + listed + ".contains((long) " + tested.value() + ");\n"
            + "}\n";
    return ev.copy(new CodeBlock(Scala.seq("", code), Scala.seq(tested.code())), ev.isNull(), ev.value());
  }

  @Override
  public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> children) {
    return new IntegralIn(children.apply(0), values);
  }

  @Override
  public String prettyName() {
    return "floe_listed";
  }

  @Override
  public String sql() {
    return child.sql() + " IN (" + values + ")";
  }

  @Override
  protected java.util.List<Object> fields() {
    return java.util.List.of(child, values);
  }
}
