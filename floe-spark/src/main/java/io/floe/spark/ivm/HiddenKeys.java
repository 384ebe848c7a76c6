package io.floe.spark.ivm;

import io.floe.spark.Scala;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedHaving;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.InSubquery;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.OuterReference;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import org.apache.spark.sql.catalyst.plans.logical.Window;

/**
 * Key columns a keyed definition ({@link KeyedShape}) needs but does not select. A view row of
 * such a definition is found again through its key: the group of a HAVING, the partition of a
 * window, the join key of an outer join, the column an IN or EXISTS subquery matches. A definition
 * that does not select that column ({@code SELECT o.id, c.segment FROM orders o LEFT JOIN customers
 * c ON o.customer_id = c.id}) keeps it anyway, in a hidden storage column ({@value #PREFIX}0, ...)
 * that readers never see: the refresh appends the column to the definition's select list, and the
 * view's rows are the definition's rows with those columns left out.
 *
 * <p>Appending a column to a select list with no DISTINCT over it, or a grouping column to the
 * select list of its aggregate, changes neither which rows there are nor how often each is there.
 * The columns are proposed when the view is created, and kept only when the definition with them
 * is keyed; the view records them ({@value #PROPERTY}) as select items, so each refresh appends the
 * same columns.
 */
public final class HiddenKeys {
  /** View property holding the appended select items, as SQL, or absent when there are none. */
  public static final String PROPERTY = "floe.hidden-keys";

  /** The prefix of the hidden key columns' names, followed by their position among them. */
  public static final String PREFIX = StorageLayout.HIDDEN_PREFIX + "hkey_";

  private final List<NamedExpression> items;

  private HiddenKeys(List<NamedExpression> items) {
    this.items = List.copyOf(items);
  }

  /** No hidden key columns. */
  public static HiddenKeys none() {
    return new HiddenKeys(List.of());
  }

  /** The hidden keys recorded as {@link #PROPERTY}: {@code null} or blank for none. */
  public static HiddenKeys parse(String property) {
    if (property == null || property.isBlank()) {
      return none();
    }
    LogicalPlan select = CatalystSqlParser$.MODULE$.parseQuery("SELECT " + property);
    if (!(select instanceof Project project)) {
      throw new IllegalArgumentException("not a select list: " + property);
    }
    return new HiddenKeys(Scala.list(project.projectList()));
  }

  public boolean isEmpty() {
    return items.isEmpty();
  }

