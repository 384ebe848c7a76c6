package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.iceberg.spark.source.SparkTable;

/**
 * The columns a definition reads from each of its source tables, and whether a change of a
 * table's schema touches them. A schema change that leaves every read column the same field (same
 * field id, same type) under the same name, such as a column added or an unread one renamed,
 * changes nothing the view computes, so its refresh can stay incremental; one that renames, drops
 * or retypes a read column makes it a full refresh.
 */
public final class SourceColumns {
  private final Map<String, Set<String>> byTable;

  private SourceColumns(Map<String, Set<String>> byTable) {
    this.byTable = byTable;
  }

  /**
   * The columns {@code analyzed} (an analyzed definition) reads of each Iceberg table, by table
   * UUID, lower case: every column of the table that some operator of the plan references.
   */
  public static SourceColumns of(LogicalPlan analyzed) {
    Map<ExprId, String[]> columns = new HashMap<>();
    analyzed.foreach(node -> {
      if (node instanceof DataSourceV2Relation relation && relation.table() instanceof SparkTable table) {
        String uuid = table.table().uuid().toString();
        for (Attribute a : Scala.list(relation.output())) {
          columns.put(a.exprId(), new String[] {uuid, a.name().toLowerCase(Locale.ROOT)});
        }
      }
      return scala.runtime.BoxedUnit.UNIT;
    });
    Map<String, Set<String>> byTable = new HashMap<>();
    analyzed.foreach(node -> {
      for (Attribute a : Scala.list(node.references().toSeq())) {
        String[] column = columns.get(a.exprId());
        if (column != null) {
          byTable.computeIfAbsent(column[0], k -> new TreeSet<>()).add(column[1]);
        }
      }
      return scala.runtime.BoxedUnit.UNIT;
    });
    return new SourceColumns(byTable);
  }

  /**
   * Why the schemas {@code schemaIds} of {@code table} (named {@code name}) differ in a column the
   * definition reads: a read column missing from one of them, or a different field or type behind
   * its name. Empty when they agree on every read column.
   */
  public Optional<String> differingColumn(Table table, String name, List<Integer> schemaIds) {
    Set<Integer> distinct = new LinkedHashSet<>(schemaIds);
    if (distinct.size() < 2) {
      return Optional.empty();
    }
    Map<Integer, Schema> schemas = table.schemas();
    for (String column : byTable.getOrDefault(table.uuid().toString(), Set.of())) {
      Types.NestedField first = null;
      Integer firstId = null;
      for (int id : distinct) {
        Schema schema = schemas.get(id);
        if (schema == null) {
          return Optional.of("schema " + id + " of " + name + " is no longer in its metadata");
        }
        Types.NestedField field = schema.caseInsensitiveFindField(column);
        if (field == null) {
          return Optional.of("column " + column + " of " + name + " is not in schema " + id);
        }
        if (first == null) {
          first = field;
          firstId = id;
        } else if (first.fieldId() != field.fieldId() || !first.type().equals(field.type())) {
          return Optional.of(
              "column " + column + " of " + name + " is " + describe(first) + " in schema " + firstId + " and "
                  + describe(field) + " in schema " + id);
        }
      }
    }
    return Optional.empty();
  }

  private static String describe(Types.NestedField field) {
    return "field " + field.fieldId() + " (" + field.type() + ")";
  }
}
