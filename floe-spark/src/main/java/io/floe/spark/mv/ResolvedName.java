package io.floe.spark.mv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;

/**
 * A name resolved to an Iceberg catalog of the session and an identifier inside it.
 *
 * @param catalogName the Spark catalog name, such as {@code lake}
 */
public record ResolvedName(String catalogName, Catalog catalog, TableIdentifier identifier) {

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

  /** {@code namespace.name}, without the catalog: the form stored in properties. */
  public String inCatalog() {
    return identifier.toString();
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

  public static TableIdentifier parseInCatalog(String text) {
    String[] levels = text.split("\\.");
    return TableIdentifier.of(
        Namespace.of(Arrays.copyOf(levels, levels.length - 1)), levels[levels.length - 1]);
  }

  @Override
  public String toString() {
    return catalogName + "." + identifier;
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
