package io.floe.spark.mv;

import io.floe.FloeException;
import io.floe.graph.DependencyGraph;
import io.floe.mv.MaterializedViewProperties;
import io.floe.sql.QualifiedName;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import io.floe.spark.Scala;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.catalog.ViewCatalog;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.spark.source.HasIcebergCatalog;
import org.apache.iceberg.view.View;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;

/**
 * Finds materialized views in the Iceberg catalogs of a Spark session. Names resolve as Spark
 * resolves them: a leading registered catalog name, else the current catalog; a single part,
 * the current namespace.
 */
public final class MaterializedViewCatalog {
  private static final Map<String, Catalog> CATALOGS = new ConcurrentHashMap<>();

  private final SparkSession spark;

  public MaterializedViewCatalog(SparkSession spark) {
    this.spark = spark;
  }

  private CatalogManager catalogs() {
    return ((org.apache.spark.sql.classic.SparkSession) spark).sessionState().catalogManager();
  }

  /** Resolves a name against the session's current catalog and namespace. */
  public ResolvedName resolve(QualifiedName name) {
    return resolve(name.parts(), null, null);
  }

  /** Resolves a multi-part name, with a default catalog and namespace for partial names. */
  public ResolvedName resolve(List<String> parts, String defaultCatalog, List<String> defaultNamespace) {
    CatalogManager catalogs = catalogs();
    String catalogName;
    List<String> rest;
    if (parts.size() > 1 && catalogs.isCatalogRegistered(parts.get(0))) {
      catalogName = parts.get(0);
      rest = parts.subList(1, parts.size());
    } else {
      catalogName = defaultCatalog != null ? defaultCatalog : catalogs.currentCatalog().name();
      rest = parts;
    }
    if (rest.size() == 1) {
      List<String> namespace =
          defaultNamespace != null
              ? defaultNamespace
              : catalogName.equals(catalogs.currentCatalog().name())
                  ? Arrays.asList(catalogs.currentNamespace())
                  : List.of();
      rest = new ArrayList<>(namespace);
      rest.add(parts.get(parts.size() - 1));
    }
    Catalog catalog = icebergCatalog(catalogName, new QualifiedName(parts).toString());
    TableIdentifier identifier =
        TableIdentifier.of(
            Namespace.of(rest.subList(0, rest.size() - 1).toArray(new String[0])), rest.get(rest.size() - 1));
    return new ResolvedName(catalogName, catalog, identifier);
  }

  /**
   * The Iceberg catalog behind a Spark catalog name, or empty for other catalogs.
   *
   * <p>Floe builds its own instance from the Spark catalog's settings rather than borrowing the
   * Spark catalog's: that one may be wrapped in a table cache (which hides views and can serve
   * stale snapshots), and refresh decisions need the catalog's current state.
   */
  public Optional<Catalog> icebergCatalog(String catalogName) {
    CatalogPlugin plugin;
    try {
      plugin = catalogs().catalog(catalogName);
    } catch (Exception e) { // Spark's CatalogNotFoundException is checked, thrown undeclared
      return Optional.empty();
    }
    if (!(plugin instanceof HasIcebergCatalog)) {
      return Optional.empty();
    }
    String prefix = "spark.sql.catalog." + catalogName + ".";
    Map<String, String> options = new TreeMap<>();
    Scala.list(spark.conf().getAll().toList())
        .forEach(
            entry -> {
              if (entry._1().startsWith(prefix)) {
                options.put(entry._1().substring(prefix.length()), entry._2());
              }
            });
    String key = catalogName + options;
    return Optional.of(
        CATALOGS.computeIfAbsent(
            key,
            k ->
                CatalogUtil.buildIcebergCatalog(
                    catalogName,
                    options,
                    ((org.apache.spark.sql.classic.SparkSession) spark).sessionState().newHadoopConf())));
  }

  /**
   * Drops the Spark catalog's cached copy of a table, so that Spark's next read of it, time travel
   * included, sees the snapshots Floe has just pinned.
   */
  public void invalidateSparkCache(ResolvedName name) {
    CatalogPlugin plugin = catalogs().catalog(name.catalogName());
    if (plugin instanceof TableCatalog) {
      ((TableCatalog) plugin)
          .invalidateTable(Identifier.of(name.identifier().namespace().levels(), name.name()));
    }
  }

  private Catalog icebergCatalog(String catalogName, String forName) {
    return icebergCatalog(catalogName)
        .orElseThrow(
            () ->
                new FloeException(
                    "Cannot use "
                        + forName
                        + ": catalog '"
                        + catalogName
                        + "' is not an Iceberg catalog (configure spark.sql.catalog."
                        + catalogName
                        + "=org.apache.iceberg.spark.SparkCatalog)"));
  }

