package io.floe.spark.parser;

import io.floe.FloeException;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.sql.QualifiedName;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.ResolvedIdentifier;
import org.apache.spark.sql.catalyst.analysis.UnresolvedIdentifier;
import org.apache.spark.sql.catalyst.analysis.UnresolvedTable;
import org.apache.spark.sql.catalyst.analysis.UnresolvedTableOrView;
import org.apache.spark.sql.catalyst.analysis.UnresolvedView;
import org.apache.spark.sql.catalyst.plans.logical.AlterViewAs;
import org.apache.spark.sql.catalyst.plans.logical.CreateView;
import org.apache.spark.sql.catalyst.plans.logical.DropView;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.RefreshTable;
import org.apache.spark.sql.catalyst.plans.logical.RenameTable;
import org.apache.spark.sql.catalyst.plans.logical.SetViewProperties;
import org.apache.spark.sql.catalyst.plans.logical.ShowPartitions;
import org.apache.spark.sql.catalyst.plans.logical.UnsetViewProperties;
import org.apache.spark.sql.catalyst.plans.logical.views.CreateIcebergView;
import org.apache.spark.sql.catalyst.plans.logical.views.DropIcebergView;
import org.apache.spark.sql.catalyst.plans.logical.views.ResolvedV2View;

/**
 * Refuses Spark's plain view and table statements that would change a materialized view, or a
 * table one reads, behind Floe's back. An MV is an Iceberg view, so Spark's {@code DROP VIEW},
 * {@code CREATE OR REPLACE VIEW}, {@code ALTER VIEW ... AS | RENAME TO | SET/UNSET TBLPROPERTIES}
 * would otherwise drop it without its storage table or its readers' consent, replace its definition
 * under its stored rows, or change the properties Floe keeps. Renaming a table that MVs read would
 * leave them reading a table that no longer exists, as a drop would; renaming an MV's storage table
 * would cut the MV from its rows.
 */
final class ViewStatementGuard {
  private final SparkSession spark;

  ViewStatementGuard(SparkSession spark) {
    this.spark = spark;
  }

  void check(LogicalPlan plan) {
    // Iceberg's parser resolves the view statements of its catalogs into its own commands.
    if (plan instanceof DropIcebergView drop) {
      refuseOnMaterializedView(drop.child(), "DROP VIEW", "use DROP MATERIALIZED VIEW");
    } else if (plan instanceof CreateIcebergView create && create.replace()) {
      refuseOnMaterializedView(create.child(), "CREATE OR REPLACE VIEW", "use CREATE OR REPLACE MATERIALIZED VIEW");
    } else if (plan instanceof DropView drop) {
      refuseOnMaterializedView(drop.child(), "DROP VIEW", "use DROP MATERIALIZED VIEW");
    } else if (plan instanceof CreateView create && create.replace()) {
      refuseOnMaterializedView(create.child(), "CREATE OR REPLACE VIEW", "use CREATE OR REPLACE MATERIALIZED VIEW");
    } else if (plan instanceof AlterViewAs alter) {
      refuseOnMaterializedView(alter.child(), "ALTER VIEW ... AS", "use CREATE OR REPLACE MATERIALIZED VIEW");
    } else if (plan instanceof SetViewProperties set) {
      refuseOnMaterializedView(set.child(), "ALTER VIEW ... SET TBLPROPERTIES", "use ALTER MATERIALIZED VIEW ... SET TBLPROPERTIES");
    } else if (plan instanceof UnsetViewProperties unset) {
      refuseOnMaterializedView(
          unset.child(), "ALTER VIEW ... UNSET TBLPROPERTIES", "use ALTER MATERIALIZED VIEW ... UNSET TBLPROPERTIES");
    } else if (plan instanceof RefreshTable refresh) {
      // Spark fails on a view here with an internal error; Glue's users mean the MV's refresh.
      refuseOnMaterializedView(refresh.child(), "REFRESH TABLE", "use REFRESH MATERIALIZED VIEW to bring it up to date");
    } else if (plan instanceof ShowPartitions show) {
      refuseOnMaterializedView(
          show.table(),
          "SHOW PARTITIONS",
          mv -> "the partitions of its storage table are listed by SELECT * FROM " + mv.storageName() + ".partitions");
    } else if (plan instanceof RenameTable rename) {
      String statement = rename.isView() ? "ALTER VIEW ... RENAME TO" : "ALTER TABLE ... RENAME TO";
      refuseOnMaterializedView(
          rename.child(),
          statement,
          "a materialized view keeps its name; create it under the new name and drop this one");
      if (!rename.isView()) {
        refuseTableRename(rename.child());
      }
    }
  }

