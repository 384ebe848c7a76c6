package io.floe.mv;

/**
 * Property keys that make an Iceberg view a materialized view, and that tie its storage table and
 * storage snapshots to it. These keys are Floe's on-disk contract; see the README's "On-disk
 * format" section.
 */
public final class MaterializedViewProperties {
  private MaterializedViewProperties() {}

  /**
   * View property: the storage table's identifier, {@code namespace.name}, in the view's catalog.
   * The Iceberg MV proposal puts this pointer in the view version; Iceberg 1.12 has no field for
   * it yet, so it lives here until it does.
   */
  public static final String STORAGE_TABLE = "materialized-view.storage-table";

  /** View property: the refresh schedule, as {@code Schedule.toSql()} writes it. */
  public static final String SCHEDULE = "floe.schedule";

  /** View property: {@code AUTO}, {@code INCREMENTAL} or {@code FULL}. */
  public static final String REFRESH_POLICY = "floe.refresh-policy";

  /** View and storage table property: true when only Floe may write the storage table. */
  public static final String MANAGED = "floe.managed";

  /** View property: the MV comment (the key Spark uses for view comments). */
  public static final String COMMENT = "comment";

  /** Storage table property: the MV this table stores, {@code namespace.name}. */
  public static final String MATERIALIZED_VIEW = "materialized-view.view";

  /** Storage table property: the MV's {@code PARTITIONED BY} items as written, {@code |}-separated. */
  public static final String PARTITIONED_BY = "floe.partitioned-by";

  /** Storage table properties Floe keeps itself: its MV, whether it is managed, its partitioning. */
  public static final java.util.Set<String> STORAGE_KEPT = java.util.Set.of(MATERIALIZED_VIEW, MANAGED, PARTITIONED_BY);

  /** Storage snapshot summary: {@code FULL} or {@code INCREMENTAL}. */
  public static final String SUMMARY_REFRESH_TYPE = "floe.refresh-type";

  /** Storage snapshot summary: why the refresh chose its type. */
  public static final String SUMMARY_REFRESH_REASON = "floe.refresh-reason";

  /** Suffix of a storage table's name after its MV's name. */
  public static final String STORAGE_TABLE_SUFFIX = "__storage";
}
