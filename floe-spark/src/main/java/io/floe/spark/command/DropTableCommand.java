package io.floe.spark.command;

import io.floe.FloeException;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.DropTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import scala.collection.immutable.Seq;

/**
 * {@code DROP TABLE} with the materialized views that read the table in mind: refuses while any
 * reads it unless {@code CASCADE} drops them first, and refuses to drop an MV's storage table.
 * The drop itself is Spark's, planned from the statement without {@code CASCADE}.
 */
public final class DropTableCommand extends FloeCommand<DropTable> {
  private final LogicalPlan sparkDrop;

  public DropTableCommand(DropTable statement, LogicalPlan sparkDrop) {
    super(statement, List.of());
    this.sparkDrop = sparkDrop;
  }


  /** Spark copies plan nodes through their constructor; the planned drop is its second argument. */
  @Override
  public Seq<Object> otherCopyArgs() {
    return Scala.seq(List.<Object>of(sparkDrop));
  }

  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    ResolvedName name;
    try {
      name = catalog.resolve(statement().name());
    } catch (FloeException notIceberg) {
      Dataset.ofRows(spark, sparkDrop);
      return List.of();
    }
    Table table;
    try {
      table = name.catalog().loadTable(name.identifier());
    } catch (NoSuchTableException e) {
      Dataset.ofRows(spark, sparkDrop);
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
      Map<String, MaterializedView> toDrop = new LinkedHashMap<>();
      for (MaterializedView reader : direct) {
        toDrop.put(reader.name().toString(), reader);
        for (MaterializedView further : RefreshMaterializedViewCommand.downstreamInOrder(catalog, reader)) {
          toDrop.put(further.name().toString(), further);
        }
      }
      List<MaterializedView> ordered = new ArrayList<>(toDrop.values());
      // Readers of readers were added after their sources; drop them first.
      Collections.reverse(ordered);
      ordered.forEach(view -> MaterializedViewDrop.drop(catalog, view));
    }
    Dataset.ofRows(spark, sparkDrop);
    return List.of();
  }
}
