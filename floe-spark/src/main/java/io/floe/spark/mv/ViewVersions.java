package io.floe.spark.mv;

import org.apache.iceberg.Schema;
import org.apache.iceberg.view.BaseView;
import org.apache.iceberg.view.ReplaceViewVersion;
import org.apache.iceberg.view.SQLViewRepresentation;
import org.apache.iceberg.view.View;
import org.apache.iceberg.view.ViewMetadata;
import org.apache.iceberg.view.ViewOperations;
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

  /**
   * Makes {@code version}, an earlier version of {@code view}, its current version again, with its
   * own id, so that what was recorded against that id (a refresh state) still matches. Committing
   * its SQL as a new version would not do: Iceberg reuses an equal version's id only when the
   * version summaries are equal too, and Spark's summary names the application that wrote it, so
   * from another process the old SQL came back as a new version. When the catalog no longer keeps
   * that version, its SQL is committed as a new one.
   */
  public static void restore(View view, ViewVersion version, Schema schema) {
    if (view instanceof BaseView base) {
      ViewOperations operations = base.operations();
      ViewMetadata current = operations.current();
      if (current.versionsById().containsKey(version.versionId())) {
        if (current.currentVersionId() != version.versionId()) {
          operations.commit(current, ViewMetadata.buildFrom(current).setCurrentVersionId(version.versionId()).build());
        }
        return;
      }
    }
    commit(view, version, schema);
  }
}
