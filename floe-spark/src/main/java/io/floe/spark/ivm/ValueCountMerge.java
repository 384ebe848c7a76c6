package io.floe.spark.ivm;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.catalyst.util.TypeUtils;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;

/**
 * A stored value-count map ({@link DistinctState}) plus a small map of net changes per value: each
 * stored count gains its value's change, a value whose count is no longer positive leaves the map,
 * and a changed value not stored yet joins it with its change when that is positive.
 *
 * <p>The stored map is large (every distinct value of a group) and the change small (the values a
 * refresh touched), so the change is put in a hash table and the stored entries are passed over
 * once, in order, each looked up in it. Spark's {@code map_zip_with} would instead hash every entry
 * of both maps and evaluate its lambda interpreted, per entry: on the refresh benchmark's Gold view
 * that was most of an incremental refresh.
 *
 * <p>Values are compared by their Spark internal form, which is exact only for key types with
 * proper equality ({@link #merges}); maps of other key types are merged with {@code map_zip_with}.
 */
public final class ValueCountMerge extends io.floe.spark.FieldsExpression implements CodegenFallback, java.io.Serializable {
  private static final long serialVersionUID = 1L;

  private final Expression stored;
  private final Expression change;
  private final scala.collection.immutable.Seq<Expression> children;

  /** {@code stored} and {@code change}: non-null maps of one key type to {@code BIGINT} counts. */
  public ValueCountMerge(Expression stored, Expression change) {
    this.stored = stored;
    this.change = change;
    this.children = io.floe.spark.Scala.seq(stored, change);
  }

  /** Whether maps of this type can be merged here: {@code BIGINT} counts keyed by values with proper equality. */
  static boolean merges(DataType mapType) {
    return mapType instanceof MapType map
        && map.valueType().sameType(DataTypes.LongType)
        && TypeUtils.typeWithProperEquals(map.keyType());
  }

  @Override
  public scala.collection.immutable.Seq<Expression> children() {
    return children;
  }

  @Override
  public boolean nullable() {
    return stored.nullable() || change.nullable();
  }

  @Override
  public Object eval(InternalRow input) {
    Object storedMap = stored.eval(input);
    if (storedMap == null) {
      return null;
    }
    Object changeMap = change.eval(input);
    return changeMap == null ? null : merge(storedMap, changeMap);
  }

  @Override
  public DataType dataType() {
    return stored.dataType();
  }

  private Object merge(Object storedMap, Object changeMap) {
    MapData old = (MapData) storedMap;
    MapData delta = (MapData) changeMap;
    if (delta.numElements() == 0) {
      return old;
    }
    DataType keyType = ((MapType) stored.dataType()).keyType();
    Map<Object, Long> pending = new HashMap<>(delta.numElements() * 2);
    ArrayData deltaKeys = delta.keyArray();
    ArrayData deltaValues = delta.valueArray();
    for (int i = 0; i < delta.numElements(); i++) {
      if (!deltaValues.isNullAt(i)) {
        pending.merge(deltaKeys.get(i, keyType), deltaValues.getLong(i), Long::sum);
      }
    }
    int size = old.numElements();
    ArrayData oldKeys = old.keyArray();
    ArrayData oldValues = old.valueArray();
    Object[] keys = new Object[size + pending.size()];
    Object[] values = new Object[size + pending.size()];
    int kept = 0;
    for (int i = 0; i < size; i++) {
      Object key = oldKeys.get(i, keyType);
      long rows = oldValues.isNullAt(i) ? 0L : oldValues.getLong(i);
      Long changed = pending.isEmpty() ? null : pending.remove(key);
      if (changed != null) {
        rows += changed;
      }
      if (rows > 0) {
        keys[kept] = key;
        values[kept] = rows;
        kept++;
      }
    }
    for (Map.Entry<Object, Long> entry : pending.entrySet()) {
      if (entry.getValue() > 0) {
        keys[kept] = entry.getKey();
        values[kept] = entry.getValue();
        kept++;
      }
    }
    if (kept < keys.length) {
      keys = java.util.Arrays.copyOf(keys, kept);
      values = java.util.Arrays.copyOf(values, kept);
    }
    return new ArrayBasedMapData(new GenericArrayData(keys), new GenericArrayData(values));
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    return CodegenFallback.super.doGenCode(ctx, ev);
  }

  @Override
  public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> children) {
    return new ValueCountMerge(children.apply(0), children.apply(1));
  }

  @Override
  public String prettyName() {
    return "floe_merge_value_counts";
  }

  @Override
  protected java.util.List<Object> fields() {
    return java.util.List.of(stored, change);
  }
}
