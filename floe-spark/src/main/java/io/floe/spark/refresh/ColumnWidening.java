package io.floe.spark.refresh;

import io.floe.FloeException;
import io.floe.spark.ivm.StorageLayout;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.spark.SparkSchemaUtil;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.View;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Follows a source column's widening into a materialized view. Iceberg widens a column in place
 * ({@code int} to {@code long}, {@code float} to {@code double}, a decimal's precision); a
 * definition reading it then gives wider values than the view's column holds. Writing them into the
 * old type would narrow them, losing digits or failing on overflow, so the full refresh that such a
 * change brings widens the storage table's column, and the view's, to the type the definition now
 * gives, as Iceberg allows, before it writes. A column whose type changed in another way (a
 * decimal's scale) cannot be followed in place: the refresh is refused, naming the column, and the
 * view keeps its rows. Widening changes no row, so it stays when the refresh then fails.
 */
final class ColumnWidening {
  private ColumnWidening() {}

  /** The view after widening, and what was widened, for the refresh's reason. */
  record Widened(MaterializedView mv, String description) {}

  /**
   * Widens {@code storage}'s columns, and the view's, to the types of {@code rows}, the rows a full
   * refresh writes; empty when every column already holds its rows' type.
   *
   * @throws FloeException naming the view and the column, when a type cannot be widened in place
   */
  static Optional<Widened> widen(MaterializedViewCatalog catalog, MaterializedView mv, Table storage, StructType rows) {
    Schema schema = storage.schema();
    List<Consumer<UpdateSchema>> changes = new ArrayList<>();
    Set<String> changedColumns = new HashSet<>();
    List<String> described = new ArrayList<>();
    for (StructField field : rows.fields()) {
      Types.NestedField column = schema.caseInsensitiveFindField(field.name());
      if (column == null) {
        continue;
      }
      Type now = SparkSchemaUtil.convert(field.dataType());
      if (fits(column.type(), now)) {
        continue;
      }
      boolean hidden = StorageLayout.isHidden(column.name());
      List<Consumer<UpdateSchema>> columnChanges = new ArrayList<>();
      List<String> columnDescribed = new ArrayList<>();
      if (evolve(column.name(), column.type(), now, columnChanges, columnDescribed)) {
        changes.addAll(columnChanges);
        if (!hidden) {
          described.addAll(columnDescribed);
        }
      } else if (hidden) {
        // Bookkeeping no reader sees, which the full refresh writes anew: a map keyed by the
        // widened values, whose keys Iceberg cannot widen, is replaced instead. Until the refresh
        // commits, the source's unrecorded schema change keeps the next refresh a full one.
        changes.add(update -> update.deleteColumn(column.name()).addColumn(column.name(), now));
      } else {
        throw new FloeException(
            "Cannot refresh " + mv + ": its definition now gives column " + column.name() + " the type " + now
                + ", which its " + column.type() + " column cannot hold without loss, and Iceberg widens a column"
                + " only from int to long, float to double, to a decimal's larger precision or by adding struct"
                + " fields; the view keeps its rows. Define it again with CREATE OR REPLACE MATERIALIZED VIEW");
      }
      changedColumns.add(column.name().toLowerCase(Locale.ROOT));
    }
    if (changes.isEmpty()) {
      return Optional.empty();
    }
    View view = mv.name().viewCatalog().loadView(mv.name().identifier());
    if (view.currentVersion().versionId() != mv.versionId()) {
      throw new CommitFailedException("Materialized view %s was redefined during its refresh", mv);
    }
    UpdateSchema update = storage.updateSchema();
    changes.forEach(change -> change.accept(update));
    update.commit();
    catalog.invalidateSparkCache(mv.storageName());
    int version = widenView(view, storage.schema(), changedColumns);
    catalog.invalidateSparkCache(mv.name());
    MaterializedView reloaded = catalog.loadExisting(mv.name(), "refresh");
    if (reloaded.versionId() != version) {
      throw new CommitFailedException("Materialized view %s was redefined during its refresh", mv);
    }
    if (described.isEmpty()) {
      return Optional.of(new Widened(reloaded, "bookkeeping columns retyped for the definition's new types"));
    }
    return Optional.of(new Widened(reloaded, "widened column " + String.join(", ", described)));
  }

  /**
   * Collects the schema changes that let a column of type {@code stored} at {@code path} hold
   * values of type {@code now}: promotions, and struct fields added (also inside arrays and map
   * values); false when there are none (another type, a field or map key gone or changed).
   */
  private static boolean evolve(
      String path, Type stored, Type now, List<Consumer<UpdateSchema>> changes, List<String> described) {
    if (fits(stored, now)) {
      return true;
    }
    if (stored.isPrimitiveType() && now.isPrimitiveType()) {
      if (!TypeUtil.isPromotionAllowed(stored, now.asPrimitiveType())) {
        return false;
      }
      changes.add(update -> update.updateColumn(path, now.asPrimitiveType()));
      described.add(path + " from " + stored + " to " + now);
      return true;
    }
    if (stored.isStructType() && now.isStructType()) {
      Types.StructType was = stored.asStructType();
      if (was.fields().stream().anyMatch(f -> now.asStructType().caseInsensitiveField(f.name()) == null)) {
        return false;
      }
      for (Types.NestedField field : now.asStructType().fields()) {
        Types.NestedField existing = was.caseInsensitiveField(field.name());
        if (existing == null) {
          changes.add(update -> update.addColumn(path, field.name(), field.type()));
          described.add(path + " gained " + field.name());
        } else if (!evolve(path + "." + existing.name(), existing.type(), field.type(), changes, described)) {
          return false;
        }
      }
      return true;
    }
    if (stored.isListType() && now.isListType()) {
      return evolve(path + ".element", stored.asListType().elementType(), now.asListType().elementType(), changes, described);
    }
    if (stored.isMapType() && now.isMapType() && fits(stored.asMapType().keyType(), now.asMapType().keyType())
        && fits(now.asMapType().keyType(), stored.asMapType().keyType())) {
      return evolve(path + ".value", stored.asMapType().valueType(), now.asMapType().valueType(), changes, described);
    }
    return false;
  }

  /** Whether a {@code now} value is written into a {@code stored} column as it is. */
  private static boolean fits(Type stored, Type now) {
    if (stored.isPrimitiveType() && now.isPrimitiveType()) {
      // Narrower values (an int into a long column) are written as they are.
      return stored.equals(now) || TypeUtil.isPromotionAllowed(now, stored.asPrimitiveType());
    }
    return SparkSchemaUtil.convert(stored).sameType(SparkSchemaUtil.convert(now));
  }

  /**
   * Commits a version of {@code view} whose columns named in {@code changed} (lower case) have their
   * types in {@code storage}, all else as it was; returns its id.
   */
  private static int widenView(View view, Schema storage, Set<String> changed) {
    StructType columns = SparkSchemaUtil.convert(view.schema());
    List<StructField> fields = new ArrayList<>();
    for (StructField column : columns.fields()) {
      Types.NestedField stored = changed.contains(column.name().toLowerCase(Locale.ROOT))
          ? storage.caseInsensitiveFindField(column.name()) : null;
      fields.add(stored == null ? column : new StructField(
          column.name(), SparkSchemaUtil.convert(stored.type()), column.nullable(), column.metadata()));
    }
    io.floe.spark.mv.ViewVersions.commit(
        view, view.currentVersion(), SparkSchemaUtil.convert(new StructType(fields.toArray(new StructField[0]))));
    return view.currentVersion().versionId();
  }
}
