package io.floe.spark.rewrite;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.plans.Cross$;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Distinct;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Generate;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.Metadata;
import org.apache.iceberg.spark.source.SparkTable;

/**
 * One select-project-join block of an analyzed plan, optionally topped by a GROUP BY, in a
 * canonical form that a query and an MV definition share: every column is named by the table it
 * comes from (its Iceberg UUID) rather than by the plan's attribute ids, projections are inlined,
 * and filters and inner join conditions are one list of conjuncts.
 *
 * <p>Two blocks reading the same tables compare by {@link Expression#semanticEquals}. A table
 * read twice (a self-join) has no canonical form, so such blocks are refused.
 */
final class QueryBlock {
  private static final UUID CANONICAL_JVM = new UUID(0x466c6f65L, 0x52657772L);
  private static final Map<String, Long> CANONICAL_IDS = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT_ID = new AtomicLong(1L << 40);

  /** A table the block reads, and the snapshot it reads. */
  record TableRead(String uuid, String name, Optional<Long> snapshotId, boolean timeTravel, SparkTable table) {}

  private final List<String> leaves;
  private final Map<String, TableRead> tables;
  private final List<Expression> conjuncts;
  private final boolean aggregate;
  private final List<Expression> grouping;
  private final List<Expression> outputs;
  private final List<Attribute> outputAttributes;
  private final boolean hasExpressionOutput;

  private QueryBlock(
      List<String> leaves,
      Map<String, TableRead> tables,
      List<Expression> conjuncts,
      boolean aggregate,
      List<Expression> grouping,
      List<Expression> outputs,
      List<Attribute> outputAttributes,
      boolean hasExpressionOutput) {
    this.leaves = leaves;
    this.tables = tables;
    this.conjuncts = conjuncts;
    this.aggregate = aggregate;
    this.grouping = grouping;
    this.outputs = outputs;
    this.outputAttributes = outputAttributes;
    this.hasExpressionOutput = hasExpressionOutput;
  }

  /** Sorted leaf keys: table UUIDs and generators. */
  List<String> leaves() {
    return leaves;
  }

  /** The tables read, by UUID. */
  Map<String, TableRead> tables() {
    return tables;
  }

  List<Expression> conjuncts() {
    return conjuncts;
  }

  boolean isAggregate() {
    return aggregate;
  }

  /** Canonical grouping expressions (aggregate blocks only). */
  List<Expression> grouping() {
    return grouping;
  }

  /** Canonical output expressions, one per output column. */
  List<Expression> outputs() {
    return outputs;
  }

  /** The plan's own output attributes, one per output column. */
  List<Attribute> outputAttributes() {
    return outputAttributes;
  }

  /** True when the block only renames columns of one table: nothing an MV could save. */
  boolean trivial() {
    return !aggregate && conjuncts.isEmpty() && leaves.size() == 1 && !hasExpressionOutput;
  }

  /** The block rooted at {@code plan}, or why it has no canonical form. */
  static Result of(LogicalPlan plan) {
    try {
      return new Result(Optional.of(build(plan)), "");
    } catch (Unsupported e) {
      return new Result(Optional.empty(), e.getMessage());
    }
  }

  /** A block, or the reason there is none. */
  record Result(Optional<QueryBlock> block, String reason) {}

