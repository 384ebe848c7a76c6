package io.floe.spark.mv;

import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * A name resolved to an Iceberg catalog of the session and an identifier inside it.
 *
 * @param catalogName the Spark catalog name, such as {@code lake}
 */
public record ResolvedName(String catalogName, Catalog catalog, TableIdentifier identifier) {

  /**
   * Names the identifier as the catalog lists it. A JDBC catalog stores a namespace as its levels
   * joined by {@code .} and splits them at each dot when it reads them back, so there a level
   * {@code a.b} is the namespace {@code a} and its child {@code b}: the name takes the split form,
   * so that it equals the name of the same object found by listing the catalog.
   */
  public ResolvedName {
    if (catalog instanceof JdbcCatalog && identifier != null) {
      List<String> levels = new ArrayList<>();
      for (String level : identifier.namespace().levels()) {
        levels.addAll(Arrays.asList(level.split("\\.", -1)));
      }
      if (levels.size() != identifier.namespace().levels().length) {
        identifier = TableIdentifier.of(Namespace.of(levels.toArray(new String[0])), identifier.name());
      }
    }
  }

  /** Whether this name is a view (a materialized view among them) in a catalog that keeps views. */
  public boolean isView() {
    return catalog instanceof ViewCatalog views && views.viewExists(identifier);
  }

  /** The catalog's view API, or a clear error naming the catalog when it has none. */
  public ViewCatalog viewCatalog() {
    if (catalog instanceof ViewCatalog) {
      return (ViewCatalog) catalog;
    }
    throw new io.floe.FloeException(
        "Catalog '"
            + catalogName
            + "' ("
            + catalog.getClass().getSimpleName()
            + ") cannot store views, so it cannot hold materialized views; use a JDBC, REST, Nessie or Glue catalog");
  }

  public String name() {
    return identifier.name();
  }

  public List<String> namespace() {
    return Arrays.asList(identifier.namespace().levels());
  }

  /**
   * The namespace levels joined by {@code .}, a level backtick-quoted when it is not a plain
   * identifier, as Spark shows namespaces; empty text for the empty namespace.
   */
  public String namespaceText() {
    return namespace().isEmpty() ? "" : new QualifiedName(namespace()).toString();
  }

  /** The same catalog and namespace, another name. */
  public ResolvedName sibling(String name) {
    return new ResolvedName(catalogName, catalog, TableIdentifier.of(identifier.namespace(), name));
  }

  /** Another identifier in the same catalog. */
  public ResolvedName withIdentifier(TableIdentifier other) {
    return new ResolvedName(catalogName, catalog, other);
  }

  /** catalog, namespace levels and name: the multi-part name Spark resolves. */
  public List<String> parts() {
    List<String> parts = new ArrayList<>();
    parts.add(catalogName);
    parts.addAll(namespace());
    parts.add(name());
    return parts;
  }

  /**
   * {@code namespace.name}, without the catalog: the form stored in properties. A part that is not a
   * plain identifier (a dot, a space, a backtick in it) is backtick-quoted, so {@link
   * #parseInCatalog} reads the same parts back.
   */
  public String inCatalog() {
    List<String> parts = new ArrayList<>(namespace());
    parts.add(name());
    return new QualifiedName(parts).toString();
  }

  /** A name Spark's parser reads back as these exact parts. */
  public String quoted() {
    StringBuilder text = new StringBuilder();
    for (String part : parts()) {
      if (text.length() > 0) {
        text.append('.');
      }
      text.append('`').append(part.replace("`", "``")).append('`');
    }
    return text.toString();
  }

  /** Reads back {@link #inCatalog}; a plain {@code namespace.name} stored by older versions reads too. */
  public static TableIdentifier parseInCatalog(String text) {
    QualifiedName name = QualifiedName.parse(text);
    return TableIdentifier.of(Namespace.of(name.namespace().toArray(new String[0])), name.name());
  }

  /** {@code catalog.namespace.name}, a part backtick-quoted when it is not a plain identifier. */
  @Override
  public String toString() {
    return new QualifiedName(parts()).toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ResolvedName
        && ((ResolvedName) o).catalogName.equals(catalogName)
        && ((ResolvedName) o).identifier.equals(identifier);
  }

  @Override
  public int hashCode() {
    return catalogName.hashCode() * 31 + identifier.hashCode();
  }
}
