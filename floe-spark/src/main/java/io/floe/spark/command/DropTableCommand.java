package io.floe.spark.command;

import io.floe.FloeException;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.DropTable;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code DROP TABLE} with the materialized views that read the table in mind: refuses while any
 * reads it unless {@code CASCADE} drops them first, and refuses to drop an MV's storage table.
 * The drop itself is Spark's, planned from the statement without {@code CASCADE}.
 */
public final class DropTableCommand extends SparkDropCommand<DropTable> {
  public DropTableCommand(DropTable statement, LogicalPlan sparkDrop) {
    super(statement, sparkDrop);
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    ResolvedName name;
    try {
      name = catalog.resolve(statement().name());
    } catch (FloeException notIceberg) {
      runSparkDrop(spark);
      return List.of();
    }
    Table table;
    try {
      table = name.catalog().loadTable(name.identifier());
    } catch (NoSuchTableException e) {
      // Not a table; IF EXISTS would pass over a materialized view of that name without a word.
      if (catalog.load(name).isPresent()) {
        throw new FloeException(
            "Cannot drop table " + name + ": it is a materialized view; use DROP MATERIALIZED VIEW");
      }
      runSparkDrop(spark);
      return List.of();
    }
    Optional<String> stored = catalog.viewStoredIn(name, table);
    if (stored.isPresent()) {
      throw new FloeException(
          "Cannot drop table " + name + ": it stores materialized view " + stored.get() + "; use DROP MATERIALIZED VIEW");
    }
    List<MaterializedView> direct = catalog.readersOf(name);
    if (!direct.isEmpty()) {
      if (!statement().cascade()) {
        throw new FloeException(
            "Cannot drop table "
                + name
                + ": materialized view"
                + (direct.size() == 1 ? " " : "s ")
                + direct.stream().map(Object::toString).collect(Collectors.joining(", "))
                + (direct.size() == 1 ? " reads" : " read")
                + " it; drop "
                + (direct.size() == 1 ? "it" : "them")
                + " first or use DROP TABLE ... CASCADE");
      }
      MaterializedViewDrop.dropAll(
          catalog, name.catalogName(), MaterializedViewDrop.readersFirst(catalog, name.catalogName(), java.util.Set.of(name.toString())));
    }
    runSparkDrop(spark);
    return List.of();
  }
}