  /** The materialized view with this name, or empty when there is none (a table or plain view included). */
  public Optional<MaterializedView> load(ResolvedName name) {
    if (!(name.catalog() instanceof ViewCatalog)) {
      return Optional.empty();
    }
    ViewCatalog views = (ViewCatalog) name.catalog();
    try {
      View view = views.loadView(name.identifier());
      return MaterializedView.isMaterializedView(view)
          ? Optional.of(new MaterializedView(name, view))
          : Optional.empty();
    } catch (NoSuchViewException | NoSuchNamespaceException e) {
      return Optional.empty();
    }
  }

  public Optional<MaterializedView> load(QualifiedName name) {
    return load(resolve(name));
  }

  /** The materialized view with this name, or an error saying it does not exist. */
  public MaterializedView loadExisting(ResolvedName name, String action) {
    return load(name)
        .orElseThrow(
            () -> {
              String what =
                  name.catalog().tableExists(name.identifier())
                      ? "it is a table, not a materialized view"
                      : isPlainView(name) ? "it is a view, not a materialized view" : "it does not exist" + missingPlace(name);
              return new FloeException("Cannot " + action + " " + name + ": " + what);
            });
  }

  /**
   * Why a name that does not exist names nothing, when its namespace is missing too: a first part
   * that is no catalog of this session was taken as a namespace (as Spark does), so say which
   * catalogs there are. Empty when the namespace exists.
   */
  private String missingPlace(ResolvedName name) {
    Namespace namespace = name.identifier().namespace();
    try {
      if (!(name.catalog() instanceof SupportsNamespaces) || ((SupportsNamespaces) name.catalog()).namespaceExists(namespace)) {
        return "";
      }
    } catch (RuntimeException e) {
      // A catalog that cannot say (access denied, a namespace it cannot nest): only the hint is lost.
      return "";
    }
    String hint = " (namespace " + namespace + " does not exist in catalog " + name.catalogName();
    if (namespace.levels().length > 1 && !catalogs().isCatalogRegistered(namespace.level(0))) {
      java.util.Set<String> names = new java.util.TreeSet<>();
      for (String key : scala.jdk.javaapi.CollectionConverters.asJava(spark.conf().getAll()).keySet()) {
        if (key.startsWith("spark.sql.catalog.") && key.indexOf('.', "spark.sql.catalog.".length()) < 0) {
          names.add(key.substring("spark.sql.catalog.".length()));
        }
      }
      hint += "; " + namespace.level(0) + " is not a catalog of this session, whose catalogs are "
          + String.join(", ", names);
    }
    return hint + ")";
  }

  private static boolean isPlainView(ResolvedName name) {
    return name.catalog() instanceof ViewCatalog && ((ViewCatalog) name.catalog()).viewExists(name.identifier());
  }

  /** Materialized views directly in one namespace, by name. */
  public List<MaterializedView> list(String catalogName, Namespace namespace) {
    Catalog catalog = icebergCatalog(catalogName, catalogName + "." + namespace);
    if (!(catalog instanceof ViewCatalog)) {
      return List.of();
    }
    List<MaterializedView> found = new ArrayList<>();
    List<TableIdentifier> identifiers;
    try {
      identifiers = new ArrayList<>(((ViewCatalog) catalog).listViews(namespace));
    } catch (NoSuchNamespaceException e) {
      throw new FloeException("Namespace " + catalogName + "." + namespace + " does not exist", e);
    }
    identifiers.sort((a, b) -> a.name().compareTo(b.name()));
    for (TableIdentifier identifier : identifiers) {
      load(new ResolvedName(catalogName, catalog, identifier)).ifPresent(found::add);
    }
    return found;
  }

  /** Every materialized view of a catalog, in all namespaces. */
  public List<MaterializedView> listAll(String catalogName) {
    Catalog catalog = icebergCatalog(catalogName, catalogName);
    List<MaterializedView> found = new ArrayList<>();
    if (catalog instanceof SupportsNamespaces) {
      for (Namespace namespace : descendants((SupportsNamespaces) catalog, Namespace.empty())) {
        found.addAll(list(catalogName, namespace));
      }
    }
    return found;
  }

  /** The namespaces below {@code parent}, at any depth, each before its children. */
  public static List<Namespace> descendants(SupportsNamespaces catalog, Namespace parent) {
    List<Namespace> all = new ArrayList<>();
    for (Namespace child : catalog.listNamespaces(parent)) {
      all.add(child);
      all.addAll(descendants(catalog, child));
    }
    return all;
  }