  /** The hidden columns' names, in order. */
  public List<String> columns() {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      names.add(PREFIX + i);
    }
    return names;
  }

  /**
   * The hidden columns as EXPLAIN names them: the column each keeps, by its table's last name
   * part or alias, marked hidden.
   */
  public List<String> described() {
    List<String> names = new ArrayList<>();
    for (NamedExpression item : items) {
      Expression value = item instanceof Alias alias ? alias.child() : (Expression) (Object) item;
      if (value instanceof UnresolvedAttribute attribute && attribute.nameParts().size() > 2) {
        List<String> parts = Scala.list(attribute.nameParts());
        value = new UnresolvedAttribute(Scala.seq(parts.subList(parts.size() - 2, parts.size())));
      }
      names.add(value.sql() + " (hidden)");
    }
    return names;
  }

  /** The value of {@link #PROPERTY}: the select items as SQL. */
  public String toProperty() {
    return items.stream().map(item -> ((Expression) (Object) item).sql()).collect(Collectors.joining(", "));
  }

  /**
   * The parsed definition with the hidden key columns appended to its select list, or the
   * definition itself when there are none.
   *
   * @throws IllegalArgumentException when the definition has no select list to append them to
   */
  public LogicalPlan appendTo(LogicalPlan parsed) {
    if (items.isEmpty()) {
      return parsed;
    }
    return appended(parsed).orElseThrow(() -> new IllegalArgumentException(
        "the definition has no select list to append the hidden key columns " + toProperty() + " to"));
  }

  private Optional<LogicalPlan> appended(LogicalPlan parsed) {
    if (parsed instanceof UnresolvedWith with) {
      return appended(with.child()).map(child -> new UnresolvedWith(child, with.cteRelations(), with.allowRecursion()));
    }
    if (parsed instanceof UnresolvedHaving having) {
      return appended(having.child()).map(child -> new UnresolvedHaving(having.havingCondition(), child));
    }
    if (parsed instanceof Project project) {
      return Optional.of(new Project(Scala.seq(concat(Scala.list(project.projectList()), items)), project.child()));
    }
    if (parsed instanceof Aggregate aggregate) {
      return Optional.of(aggregate.copy(
          aggregate.groupingExpressions(),
          Scala.seq(concat(Scala.list(aggregate.aggregateExpressions()), items)),
          aggregate.child(),
          aggregate.hint()));
    }
    return Optional.empty();
  }

  /**
   * The key columns to try for a definition that {@link KeyedShape} finds keyed but whose key is
   * not selected: the columns its keyed operators are keyed on (grouping columns, window
   * partitions, join equalities, the values IN and correlated EXISTS subqueries match) that the
   * select list could name and does not. Empty when there are none or the definition's select list
   * cannot take them. The caller checks that the definition with them is keyed.
   *
   * @param parsed the definition as parsed
   * @param definition the definition, analyzed
   */
  public static Optional<HiddenKeys> propose(LogicalPlan parsed, LogicalPlan definition) {
    // Common table expressions are looked into as DefinitionShape classifies them: inlined.
    LogicalPlan analyzed = new org.apache.spark.sql.catalyst.optimizer.InlineCTE(true, false).apply(definition);
    LogicalPlan target = parsed;
    while (target instanceof UnresolvedWith || target instanceof UnresolvedHaving) {
      target = target.children().head();
    }
    List<Attribute> scope;
    if (target instanceof Project && analyzed instanceof Project root) {
      scope = Scala.list(root.child().output());
    } else if (target instanceof Aggregate) {
      Optional<Aggregate> aggregate = topAggregate(analyzed);
      if (aggregate.isEmpty()) {
        return Optional.empty();
      }
      // Only grouping columns can be selected next to the aggregates.
      scope = new ArrayList<>();
      for (Expression group : Scala.list(aggregate.get().groupingExpressions())) {
        if (group instanceof Attribute attribute) {
          scope.add(visibleAs(attribute, Scala.list(aggregate.get().child().output())));
        }
      }
    } else {
      return Optional.empty();
    }
    List<ExprId> selected = Scala.list(analyzed.output()).stream().map(Attribute::exprId).toList();
    Map<ExprId, Attribute> wanted = new LinkedHashMap<>();
    for (Attribute key : keyAttributes(analyzed)) {
      for (Attribute visible : scope) {
        if (visible.exprId().equals(key.exprId()) && !selected.contains(key.exprId())) {
          wanted.putIfAbsent(key.exprId(), visible);
        }
      }
    }
    if (wanted.isEmpty()) {
      return Optional.empty();
    }
    List<NamedExpression> items = new ArrayList<>();
    for (Attribute attribute : wanted.values()) {
      List<String> nameParts = qualifiedName(attribute, scope);
      items.add(new Alias(
          new UnresolvedAttribute(Scala.seq(nameParts)), PREFIX + items.size(),
          NamedExpression.newExprId(), Scala.seq(), Scala.none(), Scala.seq()));
    }
    return Optional.of(new HiddenKeys(items));
  }

  /**
   * The name of {@code attribute} qualified by the shortest suffix of its qualifier that tells it
   * apart in {@code scope}, at least the table's name or alias ({@code o.cust}, {@code
   * orders.cust}, then {@code shop.orders.cust}): the view keeps the name, and an unqualified one
   * would become ambiguous when another source gains a column of that name. The refresh reads a
   * changed source under its table's name, so a longer qualifier than needed would not resolve.
   */
  private static List<String> qualifiedName(Attribute attribute, List<Attribute> scope) {
    List<String> qualifier = Scala.list(attribute.qualifier());
    int parts = Math.min(1, qualifier.size());
    while (parts < qualifier.size() && !tellsApart(attribute, qualifier.subList(qualifier.size() - parts, qualifier.size()), scope)) {
      parts++;
    }
    List<String> name = new ArrayList<>(qualifier.subList(qualifier.size() - parts, qualifier.size()));
    name.add(attribute.name());
    return name;
  }

  /** Whether {@code attribute}'s name qualified by {@code suffix} names one attribute of {@code scope}. */
  private static boolean tellsApart(Attribute attribute, List<String> suffix, List<Attribute> scope) {
    return scope.stream()
        .filter(a -> a.name().equalsIgnoreCase(attribute.name()) && endsWith(Scala.list(a.qualifier()), suffix))
        .count() == 1;
  }

  private static boolean endsWith(List<String> qualifier, List<String> suffix) {
    if (qualifier.size() < suffix.size()) {
      return false;
    }
    List<String> tail = qualifier.subList(qualifier.size() - suffix.size(), qualifier.size());
    for (int i = 0; i < suffix.size(); i++) {
      if (!tail.get(i).equalsIgnoreCase(suffix.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** The aggregate under the definition's top projections and filters (HAVING's), if any. */
  private static Optional<Aggregate> topAggregate(LogicalPlan analyzed) {
    return KeyedShape.belowTopSelect(analyzed) instanceof Aggregate aggregate ? Optional.of(aggregate) : Optional.empty();
  }

  /** {@code attribute} as {@code scope} has it (with the qualifier it is named by there). */
  private static Attribute visibleAs(Attribute attribute, List<Attribute> scope) {
    return scope.stream().filter(a -> a.exprId().equals(attribute.exprId())).findFirst().orElse(attribute);
  }

  /**
   * The attributes a keyed operator of the plan is keyed on: grouping columns, window partition
   * columns, the columns of join equalities and the outer values of IN and EXISTS subqueries.
   */
  private static List<Attribute> keyAttributes(LogicalPlan analyzed) {
    List<Attribute> keys = new ArrayList<>();
    analyzed.foreach(node -> {
      if (node instanceof Aggregate aggregate) {
        attributes(Scala.list(aggregate.groupingExpressions()), keys);
      } else if (node instanceof Window window) {
        attributes(Scala.list(window.partitionSpec()), keys);
      } else if (node instanceof Join join && join.condition().isDefined()) {
        join.condition().get().foreach(e -> {
          if (e instanceof EqualTo equal) {
            attributes(List.of(equal.left(), equal.right()), keys);
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
      }
      for (Expression expression : Scala.list(node.expressions())) {
        expression.foreach(e -> {
          if (e instanceof InSubquery in) {
            attributes(Scala.list(in.values()), keys);
          } else if (e instanceof SubqueryExpression subquery) {
            subquery.plan().foreach(inner -> {
              for (Expression condition : Scala.list(inner.expressions())) {
                condition.foreach(c -> {
                  if (c instanceof OuterReference outer && outer.e() instanceof Attribute attribute) {
                    keys.add(attribute);
                  }
                  return scala.runtime.BoxedUnit.UNIT;
                });
              }
              return scala.runtime.BoxedUnit.UNIT;
            });
          }
          return scala.runtime.BoxedUnit.UNIT;
        });
      }
      return scala.runtime.BoxedUnit.UNIT;
    });
    return keys;
  }

  private static void attributes(List<Expression> expressions, List<Attribute> into) {
    for (Expression expression : expressions) {
      if (expression instanceof Attribute attribute) {
        into.add(attribute);
      }
    }
  }

  private static <T> List<T> concat(List<? extends T> a, List<? extends T> b) {
    List<T> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }
}