  private static QueryBlock build(LogicalPlan plan) {
    LogicalPlan top = plan;
    while (top instanceof SubqueryAlias) {
      top = ((SubqueryAlias) top).child();
    }
    if (top instanceof Aggregate) {
      Aggregate aggregate = (Aggregate) top;
      Canonicalizer spj = new Canonicalizer();
      spj.walk(aggregate.child());
      List<Expression> grouping = new ArrayList<>();
      for (Expression g : Scala.list(aggregate.groupingExpressions())) {
        grouping.add(spj.substitute(g));
      }
      List<Expression> outputs = new ArrayList<>();
      List<Attribute> attributes = new ArrayList<>();
      for (NamedExpression named : Scala.list(aggregate.aggregateExpressions())) {
        Expression e = (Expression) (Object) named;
        outputs.add(spj.substitute(e instanceof Alias ? ((Alias) e).child() : e));
        attributes.add(named.toAttribute());
      }
      return spj.block(true, grouping, outputs, attributes, true);
    }
    if (top instanceof Distinct) {
      Canonicalizer spj = new Canonicalizer();
      Map<ExprId, Expression> columns = spj.walk(((Distinct) top).child());
      List<Expression> outputs = new ArrayList<>();
      for (Attribute a : Scala.list(top.output())) {
        outputs.add(columns.get(a.exprId()));
      }
      return spj.block(true, outputs, outputs, Scala.list(top.output()), true);
    }
    if (top instanceof Filter && groupsBelow(((Filter) top).child())) {
      throw new Unsupported("a HAVING clause (a filter over the groups) is not matched");
    }
    Canonicalizer spj = new Canonicalizer();
    Map<ExprId, Expression> columns = spj.walk(top);
    List<Expression> outputs = new ArrayList<>();
    boolean expressions = false;
    for (Attribute a : Scala.list(top.output())) {
      Expression e = columns.get(a.exprId());
      outputs.add(e);
      expressions |= !(e instanceof AttributeReference);
    }
    return spj.block(false, List.of(), outputs, Scala.list(top.output()), expressions);
  }

  private static boolean groupsBelow(LogicalPlan plan) {
    while (plan instanceof Project || plan instanceof SubqueryAlias) {
      plan = plan.children().head();
    }
    return plan instanceof Aggregate;
  }

  static final class Unsupported extends RuntimeException {
    Unsupported(String message) {
      super(message, null, false, false);
    }
  }

  /** Walks an SPJ tree, mapping every attribute to its canonical expression. */
  private static final class Canonicalizer {
    private final Map<ExprId, Expression> columns = new HashMap<>();
    private final TreeSet<String> leaves = new TreeSet<>();
    private final Map<String, TableRead> tables = new LinkedHashMap<>();
    private final List<Expression> conjuncts = new ArrayList<>();

    QueryBlock block(
        boolean aggregate, List<Expression> grouping, List<Expression> outputs, List<Attribute> attributes, boolean expressions) {
      return new QueryBlock(
          List.copyOf(leaves), tables, conjuncts, aggregate, grouping, outputs, attributes, expressions);
    }

    Map<ExprId, Expression> walk(LogicalPlan plan) {
      if (plan instanceof SubqueryAlias) {
        return walk(((SubqueryAlias) plan).child());
      }
      if (plan instanceof DataSourceV2Relation) {
        leaf((DataSourceV2Relation) plan);
      } else if (plan instanceof Project) {
        walk(((Project) plan).child());
        for (NamedExpression named : Scala.list(((Project) plan).projectList())) {
          Expression e = (Expression) (Object) named;
          Expression definition = e instanceof Alias ? ((Alias) e).child() : e;
          requireDeterministic(definition);
          columns.put(named.exprId(), substitute(definition));
        }
      } else if (plan instanceof Filter) {
        walk(((Filter) plan).child());
        Expression condition = ((Filter) plan).condition();
        requireDeterministic(condition);
        split(substitute(condition));
      } else if (plan instanceof Join) {
        Join join = (Join) plan;
        if (!(join.joinType() instanceof Inner$) && !(join.joinType() instanceof Cross$)) {
          throw new Unsupported(join.joinType().sql() + " JOIN is not matched");
        }
        walk(join.left());
        walk(join.right());
        if (join.condition().isDefined()) {
          requireDeterministic(join.condition().get());
          split(substitute(join.condition().get()));
        }
      } else if (plan instanceof Generate) {
        Generate generate = (Generate) plan;
        walk(generate.child());
        Expression generator = substitute((Expression) (Object) generate.generator());
        requireDeterministic(generator);
        String key = "generate(" + generate.outer() + ", " + generator.canonicalized() + ")";
        if (!leaves.add(key)) {
          throw new Unsupported("the same generator is applied twice");
        }
        for (Attribute a : Scala.list(generate.generatorOutput())) {
          // A generator's columns by the query's aliases, which match in any case.
        columns.put(a.exprId(), canonical(key, a, a.name().toLowerCase(Locale.ROOT)));
        }
      } else if (plan instanceof Aggregate) {
        throw new Unsupported("a nested aggregate is not matched");
      } else {
        throw new Unsupported(plan.nodeName() + " is not matched");
      }
      return columns;
    }