  /**
   * The name, with its catalog, of the materialized view whose rows {@code table} (named {@code
   * name}) stores, or empty when it stores none. A storage table whose view is gone (dropped by
   * another engine) is an ordinary table now, so it is empty too.
   */
  public Optional<String> viewStoredIn(ResolvedName name, Table table) {
    String owner = table.properties().get(MaterializedViewProperties.MATERIALIZED_VIEW);
    if (owner == null) {
      return Optional.empty();
    }
    ResolvedName view;
    try {
      view = name.withIdentifier(ResolvedName.parseInCatalog(owner));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // not a name Floe wrote: no view of Floe's owns it
    }
    return load(view).map(mv -> mv.name().toString());
  }

  /** Every materialized view of a catalog, by its full name, in the order {@link #listAll} gives. */
  public Map<String, MaterializedView> byName(String catalogName) {
    Map<String, MaterializedView> views = new LinkedHashMap<>();
    listAll(catalogName).forEach(mv -> views.put(mv.name().toString(), mv));
    return views;
  }

  /** Each of {@code views} as a node, with an edge to it from each source it reads, by full name. */
  public static DependencyGraph<String> dependencies(Collection<MaterializedView> views) {
    DependencyGraph<String> graph = new DependencyGraph<>();
    for (MaterializedView mv : views) {
      graph.addNode(mv.name().toString());
      mv.sourceNames().forEach(source -> graph.addEdge(source, mv.name().toString()));
    }
    return graph;
  }

  /**
   * Materialized views whose definition reads {@code source} (as a source, or only at a snapshot
   * it names: {@link MaterializedView#dependencyNames()}), in its catalog and every other
   * Iceberg catalog of the session (an MV may read another catalog's tables and views).
   */
  public List<MaterializedView> readersOf(ResolvedName source) {
    return readersOf(source, true);
  }

  /**
   * As {@link #readersOf(ResolvedName)}; {@code strict} false passes over another catalog that
   * cannot be listed (for work that can do without its readers), instead of failing.
   */
  public List<MaterializedView> readersOf(ResolvedName source, boolean strict) {
    List<MaterializedView> readers = new ArrayList<>();
    for (MaterializedView mv : byNameWithOtherCatalogs(source.catalogName(), strict).values()) {
      if (mv.dependencyNames().contains(source.toString())) {
        readers.add(mv);
      }
    }
    return readers;
  }

  /**
   * Every materialized view of {@code catalogName} and of the session's other Iceberg catalogs, by
   * full name: the views that may read one of {@code catalogName}'s.
   *
   * @param strict whether another catalog that cannot be listed fails the call (a refusal that
   *     must see every reader) or is logged and passed over (work that can do without them)
   */
  public Map<String, MaterializedView> byNameWithOtherCatalogs(String catalogName, boolean strict) {
    Map<String, MaterializedView> views = byName(catalogName);
    for (String other : icebergCatalogNames()) {
      if (other.equals(catalogName)) {
        continue;
      }
      try {
        views.putAll(byName(other));
      } catch (RuntimeException e) {
        if (strict) {
          throw new FloeException("Cannot tell which materialized views of catalog " + other + " read " + catalogName
              + "'s tables and views: " + e.getMessage(), e);
        }
        org.slf4j.LoggerFactory.getLogger(MaterializedViewCatalog.class)
            .warn("Cannot list the materialized views of catalog {}; those reading {}'s are not found", other, catalogName, e);
      }
    }
    return views;
  }

  /** The session's catalogs ({@code spark.sql.catalog.<name>}) that are Iceberg catalogs, by name. */
  public List<String> icebergCatalogNames() {
    String prefix = "spark.sql.catalog.";
    Set<String> names = new java.util.TreeSet<>();
    Scala.list(spark.conf().getAll().toList()).forEach(entry -> {
      String key = entry._1();
      if (key.startsWith(prefix) && !key.substring(prefix.length()).contains(".")) {
        names.add(key.substring(prefix.length()));
      }
    });
    // By the configured class first: starting a catalog that is not Iceberg's only to learn so costs.
    return names.stream().filter(name -> isIcebergClass(spark.conf().get(prefix + name))).filter(name -> icebergCatalog(name).isPresent()).toList();
  }

  private static boolean isIcebergClass(String className) {
    try {
      return HasIcebergCatalog.class.isAssignableFrom(
          Class.forName(className, false, Thread.currentThread().getContextClassLoader()));
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