  private void refuseOnMaterializedView(LogicalPlan target, String statement, String instead) {
    refuseOnMaterializedView(target, statement, mv -> instead);
  }

  private void refuseOnMaterializedView(
      LogicalPlan target, String statement, java.util.function.Function<MaterializedView, String> instead) {
    Optional<List<String>> parts = nameParts(target);
    if (parts.isEmpty() || isTemporaryView(parts.get())) {
      return;
    }
    Optional<MaterializedView> mv = FloeSparkSqlParser.materializedView(spark, new QualifiedName(parts.get()));
    if (mv.isPresent()) {
      throw new FloeException("Cannot " + statement + " " + mv.get() + ": it is a materialized view; " + instead.apply(mv.get()));
    }
  }

  /** Refuses renaming a table that materialized views read, or an MV's storage table. */
  private void refuseTableRename(LogicalPlan target) {
    Optional<List<String>> parts = nameParts(target);
    if (parts.isEmpty() || isTemporaryView(parts.get())) {
      return;
    }
    MaterializedViewCatalog catalog = new MaterializedViewCatalog(spark);
    ResolvedName name;
    Table table;
    try {
      name = catalog.resolve(new QualifiedName(parts.get()));
      table = name.catalog().loadTable(name.identifier());
    } catch (FloeException | NoSuchTableException notAnIcebergTable) {
      return;
    }
    Optional<String> stored = catalog.viewStoredIn(name, table);
    if (stored.isPresent()) {
      throw new FloeException("Cannot rename table " + name + ": it stores materialized view " + stored.get());
    }
    List<MaterializedView> readers = catalog.readersOf(name);
    if (!readers.isEmpty()) {
      throw new FloeException(
          "Cannot rename table " + name + ": materialized view" + (readers.size() == 1 ? " " : "s ")
              + readers.stream().map(Object::toString).collect(Collectors.joining(", "))
              + (readers.size() == 1 ? " reads" : " read") + " it by name; drop "
              + (readers.size() == 1 ? "it" : "them") + " first, or create "
              + (readers.size() == 1 ? "it" : "them") + " again over the new name after the rename");
    }
  }

  private static Optional<List<String>> nameParts(LogicalPlan target) {
    if (target instanceof ResolvedIdentifier resolved) {
      return Optional.of(parts(resolved.catalog().name(), resolved.identifier()));
    }
    if (target instanceof ResolvedV2View view) {
      return Optional.of(parts(view.catalog().name(), view.identifier()));
    }
    if (target instanceof UnresolvedIdentifier identifier) {
      return Optional.of(Scala.list(identifier.nameParts()));
    }
    if (target instanceof UnresolvedView view) {
      return Optional.of(Scala.list(view.multipartIdentifier()));
    }
    if (target instanceof UnresolvedTable table) {
      return Optional.of(Scala.list(table.multipartIdentifier()));
    }
    if (target instanceof UnresolvedTableOrView tableOrView) {
      return Optional.of(Scala.list(tableOrView.multipartIdentifier()));
    }
    return Optional.empty();
  }

  private static List<String> parts(String catalog, org.apache.spark.sql.connector.catalog.Identifier identifier) {
    List<String> parts = new java.util.ArrayList<>();
    parts.add(catalog);
    parts.addAll(List.of(identifier.namespace()));
    parts.add(identifier.name());
    return parts;
  }

  /** A one-part name of a temporary view: Spark's statements act on that view first. */
  private boolean isTemporaryView(List<String> parts) {
    return parts.size() == 1
        && ((org.apache.spark.sql.classic.SparkSession) spark).sessionState().catalog().getTempView(parts.get(0)).isDefined();
  }
}
