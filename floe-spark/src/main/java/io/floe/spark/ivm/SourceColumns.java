package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.HashMap;
import java.util.HashSet;
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
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.optimizer.InlineCTE;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Except;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Generate;
import org.apache.spark.sql.catalyst.plans.logical.GlobalLimit;
import org.apache.spark.sql.catalyst.plans.logical.Intersect;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LocalLimit;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.catalyst.plans.logical.Window;
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
  /**
   * The operators through which the columns a plan needs of a table are those some operator
   * references, those the plan outputs and those a {@linkplain #WHOLE_ROWS whole-row operator} takes
   * in: each of them either names what it reads in its expressions or passes its input's columns
   * on unchanged. Common table expressions are inlined first, so that a column read through one is
   * traced like any other. Operators that hide where a column goes (subqueries, recursive CTEs) are
   * not among them.
   */
  private static final Set<Class<?>> TRACEABLE =
      Set.of(
          Project.class, Filter.class, Aggregate.class, Join.class, SubqueryAlias.class, DataSourceV2Relation.class,
          Sort.class, GlobalLimit.class, LocalLimit.class, Window.class, Distinct.class, Generate.class, Union.class,
          Intersect.class, Except.class);

  /**
   * The operators that compare or pass on whole rows of their inputs, by position, without naming
   * a column: every column of every input is needed. UNION passes a later input's columns on under
   * the first input's names, so they are never referenced by name above it.
   */
  private static final Set<Class<?>> WHOLE_ROWS = Set.of(Distinct.class, Union.class, Intersect.class, Except.class);

  private final Map<String, Set<String>> byTable;
  private final Map<String, Set<String>> neededByTable;
  private final boolean traceable;

  private SourceColumns(Map<String, Set<String>> byTable, Map<String, Set<String>> neededByTable, boolean traceable) {
    this.byTable = byTable;
    this.neededByTable = neededByTable;
    this.traceable = traceable;
  }

  /**
   * The columns {@code analyzed} (an analyzed definition) reads of each Iceberg table, by table
   * UUID, lower case: every column of the table that the plan outputs, that some operator of it
   * references, or that a {@linkplain #WHOLE_ROWS whole-row operator} takes in.
   */
  public static SourceColumns of(LogicalPlan analyzed) {
    LogicalPlan plan = withoutUnusedProjections(new InlineCTE(true, false).apply(analyzed));
    Map<ExprId, String[]> columns = new HashMap<>();
    Map<String, Set<String>> byTable = new HashMap<>();
    boolean[] traceable = {true};
    plan.foreach(node -> {
      if (node instanceof DataSourceV2Relation relation && relation.table() instanceof SparkTable table) {
        String uuid = table.table().uuid().toString();
        byTable.computeIfAbsent(uuid, k -> new TreeSet<>());
        for (Attribute a : Scala.list(relation.output())) {
          columns.put(a.exprId(), new String[] {uuid, a.name().toLowerCase(Locale.ROOT)});
        }
      }
      traceable[0] &= TRACEABLE.contains(node.getClass()) && !node.expressions().exists(SubqueryExpression::hasSubquery);
      return scala.runtime.BoxedUnit.UNIT;
    });
    addAll(byTable, columns, plan.output());
    plan.foreach(node -> {
      addAll(byTable, columns, node.references().toSeq());
      if (WHOLE_ROWS.contains(node.getClass())) {
        for (LogicalPlan input : Scala.list(node.children())) {
          addAll(byTable, columns, input.output());
        }
      }
      return scala.runtime.BoxedUnit.UNIT;
    });
    return new SourceColumns(byTable, needed(plan, columns), traceable[0]);
  }

  /**
   * The columns of each table the plan's rows need, which may be fewer than those its operators
   * name: from the top down, an operator needs of its input the columns its expressions reference
   * and those of its output the operators above need; a projection, only what its needed columns
   * are computed from (a {@code JOIN ... USING} projects every column of both tables, a column
   * added since among them); a {@linkplain #WHOLE_ROWS whole-row operator}, every column of its
   * inputs. A column named but not needed still has to be there for the definition to resolve,
   * but what it holds changes nothing the view computes.
   */
  private static Map<String, Set<String>> needed(LogicalPlan plan, Map<ExprId, String[]> columns) {
    Set<ExprId> needed = new HashSet<>();
    addIds(needed, plan.output());
    // Top down: an operator's needs are known once every operator above it was visited.
    plan.foreach(node -> {
      if (node instanceof Project project) {
        for (NamedExpression expression : Scala.list(project.projectList())) {
          if (needed.contains(expression.exprId())) {
            addIds(needed, ((org.apache.spark.sql.catalyst.expressions.Expression) expression).references().toSeq());
          }
        }
      } else {
        addIds(needed, node.references().toSeq());
        if (WHOLE_ROWS.contains(node.getClass())) {
          Scala.list(node.children()).forEach(input -> addIds(needed, input.output()));
        }
      }
      return scala.runtime.BoxedUnit.UNIT;
    });
    Map<String, Set<String>> byTable = new HashMap<>();
    columns.forEach((id, column) -> {
      Set<String> read = byTable.computeIfAbsent(column[0], k -> new TreeSet<>());
      if (needed.contains(id)) {
        read.add(column[1]);
      }
    });
    return byTable;
  }

  private static void addIds(Set<ExprId> ids, scala.collection.Seq<? extends Attribute> attributes) {
    for (Attribute a : Scala.list(attributes)) {
      ids.add(a.exprId());
    }
  }

  /**
   * A plan whose root projects a projection without using all of its columns (a view whose {@code
   * SELECT *} now gives more columns than the view has is read as its columns so) with the inner
   * projection cut down to what the outer one uses: the columns it drops are not read.
   */
  private static LogicalPlan withoutUnusedProjections(LogicalPlan plan) {
    if (!(plan instanceof Project outer) || !(outer.child() instanceof Project inner)) {
      return plan;
    }
    AttributeSet used = outer.references();
    List<NamedExpression> kept =
        Scala.list(inner.projectList()).stream().filter(e -> used.contains(e.toAttribute())).toList();
    return new Project(outer.projectList(), new Project(Scala.seq(kept), inner.child()));
  }

  private static void addAll(
      Map<String, Set<String>> byTable, Map<ExprId, String[]> columns, scala.collection.Seq<? extends Attribute> attributes) {
    for (Attribute a : Scala.list(attributes)) {
      String[] column = columns.get(a.exprId());
      if (column != null) {
        byTable.computeIfAbsent(column[0], k -> new TreeSet<>()).add(column[1]);
      }
    }
  }

  /**
   * The columns of {@code table} the definition's rows depend on, lower case: a change of the
   * table's rows that leaves these columns as they were changes nothing the definition computes.
   * Empty when it depends on none of them (as {@code SELECT COUNT(*)} does). Absent when the plan
   * does not show it: the definition does not read the table as an Iceberg table, or reads it
   * through an operator that is not {@linkplain #TRACEABLE traceable}.
   */
  public Optional<Set<String>> rowsDependOn(Table table) {
    return traceable
        ? Optional.ofNullable(byTable.get(table.uuid().toString())).map(java.util.Collections::unmodifiableSet)
        : Optional.empty();
  }

  /**
   * The columns of {@code table} the definition's rows need (see {@link #needed}), lower case: fewer
   * than {@link #rowsDependOn} where a projection names a column that nothing above it uses, as
   * the projection of every view column that reads an MV from its storage does. A change holding
   * only these, the others NULL, gives the definition the same rows. Absent when the plan does not
   * show it, as for {@link #rowsDependOn}.
   */
  public Optional<Set<String>> rowsNeed(Table table) {
    return traceable
        ? Optional.ofNullable(neededByTable.get(table.uuid().toString())).map(java.util.Collections::unmodifiableSet)
        : Optional.empty();
  }

  /**
   * Why the schemas {@code schemaIds} of {@code table} (named {@code name}) differ in a column the
   * definition's rows need: a needed column missing from one of them, or a different field or type
   * behind its name. Empty when they agree on every needed column.
   */
  public Optional<String> differingColumn(Table table, String name, List<Integer> schemaIds) {
    Set<Integer> distinct = new LinkedHashSet<>(schemaIds);
    if (distinct.size() < 2) {
      return Optional.empty();
    }
    Map<Integer, Schema> schemas = table.schemas();
    for (String column : neededByTable.getOrDefault(table.uuid().toString(), Set.of())) {
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
