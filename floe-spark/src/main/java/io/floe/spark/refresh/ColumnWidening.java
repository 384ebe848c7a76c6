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
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateSchema;
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
    Map<String, Type.PrimitiveType> widened = new LinkedHashMap<>();
    Map<String, Type> replaced = new LinkedHashMap<>();
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
      if (column.type().isPrimitiveType() && now.isPrimitiveType()
          && TypeUtil.isPromotionAllowed(column.type(), now.asPrimitiveType())) {
        widened.put(column.name(), now.asPrimitiveType());
        if (!StorageLayout.isHidden(column.name())) {
          described.add(column.name() + " from " + column.type() + " to " + now);
        }
        continue;
      }
      if (StorageLayout.isHidden(column.name())) {
        // Bookkeeping no reader sees, which the full refresh writes anew: a map keyed by the
        // widened values, whose keys Iceberg cannot widen, is replaced instead. Until the refresh
        // commits, the source's unrecorded schema change keeps the next refresh a full one.
        replaced.put(column.name(), now);
        continue;
      }
      throw new FloeException(
          "Cannot refresh " + mv + ": its definition now gives column " + column.name() + " the type " + now
              + ", which its " + column.type() + " column cannot hold without loss, and Iceberg widens a column only"
              + " from int to long, float to double or to a decimal's larger precision; the view keeps its rows."
              + " Define it again with CREATE OR REPLACE MATERIALIZED VIEW");
    }
    if (widened.isEmpty() && replaced.isEmpty()) {
      return Optional.empty();
    }
    UpdateSchema update = storage.updateSchema();
    widened.forEach(update::updateColumn);
    replaced.forEach((name, type) -> update.deleteColumn(name).addColumn(name, type));
    update.commit();
    catalog.invalidateSparkCache(mv.storageName());
    Map<String, Type.PrimitiveType> byLowerCaseName = new LinkedHashMap<>();
    widened.forEach((name, type) -> byLowerCaseName.put(name.toLowerCase(Locale.ROOT), type));
    widenView(mv.view(), byLowerCaseName);
    catalog.invalidateSparkCache(mv.name());
    MaterializedView reloaded = catalog.loadExisting(mv.name(), "refresh");
    if (described.isEmpty()) {
      return Optional.of(new Widened(reloaded, "bookkeeping columns retyped for the definition's new types"));
    }
    return Optional.of(new Widened(reloaded, "widened column " + String.join(", ", described)));
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
   * A new version of {@code view}: its columns named in {@code widened} (lower case) of the new
   * type, all else as it was.
   */
  private static void widenView(View view, Map<String, Type.PrimitiveType> widened) {
    List<Types.NestedField> columns = new ArrayList<>();
    boolean changed = false;
    for (Types.NestedField column : view.schema().columns()) {
      Type.PrimitiveType type = widened.get(column.name().toLowerCase(Locale.ROOT));
      changed |= type != null;
      columns.add(type == null ? column : Types.NestedField.from(column).ofType(type).build());
    }
    if (!changed) {
      return;
    }
    io.floe.spark.mv.ViewVersions.commit(view, view.currentVersion(), new Schema(columns));
  }
}
