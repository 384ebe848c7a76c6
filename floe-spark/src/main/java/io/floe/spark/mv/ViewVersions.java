package io.floe.spark.mv;

import org.apache.iceberg.Schema;
import org.apache.iceberg.view.ReplaceViewVersion;
import org.apache.iceberg.view.SQLViewRepresentation;
import org.apache.iceberg.view.View;
import org.apache.iceberg.view.ViewRepresentation;
import org.apache.iceberg.view.ViewVersion;

/** Commits view versions that keep another version's SQL. */
public final class ViewVersions {
  private ViewVersions() {}

  /**
   * Makes {@code view}'s current version one with {@code version}'s SQL representations, default
   * catalog and namespace, and {@code schema}. Iceberg reuses the id of an equal earlier version.
   */
  public static void commit(View view, ViewVersion version, Schema schema) {
    ReplaceViewVersion replace = view.replaceVersion().withSchema(schema).withDefaultNamespace(version.defaultNamespace());
    if (version.defaultCatalog() != null) {
      replace = replace.withDefaultCatalog(version.defaultCatalog());
    }
    for (ViewRepresentation representation : version.representations()) {
      if (representation instanceof SQLViewRepresentation sql) {
        replace = replace.withQuery(sql.dialect(), sql.sql());
      }
    }
    replace.commit();
  }
}
