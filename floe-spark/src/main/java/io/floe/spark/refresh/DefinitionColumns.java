package io.floe.spark.refresh;

import io.floe.FloeException;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;

/**
 * Reads a materialized view's definition as the view's columns. Those are fixed when the view is
 * created, as Spark fixes a view's: the definition's columns are read by the names it gave them
 * then, so a {@code SELECT *} over a source that has since gained, reordered or lost columns still
 * gives the view's columns, each from the source column of its name. A definition that no longer
 * gives one of those names (a source column dropped or renamed) is refused, naming the column. A
 * column list at CREATE renames the columns; the view maps them by position to the names the
 * definition gave.
 */
public final class DefinitionColumns {
  private DefinitionColumns() {}

  /**
   * The projection that reads a definition giving the columns {@code given} as {@code mv}'s
   * columns, or empty when it gives them already, in order.
   *
   * @throws FloeException naming the view and the column, when the definition lacks one of them
   */
  public static Optional<List<String>> projection(MaterializedView mv, List<String> given) {
    return projection(mv, given, List.of());
  }

  /**
   * As {@link #projection(MaterializedView, List)}, for a definition whose select list ends with
   * the hidden key columns {@code hidden} ({@link io.floe.spark.ivm.HiddenKeys}), which it keeps
   * after the view's columns.
   */
  public static Optional<List<String>> projection(MaterializedView mv, List<String> given, List<String> hidden) {
    List<String> viewColumns = new ArrayList<>(mv.viewColumns());
    viewColumns.addAll(hidden);
    // Views that do not record the names (or whose names do not name one column each) are read by
    // position while the number of columns is the view's, and by the view's names once it is not.
    boolean byPosition = mv.queryColumns().isEmpty();
    List<String> named = new ArrayList<>(mv.queryColumns().orElse(mv.viewColumns()));
    named.addAll(hidden);
    if (given.size() == named.size() && (byPosition || equalIgnoringCase(given, named))) {
      return Optional.empty();
    }
    Set<String> givenLowerCase = given.stream().map(n -> n.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
    for (int i = 0; i < named.size(); i++) {
      String column = named.get(i);
      if (!givenLowerCase.contains(column.toLowerCase(Locale.ROOT))) {
        String asView = column.equalsIgnoreCase(viewColumns.get(i)) ? "" : " (the view's column " + viewColumns.get(i) + ")";
        throw new FloeException(
            mv + ": its definition no longer gives its column " + column + asView
                + " (a column of a source it reads was dropped or renamed)");
      }
    }
    return Optional.of(named);
  }

  /** {@code plan} with its columns chosen by name, as {@link #projection} gives them. */
  public static LogicalPlan select(LogicalPlan plan, List<String> columns) {
    List<NamedExpression> list = new ArrayList<>();
    for (String column : columns) {
      list.add(new UnresolvedAttribute(Scala.seq(column)));
    }
    return new Project(Scala.seq(list), plan);
  }

  private static boolean equalIgnoringCase(List<String> a, List<String> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!a.get(i).equalsIgnoreCase(b.get(i))) {
        return false;
      }
    }
    return true;
  }
}
