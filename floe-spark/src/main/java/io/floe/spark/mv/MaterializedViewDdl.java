package io.floe.spark.mv;

import io.floe.mv.MaterializedViewProperties;
import io.floe.mv.OnViolation;
import io.floe.spark.refresh.StorageRetention;
import io.floe.sql.Expectation;
import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.types.Types;

/**
 * The {@code CREATE MATERIALIZED VIEW} statement that defines a materialized view as it is now,
 * for {@code SHOW CREATE TABLE}: its column names and comments, expectations, comment,
 * partitioning, the storage properties given to it (not those Floe and Iceberg set by default),
 * schedule, refresh policy and query. Running the statement defines an equal view.
 */
public final class MaterializedViewDdl {

  private MaterializedViewDdl() {}

  public static String of(MaterializedView mv) {
    Table storage = mv.storageTable();
    StringBuilder sql = new StringBuilder("CREATE ");
    if (mv.managed()) {
      sql.append("MANAGED ");
    }
    sql.append("MATERIALIZED VIEW ").append(new QualifiedName(mv.name().parts()));
    List<String> elements = columnElements(mv);
    for (Expectation expectation : mv.expectations()) {
      elements.add("CONSTRAINT " + identifier(expectation.name()) + " EXPECT (" + expectation.expression() + ")"
          + onViolation(expectation.onViolation()));
    }
    if (!elements.isEmpty()) {
      sql.append(" (\n  ").append(String.join(",\n  ", elements)).append(")");
    }
    mv.comment().ifPresent(c -> sql.append("\nCOMMENT ").append(literal(c)));
    String partitions = storage.properties().getOrDefault(MaterializedViewProperties.PARTITIONED_BY, "");
    if (!partitions.isEmpty()) {
      sql.append("\nPARTITIONED BY (").append(String.join(", ", partitions.split("\\|"))).append(")");
    }
    Map<String, String> given = givenProperties(storage);
    if (!given.isEmpty()) {
      List<String> pairs = new ArrayList<>();
      given.forEach((k, v) -> pairs.add(literal(k) + " = " + literal(v)));
      sql.append("\nTBLPROPERTIES (\n  ").append(String.join(",\n  ", pairs)).append(")");
    }
    mv.schedule().ifPresent(s -> sql.append("\nSCHEDULE REFRESH ").append(s.toSql()));
    if (mv.properties().containsKey(MaterializedViewProperties.REFRESH_POLICY)) {
      sql.append("\nREFRESH POLICY ").append(mv.refreshPolicy().name());
    }
    return sql.append("\nAS ").append(mv.query()).toString();
  }

  /**
   * The column list's columns: only when a column was renamed from the query's name (or the names
   * the query gave are not known) or has a comment.
   */
  private static List<String> columnElements(MaterializedView mv) {
    List<Types.NestedField> columns = mv.view().schema().columns();
    List<String> viewColumns = mv.viewColumns();
    Optional<List<String>> queryColumns = mv.queryColumns();
    // Names not recorded (or not recorded one per column, as a name with a comma is) may differ.
    boolean renamed = queryColumns.isEmpty() || !lowerCase(queryColumns.get()).equals(lowerCase(viewColumns));
    boolean commented = columns.stream().anyMatch(c -> c.doc() != null);
    List<String> elements = new ArrayList<>();
    if (renamed || commented) {
      for (Types.NestedField column : columns) {
        elements.add(identifier(column.name()) + (column.doc() == null ? "" : " COMMENT " + literal(column.doc())));
      }
    }
    return elements;
  }

  /**
   * The storage table's properties a {@code TBLPROPERTIES} clause gave it: all but those Floe keeps
   * itself, Spark's reserved ones ({@code owner}, ...) and the defaults Floe and Iceberg set at
   * creation, unless changed since.
   */
  private static Map<String, String> givenProperties(Table storage) {
    Map<String, String> defaults = new java.util.HashMap<>(StorageRetention.creationProperties());
    defaults.put(TableProperties.DELETE_MODE, "merge-on-read");
    defaults.put(TableProperties.UPDATE_MODE, "merge-on-read");
    defaults.put(TableProperties.MERGE_MODE, "merge-on-read");
    defaults.put(TableProperties.PARQUET_COMPRESSION, TableProperties.PARQUET_COMPRESSION_DEFAULT_SINCE_1_4_0);
    Map<String, String> given = new TreeMap<>();
    storage.properties().forEach((key, value) -> {
      boolean kept = org.apache.spark.sql.connector.catalog.CatalogV2Util.TABLE_RESERVED_PROPERTIES().contains(key)
          || MaterializedViewProperties.STORAGE_KEPT.contains(key);
      if (!kept && !value.equals(defaults.get(key))) {
        given.put(key, value);
      }
    });
    int formatVersion = ((HasTableOperations) storage).operations().current().formatVersion();
    if (formatVersion != 3) {
      given.put(TableProperties.FORMAT_VERSION, Integer.toString(formatVersion));
    }
    return given;
  }

  private static String onViolation(OnViolation onViolation) {
    return switch (onViolation) {
      case KEEP -> "";
      case DROP_ROW -> " ON VIOLATION DROP ROW";
      case FAIL_UPDATE -> " ON VIOLATION FAIL UPDATE";
    };
  }

  /** A name part as SQL: backtick-quoted unless it is a plain identifier. */
  private static String identifier(String name) {
    return new QualifiedName(List.of(name)).toString();
  }

  /** A string literal as Floe's and Spark's SQL read it (backslash escapes). */
  public static String literal(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }

  private static List<String> lowerCase(List<String> names) {
    return names.stream().map(n -> n.toLowerCase(Locale.ROOT)).toList();
  }
}
