package io.floe.spark.rewrite;

import io.floe.spark.ivm.StorageLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;

/**
 * What a query can take from an MV's storage read: the attribute of each view column next to the
 * canonical expression it holds, which of them are grouping keys, and the hidden counters of the
 * GROUPS layout.
 */
final class ViewColumns {
  /** One view column: the expression it holds and the storage attribute holding it. */
  record Column(int position, Expression definition, Attribute attribute) {}

  private final QueryBlock definition;
  private final StorageLayout layout;
  private final List<Column> columns;
  private final List<Column> keys;
  private final Map<String, Attribute> storage;

  /**
   * @param storage the storage read's attributes by column name, as the view names its columns
   */
  /**
   * The storage column of view column {@code name}: the one of that exact name, else the only one
   * of that name in another case (a replacement that changed only a column name's case keeps its
   * storage table and the column's old spelling there).
   */
  private static Attribute storageColumn(Map<String, Attribute> storage, String name) {
    Attribute exact = storage.get(name);
    if (exact != null) {
      return exact;
    }
    List<Attribute> other = storage.entrySet().stream()
        .filter(e -> e.getKey().equalsIgnoreCase(name)).map(Map.Entry::getValue).toList();
    return other.size() == 1 ? other.get(0) : null;
  }

  ViewColumns(QueryBlock definition, StorageLayout layout, List<String> viewColumns, Map<String, Attribute> storage) {
    this.definition = definition;
    this.layout = layout;
    this.storage = storage;
    this.columns = new ArrayList<>();
    this.keys = new ArrayList<>();
    for (int i = 0; i < viewColumns.size(); i++) {
      Attribute attribute = storageColumn(storage, viewColumns.get(i));
      if (attribute == null) {
        continue;
      }
      Expression e = definition.outputs().get(i);
      Column column = new Column(i, e, attribute);
      columns.add(column);
      if (!definition.isAggregate() || definition.grouping().stream().anyMatch(g -> g.semanticEquals(e))) {
        keys.add(column);
      }
    }
  }

  QueryBlock definition() {
    return definition;
  }

  StorageLayout layout() {
    return layout;
  }

  /**
   * Columns a query may use as plain values: every column of a non-aggregate view, the grouping
   * columns of an aggregate view.
   */
  List<Column> keys() {
    return keys;
  }

  /** True when every grouping expression of an aggregate view is one of its columns. */
  boolean everyGroupingSelected() {
    return definition.grouping().stream().allMatch(g -> keys.stream().anyMatch(k -> k.definition().semanticEquals(g)));
  }

  /** The column holding exactly this aggregate, if the view computes it. */
  Optional<Column> aggregateColumn(AggregateExpression aggregate) {
    for (Column c : columns) {
      if (c.definition() instanceof AggregateExpression) {
        AggregateExpression m = (AggregateExpression) c.definition();
        if (m.isDistinct() == aggregate.isDistinct()
            && m.filter().isEmpty()
            && aggregate.filter().isEmpty()
            && m.aggregateFunction().semanticEquals(aggregate.aggregateFunction())) {
          return Optional.of(c);
        }
      }
    }
    return Optional.empty();
  }

  /** The GROUPS layout's hidden row count. */
  Optional<Attribute> rowCount() {
    return layout == StorageLayout.GROUPS ? Optional.ofNullable(storage.get(StorageLayout.COUNT)) : Optional.empty();
  }

  /**
   * The GROUPS layout's hidden map of the COUNT(DISTINCT x) in {@code column}: each value of x in
   * the group to its source rows.
   */
  Optional<Attribute> distinctState(Column column) {
    return layout == StorageLayout.GROUPS
        ? Optional.ofNullable(storage.get(StorageLayout.distinctState(column.position())))
        : Optional.empty();
  }

  /** The GROUPS layout's hidden non-null count of the SUM or AVG in {@code column}. */
  Optional<Attribute> nonNullCount(Column column) {
    return layout == StorageLayout.GROUPS
        ? Optional.ofNullable(storage.get(StorageLayout.nonNullCount(column.position())))
        : Optional.empty();
  }

  /** The GROUPS layout's hidden running sum of the AVG in {@code column}. */
  Optional<Attribute> runningSum(Column column) {
    return layout == StorageLayout.GROUPS
        ? Optional.ofNullable(storage.get(StorageLayout.runningSum(column.position())))
        : Optional.empty();
  }

  /**
   * {@code e} computed from the key columns, or empty when it needs a column the view does not
   * keep. Aggregates are not looked into: they are the rollup's business.
   */
  Optional<Expression> express(Expression e) {
    for (Column k : keys) {
      if (k.definition().semanticEquals(e)) {
        return Optional.of(k.attribute());
      }
    }
    if (e instanceof AggregateExpression && definition.isAggregate()) {
      return Optional.empty();
    }
    if (e.children().isEmpty()) {
      return QueryBlock.readsLeafColumns(e) ? Optional.empty() : Optional.of(e);
    }
    List<Expression> children = new ArrayList<>();
    for (Expression child : io.floe.spark.Scala.list(e.children())) {
      Optional<Expression> expressed = express(child);
      if (expressed.isEmpty()) {
        return Optional.empty();
      }
      children.add(expressed.get());
    }
    return Optional.of(e.withNewChildren(io.floe.spark.Scala.seq(children)));
  }
}