    private void leaf(DataSourceV2Relation relation) {
      if (!(relation.table() instanceof SparkTable)) {
        throw new Unsupported(relation.table().name() + " is not an Iceberg table");
      }
      SparkTable table = (SparkTable) relation.table();
      if (isMetadataTable(table)) {
        throw new Unsupported(table.name() + " is a metadata table");
      }
      if (!relation.options().isEmpty()) {
        // Read options can select other data than the table's current rows (a snapshot, a branch,
        // a time) or change how it is read; the view's rows were computed without them.
        throw new Unsupported(table.name() + " is read with options " + new java.util.TreeSet<>(relation.options().keySet()));
      }
      String uuid = table.table().uuid().toString();
      if (!leaves.add(uuid)) {
        throw new Unsupported(table.name() + " is read twice");
      }
      boolean timeTravel = table.snapshotId() != null || table.branch() != null;
      tables.put(uuid, new TableRead(uuid, table.name(), Optional.ofNullable(table.snapshotId()), timeTravel, table));
      for (Attribute a : Scala.list(relation.output())) {
        // A table's columns by their exact names: the relation names them as the schema does,
        // whatever the query's spelling, and a case-sensitive session may read x and X apart.
        columns.put(a.exprId(), canonical(uuid, a, a.name()));
      }
    }

    /** {@code expression} with every attribute replaced by its canonical definition. */
    Expression substitute(Expression expression) {
      if (expression.exists(e -> e instanceof SubqueryExpression)) {
        throw new Unsupported("subqueries are not matched");
      }
      return io.floe.spark.Scala.replaceAttributes(
          expression,
          attribute -> {
            Expression definition = columns.get(attribute.exprId());
            if (definition == null) {
              throw new Unsupported("column " + attribute.name() + " comes from outside the block");
            }
            return definition;
          });
    }

    private void split(Expression condition) {
      if (condition instanceof And) {
        split(((And) condition).left());
        split(((And) condition).right());
      } else {
        conjuncts.add(condition);
      }
    }

    private static void requireDeterministic(Expression expression) {
      if (!expression.deterministic()) {
        throw new Unsupported("non-deterministic expression " + shown(expression) + " is not matched");
      }
      if (expression.exists(e -> e instanceof AggregateExpression)) {
        throw new Unsupported("an aggregate outside GROUP BY is not matched");
      }
    }
  }

  /** True for Iceberg's metadata tables ({@code t.snapshots}, {@code t.files}, ...), which have no identity of their own. */
  static boolean isMetadataTable(SparkTable table) {
    return table.table() instanceof org.apache.iceberg.BaseMetadataTable;
  }

  /** The canonical attribute for column {@code a} of leaf {@code key}. */
  private static AttributeReference canonical(String key, Attribute a, String column) {
    String name = key + "." + column;
    long id = CANONICAL_IDS.computeIfAbsent(name, n -> NEXT_ID.getAndIncrement());
    return new AttributeReference(name, a.dataType(), a.nullable(), Metadata.empty(), new ExprId(id, CANONICAL_JVM), Scala.seq());
  }

  /**
   * {@code e} as SQL for a user to read: canonical columns, which carry their table's UUID for
   * matching, by their column name.
   */
  static String shown(Expression e) {
    return e.transformUp(
            new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
              @Override
              public boolean isDefinedAt(Expression x) {
                return x instanceof AttributeReference a && CANONICAL_JVM.equals(a.exprId().jvmId());
              }

              @Override
              public Expression apply(Expression x) {
                AttributeReference a = (AttributeReference) x;
                String column = a.name().substring(a.name().lastIndexOf('.') + 1);
                return new AttributeReference(column, a.dataType(), a.nullable(), Metadata.empty(), a.exprId(), Scala.seq());
              }
            })
        .sql();
  }

  /** True when {@code e} references a canonical column (of a table or generator). */
  static boolean readsLeafColumns(Expression e) {
    return e.exists(x -> x instanceof AttributeReference && CANONICAL_JVM.equals(((AttributeReference) x).exprId().jvmId()));
  }
}
