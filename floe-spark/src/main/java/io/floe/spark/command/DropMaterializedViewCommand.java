package io.floe.spark.command;

import io.floe.FloeException;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.DropMaterializedView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.SparkSession;

/**
 * {@code DROP MATERIALIZED VIEW [IF EXISTS] name [CASCADE]}: removes the view and purges its
 * storage table. Refuses while other materialized views read it, unless CASCADE drops them too.
 */
public final class DropMaterializedViewCommand extends FloeCommand<DropMaterializedView> {

  public DropMaterializedViewCommand(DropMaterializedView statement) {
    super(statement, List.of());
  }


  @Override
  protected List<Row> execute(SparkSession spark) {
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    ResolvedName name = catalog.resolve(statement().name());
    Optional<MaterializedView> mv = catalog.load(name);
    if (mv.isEmpty()) {
      if (statement().ifExists()) {
        return List.of();
      }
      catalog.loadExisting(name, "drop materialized view");
    }
    List<MaterializedView> readers = RefreshMaterializedViewCommand.downstreamInOrder(catalog, mv.get());
    if (!readers.isEmpty() && !statement().cascade()) {
      throw new FloeException(
          "Cannot drop materialized view "
              + name
              + ": "
              + readers.stream().map(Object::toString).collect(Collectors.joining(", "))
              + " read"
              + (readers.size() == 1 ? "s" : "")
              + " it; drop "
              + (readers.size() == 1 ? "that" : "those")
              + " first or add CASCADE");
    }
    List<MaterializedView> toDrop = new ArrayList<>(readers);
    Collections.reverse(toDrop);
    toDrop.add(mv.get());
    MaterializedViewDrop.dropAll(catalog, name.catalogName(), toDrop);
    return List.of();
  }
}
