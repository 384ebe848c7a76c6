package io.floe.spark.pipeline;

import io.floe.FloeException;
import io.floe.graph.DependencyGraph;
import io.floe.pipeline.PipelineProject;
import io.floe.pipeline.PipelineStatement;
import io.floe.spark.Scala;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import io.floe.spark.refresh.SourcePinning;
import io.floe.sql.CreateMaterializedView;
import io.floe.spark.ingest.StreamFlow;
import io.floe.spark.ingest.StreamedQuery;
import io.floe.sql.CreateFlow;
import io.floe.sql.CreateStreamingTable;
import io.floe.sql.CreateTableFedStreamingTable;
import io.floe.sql.FileSource;
import io.floe.sql.FloeStatement;
import io.floe.sql.FloeStatementParser;
import io.floe.sql.QualifiedName;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.UnresolvedWith;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The datasets a pipeline project defines and the edges between them, read from its statements
 * without touching data. Statement problems (syntax, statements a pipeline cannot hold, unknown
 * catalogs, a dataset defined twice) are collected, not thrown, so that all of them can be shown.
 *
 * <p>{@code USE CATALOG}, {@code USE SCHEMA} and {@code SET} apply to the statements after them in
 * the same file, as in Spark Declarative Pipelines; each file starts from the project's catalog and
 * namespace. A {@code CREATE TEMPORARY VIEW} is private to the pipeline: the materialized views that
 * read it get its query inlined as a common table expression, so no view is published.
 *
 * <p>A streaming table fed by tables depends on what its flows read: its own {@code AS} query and
 * every {@code CREATE FLOW} into it, each streaming one table and maybe joining static ones.
 */
public final class PipelineGraph {
  private static final Pattern SET = Pattern.compile("(?is)^SET\\s+([^=\\s]+)\\s*=\\s*(.*)$");
  private static final Pattern USE_CATALOG = Pattern.compile("(?is)^USE\\s+CATALOG\\s+(\\S+)$");
  private static final Pattern USE_NAMESPACE =
      Pattern.compile("(?is)^USE\\s+(?:(?:SCHEMA|DATABASE|NAMESPACE)\\s+)?(\\S+)$");
  private static final Pattern TEMPORARY_VIEW =
      Pattern.compile("(?is)^CREATE\\s+(?:OR\\s+REPLACE\\s+)?TEMP(?:ORARY)?\\s+VIEW\\s+(\\S+)\\s+AS\\s+(.*)$");
  private static final Pattern LEADING_WITH = Pattern.compile("(?is)^WITH\\s+");

  private final Map<String, PipelineDataset> datasets;
  private final List<PipelineFlow> flows;
  private final Map<String, String> settings;
  private final Map<PipelineStatement, Map<String, String>> statementSettings;
  private final List<PipelineProblem> problems;
  private final DependencyGraph<String> edges;

  private PipelineGraph(
      Map<String, PipelineDataset> datasets,
      List<PipelineFlow> flows,
      Map<String, String> settings,
      Map<PipelineStatement, Map<String, String>> statementSettings,
      List<PipelineProblem> problems,
      DependencyGraph<String> edges) {
    this.datasets = datasets;
    this.flows = flows;
    this.settings = settings;
    this.statementSettings = statementSettings;
    this.problems = problems;
    this.edges = edges;
  }

  /** Reads {@code project}'s statements into a graph. */
  public static PipelineGraph build(SparkSession spark, PipelineProject project) {
    return new Builder(spark, project).build();
  }

  /** The datasets by fully qualified name, in definition order. */
  public Map<String, PipelineDataset> datasets() {
    return datasets;
  }

  /** Every flow of the pipeline's streaming tables fed by tables, their own queries included. */
  public List<PipelineFlow> flows() {
    return flows;
  }

  /** The flows that append to {@code target} (a fully qualified name), its own query first. */
  public List<PipelineFlow> flowsInto(String target) {
    return flows.stream().filter(flow -> flow.target().equals(target)).toList();
  }

  /** The project's configuration ({@code configuration:}), for the whole run. */
  public Map<String, String> settings() {
    return settings;
  }

  /**
   * The {@code SET}s in effect where {@code dataset} is defined: those before it in its own file,
   * in order, as Spark Declarative Pipelines applies them (on top of {@link #settings}).
   */
  public Map<String, String> settingsOf(PipelineDataset dataset) {
    return statementSettings.getOrDefault(dataset.statement(), Map.of());
  }

  /** What is wrong with the statements themselves; validation adds analysis problems. */
  public List<PipelineProblem> problems() {
    return problems;
  }

  /** Edges from every source (pipeline dataset or outside table) to the datasets reading it. */
  public DependencyGraph<String> edges() {
    return edges;
  }

  /** The pipeline's datasets, each after the datasets it reads. */
  public List<PipelineDataset> inOrder() {
    return datasetsOf(edges.topologicalOrder());
  }

  /**
   * The datasets neither on a cycle nor reading one, sources before their readers: all of them, as
   * {@link #inOrder()}, when there is no cycle.
   */
  public List<PipelineDataset> inOrderOutsideCycles() {
    return datasetsOf(edges.orderOutsideCycles());
  }

  private List<PipelineDataset> datasetsOf(List<String> nodes) {
    List<PipelineDataset> ordered = new ArrayList<>();
    for (String node : nodes) {
      if (datasets.containsKey(node)) {
        ordered.add(datasets.get(node));
      }
    }
    return ordered;
  }

  /** Finds a dataset by the name a user gave, qualified or not. */
  public Optional<PipelineDataset> find(String userName) {
    String wanted = userName.toLowerCase(Locale.ROOT);
    List<PipelineDataset> matches = new ArrayList<>();
    for (PipelineDataset dataset : datasets.values()) {
      String full = dataset.name().toLowerCase(Locale.ROOT);
      if (full.equals(wanted) || full.endsWith("." + wanted)) {
        matches.add(dataset);
      }
    }
    if (matches.size() > 1) {
      throw new FloeException(
          "Dataset name " + userName + " is ambiguous in this pipeline: " + matches.stream().map(PipelineDataset::name).toList());
    }
    return matches.stream().findFirst();
  }

  /** A temporary view: private to the pipeline, inlined into its readers. */
  private record TemporaryView(String name, String query, PipelineStatement statement, String catalog, List<String> namespace) {}

  private static final class Builder {
    private final SparkSession spark;
    private final PipelineProject project;
    private final MaterializedViewCatalog catalog;
    private final SourcePinning pinning;
    private final Map<String, PipelineDataset> datasets = new LinkedHashMap<>();
    private final Map<String, TemporaryView> temporaryViews = new LinkedHashMap<>();
    private final Map<String, String> settings = new LinkedHashMap<>();
    private final Map<PipelineStatement, Map<String, String>> statementSettings = new LinkedHashMap<>();
    private final List<PipelineProblem> problems = new ArrayList<>();
    private final List<PendingDefinition> pending = new ArrayList<>();
    private final List<PendingStatement<CreateTableFedStreamingTable>> pendingStreams = new ArrayList<>();
    private final List<PendingStatement<CreateFlow>> pendingFlows = new ArrayList<>();
    private final List<PipelineFlow> flows = new ArrayList<>();

    private record PendingDefinition(
        PipelineStatement statement, CreateMaterializedView definition, String catalog, List<String> namespace) {}

    private record PendingStatement<S>(PipelineStatement statement, S definition, String catalog, List<String> namespace) {}

    Builder(SparkSession spark, PipelineProject project) {
      this.spark = spark;
      this.project = project;
      this.catalog = new MaterializedViewCatalog(spark);
      this.pinning = new SourcePinning(spark);
    }

    PipelineGraph build() {
      settings.putAll(project.spec().configuration());
      String fileCatalog = project.spec().catalog().orElse(currentCatalog());
      List<String> fileNamespace =
          project.spec().namespace().map(ns -> QualifiedName.parse(ns).parts()).orElse(currentNamespace());
      java.nio.file.Path file = null;
      String useCatalog = fileCatalog;
      List<String> useNamespace = fileNamespace;
      Map<String, String> fileSettings = new LinkedHashMap<>();
      for (PipelineStatement statement : project.statements()) {
        if (!statement.file().equals(file)) {
          file = statement.file();
          useCatalog = fileCatalog;
          useNamespace = fileNamespace;
          fileSettings = new LinkedHashMap<>();
        }
        String sql = statement.sql().trim();
        Matcher set = SET.matcher(sql);
        Matcher useCatalogMatch = USE_CATALOG.matcher(sql);
        Matcher useNamespaceMatch = USE_NAMESPACE.matcher(sql);
        Matcher temporaryView = TEMPORARY_VIEW.matcher(sql);
        if (set.matches()) {
          fileSettings.put(unquote(set.group(1)), unquote(set.group(2).trim()));
          continue;
        }
        if (!fileSettings.isEmpty()) {
          statementSettings.put(statement, Collections.unmodifiableMap(new LinkedHashMap<>(fileSettings)));
        }
        if (useCatalogMatch.matches()) {
          useCatalog = unquote(useCatalogMatch.group(1));
          if (!catalogRegistered(useCatalog)) {
            problem(statement, "", "catalog " + useCatalog + " is not configured");
          }
        } else if (useNamespaceMatch.matches()) {
          List<String> parts = nameParts(useNamespaceMatch.group(1));
          if (parts.size() > 1 && catalogRegistered(parts.get(0))) {
            useCatalog = parts.get(0);
            parts = parts.subList(1, parts.size());
          }
          useNamespace = parts;
        } else if (temporaryView.matches()) {
          String name = unquote(temporaryView.group(1)).toLowerCase(Locale.ROOT);
          if (temporaryViews.containsKey(name)) {
            problem(statement, name, "temporary view is defined twice (also at " + temporaryViews.get(name).statement().location() + ")");
          }
          temporaryViews.put(name, new TemporaryView(name, temporaryView.group(2).trim(), statement, useCatalog, useNamespace));
        } else {
          definition(statement, useCatalog, useNamespace);
        }
      }
      for (PendingDefinition definition : pending) {
        addDataset(definition);
      }
      addStreamsAndFlows();
      temporaryViewsNamedAsDatasets();
      DependencyGraph<String> edges = new DependencyGraph<>();
      for (PipelineDataset dataset : datasets.values()) {
        edges.addNode(dataset.name());
        dataset.sources().forEach(source -> edges.addEdge(source, dataset.name()));
      }
      edges.findCycle().ifPresent(cycle -> problems.add(
          new PipelineProblem(
              datasets.get(cycle.get(0)).statement().location(),
              "",
              "the pipeline's datasets form a cycle: " + DependencyGraph.describePath(cycle))));
      return new PipelineGraph(datasets, flows, settings, statementSettings, problems, edges);
    }

    private void definition(PipelineStatement statement, String useCatalog, List<String> useNamespace) {
      Optional<FloeStatement> parsed;
      try {
        parsed = FloeStatementParser.parse(statement.sql());
      } catch (RuntimeException e) {
        problem(statement, "", e.getMessage());
        return;
      }
      if (parsed.isPresent() && parsed.get() instanceof CreateMaterializedView create) {
        pending.add(new PendingDefinition(statement, create, useCatalog, useNamespace));
        return;
      }
      if (parsed.isPresent() && parsed.get() instanceof CreateStreamingTable create) {
        addStreamingTable(statement, create, useCatalog, useNamespace);
        return;
      }
      if (parsed.isPresent() && parsed.get() instanceof CreateTableFedStreamingTable create) {
        pendingStreams.add(new PendingStatement<>(statement, create, useCatalog, useNamespace));
        return;
      }
      if (parsed.isPresent() && parsed.get() instanceof CreateFlow create) {
        pendingFlows.add(new PendingStatement<>(statement, create, useCatalog, useNamespace));
        return;
      }
      problem(
          statement,
          "",
          "a pipeline file holds dataset definitions (CREATE MATERIALIZED VIEW, CREATE STREAMING TABLE,"
              + " CREATE TEMPORARY VIEW), CREATE FLOW, and SET or USE statements; this one starts with '"
              + firstWords(statement.sql()) + "'");
    }

    /** A streaming table reads files; a relative folder is relative to the project folder. */
    private void addStreamingTable(
        PipelineStatement statement, CreateStreamingTable create, String useCatalog, List<String> useNamespace) {
      ResolvedName name;
      try {
        name = catalog.resolve(create.name().parts(), useCatalog, useNamespace);
      } catch (RuntimeException e) {
        problem(statement, create.name().toString(), e.getMessage());
        return;
      }
      String key = name.toString();
      if (datasets.containsKey(key)) {
        problem(statement, key, "defined twice (also at " + datasets.get(key).statement().location() + ")");
        return;
      }
      FileSource source = create.source().resolvedAgainst(project.spec().root());
      CreateStreamingTable resolved =
          new CreateStreamingTable(create.name(), true, false, create.comment(), create.tableProperties(), source);
      String canonical = String.join("\n", key, source.path(), source.format().orElse(""), source.options().toString(),
          create.comment().orElse(""), create.tableProperties().toString());
      datasets.put(
          key,
          new PipelineDataset(
              key, PipelineDataset.Kind.STREAMING_TABLE, statement, resolved, useCatalog, useNamespace, List.of(),
              withSettings(statement, digest(canonical))));
    }

    /**
     * {@code hash} with the SETs in effect at {@code statement}, when there are any: a changed SET
     * changes the definition (a dataset without any keeps the hash it always had).
     */
    private String withSettings(PipelineStatement statement, String hash) {
      Map<String, String> set = statementSettings.get(statement);
      return set == null ? hash : digest(hash + "\n" + set);
    }

    private void addDataset(PendingDefinition pendingDefinition) {
      PipelineStatement statement = pendingDefinition.statement();
      CreateMaterializedView create = pendingDefinition.definition();
      ResolvedName name;
      try {
        name = catalog.resolve(create.name().parts(), pendingDefinition.catalog(), pendingDefinition.namespace());
      } catch (RuntimeException e) {
        problem(statement, create.name().toString(), e.getMessage());
        return;
      }
      String key = name.toString();
      if (datasets.containsKey(key)) {
        problem(statement, key, "defined twice (also at " + datasets.get(key).statement().location() + ")");
        return;
      }
      String query;
      List<String> sources = new ArrayList<>();
      try {
        query = inlineTemporaryViews(statement, create.query());
        LogicalPlan plan = pinning.parse(query);
        for (ResolvedName source : pinning.sourceNames(plan, pendingDefinition.catalog(), pendingDefinition.namespace())) {
          sources.add(source.toString());
        }
      } catch (RuntimeException e) {
        problem(statement, key, e.getMessage());
        return;
      }
      CreateMaterializedView inlined =
          new CreateMaterializedView(
              create.name(), create.orReplace(), create.ifNotExists(), create.managed(), create.columns(),
              create.expectations(), create.comment(), create.partitionedBy(), create.tableProperties(),
              create.schedule(), create.refreshPolicy(), create.withData(), query, create.originalText());
      datasets.put(
          key,
          new PipelineDataset(
              key, PipelineDataset.Kind.MATERIALIZED_VIEW, statement, inlined, pendingDefinition.catalog(), pendingDefinition.namespace(), sources,
              withSettings(statement, hash(key, inlined, pendingDefinition.catalog(), pendingDefinition.namespace()))));
    }

    /**
     * Adds the streaming tables fed by tables, once every other dataset is known: the flows into each
     * (its own query and the CREATE FLOWs that name it as target) decide what it reads.
     */
    private void addStreamsAndFlows() {
      Map<String, PendingStatement<CreateTableFedStreamingTable>> streams = new LinkedHashMap<>();
      Map<String, PipelineFlow> byName = new LinkedHashMap<>();
      for (PendingStatement<CreateTableFedStreamingTable> pendingStream : pendingStreams) {
        CreateTableFedStreamingTable create = pendingStream.definition();
        ResolvedName name;
        try {
          name = catalog.resolve(create.name().parts(), pendingStream.catalog(), pendingStream.namespace());
        } catch (RuntimeException e) {
          problem(pendingStream.statement(), create.name().toString(), e.getMessage());
          continue;
        }
        String key = name.toString();
        PipelineStatement other = datasets.containsKey(key) ? datasets.get(key).statement()
            : streams.containsKey(key) ? streams.get(key).statement() : null;
        if (other != null) {
          problem(pendingStream.statement(), key, "defined twice (also at " + other.location() + ")");
          continue;
        }
        streams.put(key, pendingStream);
        if (create.query().isPresent()) {
          flow(pendingStream.statement(), key, name.name(), create.query().get(), true, pendingStream, false)
              .ifPresent(flow -> byName.put(flow.name(), flow));
        }
      }
      for (PendingStatement<CreateFlow> pendingFlow : pendingFlows) {
        CreateFlow create = pendingFlow.definition();
        String flowName = create.name().toLowerCase(Locale.ROOT);
        String target;
        try {
          target = catalog.resolve(create.target().parts(), pendingFlow.catalog(), pendingFlow.namespace()).toString();
        } catch (RuntimeException e) {
          problem(pendingFlow.statement(), "", "flow " + create.name() + ": " + e.getMessage());
          continue;
        }
        if (!streams.containsKey(target)) {
          PipelineDataset dataset = datasets.get(target);
          problem(pendingFlow.statement(), "", "flow " + create.name() + " writes into " + target + ", which is "
              + (dataset == null ? "not defined in this pipeline"
                  : dataset.kind() == PipelineDataset.Kind.MATERIALIZED_VIEW ? "a materialized view"
                  : "a streaming table that loads files")
              + "; a flow appends to a streaming table of the pipeline defined by CREATE STREAMING TABLE "
              + create.target() + " (with or without AS)");
          continue;
        }
        PipelineFlow previous = byName.get(flowName);
        if (previous != null) {
          problem(pendingFlow.statement(), target, "flow " + create.name() + " is defined twice (also at "
              + previous.statement().location() + ")");
          continue;
        }
        flow(pendingFlow.statement(), target, flowName, create.query(), create.byName(),
            new PendingStatement<>(pendingFlow.statement(), null, pendingFlow.catalog(), pendingFlow.namespace()), true)
            .ifPresent(flow -> byName.put(flow.name(), flow));
      }
      flows.addAll(byName.values());
      for (Map.Entry<String, PendingStatement<CreateTableFedStreamingTable>> stream : streams.entrySet()) {
        String key = stream.getKey();
        PendingStatement<CreateTableFedStreamingTable> pendingStream = stream.getValue();
        LinkedHashSet<String> sources = new LinkedHashSet<>();
        List<String> canonical = new ArrayList<>();
        CreateTableFedStreamingTable create = pendingStream.definition();
        canonical.add(key);
        canonical.add(create.columns().toString());
        canonical.add(create.comment().orElse(""));
        canonical.add(create.tableProperties().toString());
        flows.stream()
            .filter(flow -> flow.target().equals(key))
            .sorted(java.util.Comparator.comparing(PipelineFlow::name))
            .forEach(flow -> {
              sources.add(flow.source());
              sources.addAll(flow.staticSources());
              canonical.add(flow.name() + "|" + flow.flow().byName() + "|" + flow.flow().defaultCatalog() + "."
                  + String.join(".", flow.flow().defaultNamespace()) + "|"
                  + flow.flow().query().trim().replaceAll("\\s+", " "));
            });
        datasets.put(
            key,
            new PipelineDataset(
                key, PipelineDataset.Kind.TABLE_FED_STREAMING_TABLE, pendingStream.statement(), create,
                pendingStream.catalog(), pendingStream.namespace(), new ArrayList<>(sources),
                withSettings(pendingStream.statement(), digest(String.join("\n", canonical)))));
      }
    }

    /** Parses a flow's query (temporary views inlined) into a pipeline flow; a problem when it cannot. */
    private Optional<PipelineFlow> flow(
        PipelineStatement statement, String target, String name, String query, boolean byName,
        PendingStatement<?> context, boolean explicit) {
      String owner = explicit ? "flow " + name : "streaming table " + target;
      try {
        StreamFlow flow = new StreamFlow(name, inlineTemporaryViews(statement, query), byName, context.catalog(),
            context.namespace(), Optional.empty());
        StreamedQuery parsed = StreamedQuery.of(spark, owner, flow);
        return Optional.of(new PipelineFlow(flow, target, parsed.source().toString(), parsed.staticSources(), statement,
            explicit));
      } catch (RuntimeException e) {
        problem(statement, target, e.getMessage());
        return Optional.empty();
      }
    }

    /**
     * A temporary view with the name of a dataset, or of a table or view of the catalog, where it is
     * defined: a query of the pipeline reading that name would read the temporary view, and everyone
     * outside the pipeline the dataset or the catalog's object.
     */
    private void temporaryViewsNamedAsDatasets() {
      for (TemporaryView view : temporaryViews.values()) {
        ResolvedName name;
        try {
          name = catalog.resolve(List.of(view.name()), view.catalog(), view.namespace());
        } catch (RuntimeException e) {
          continue; // a namespace that does not resolve names no dataset
        }
        String key = name.toString();
        PipelineDataset dataset = datasets.get(key);
        if (dataset != null) {
          problem(view.statement(), view.name(),
              "temporary view has the name of the dataset " + key + " (defined at " + dataset.statement().location()
                  + "): a query of this pipeline reading " + view.name()
                  + " would read the temporary view, and one outside it the dataset; rename one of them");
        } else if (existsInCatalog(name)) {
          problem(view.statement(), view.name(),
              "temporary view has the name of " + key + ", which exists in the catalog: a query of this pipeline"
                  + " reading " + view.name() + " would read the temporary view, and one outside it " + key
                  + "; rename the temporary view");
        }
      }
    }

    private static boolean existsInCatalog(ResolvedName name) {
      try {
        return name.isView() || name.catalog().tableExists(name.identifier());
      } catch (RuntimeException e) {
        return false; // a namespace that does not exist yet holds nothing
      }
    }

    /** Prefixes the query with the temporary views it reads, directly or through each other. */
    private String inlineTemporaryViews(PipelineStatement statement, String query) {
      if (temporaryViews.isEmpty()) {
        return query;
      }
      LinkedHashSet<String> needed = new LinkedHashSet<>();
      collectTemporaryViews(query, needed, new LinkedHashSet<>());
      if (needed.isEmpty()) {
        return query;
      }
      StringBuilder with = new StringBuilder("WITH ");
      for (String name : needed) {
        with.append('`').append(name).append("` AS (").append(temporaryViews.get(name).query()).append("), ");
      }
      Matcher leadingWith = LEADING_WITH.matcher(query);
      if (leadingWith.lookingAt()) {
        return with + query.substring(leadingWith.end());
      }
      return with.substring(0, with.length() - 2) + "\n" + query;
    }

    /** Adds the temporary views {@code query} reads to {@code needed}, each after those it reads. */
    private void collectTemporaryViews(String query, Set<String> needed, Set<String> visiting) {
      LogicalPlan parsed = pinning.parse(query);
      // A name the query gives one of its own common table expressions is that expression there.
      Set<String> ownNames = commonTableExpressionNames(parsed);
      for (String reference : singlePartReferences(parsed)) {
        TemporaryView view = temporaryViews.get(reference);
        if (view == null || needed.contains(reference) || ownNames.contains(reference)) {
          continue;
        }
        if (!visiting.add(reference)) {
          throw new FloeException("temporary view " + reference + " reads itself through other temporary views");
        }
        collectTemporaryViews(view.query(), needed, visiting);
        needed.add(reference);
      }
    }

    private static Set<String> commonTableExpressionNames(LogicalPlan plan) {
      Set<String> names = new LinkedHashSet<>();
      plan.foreachWithSubqueries(
          node -> {
            if (node instanceof UnresolvedWith with) {
              Scala.list(with.cteRelations()).forEach(cte -> {
                names.add(cte._1().toLowerCase(Locale.ROOT));
                names.addAll(commonTableExpressionNames(cte._2()));
              });
            }
            return scala.runtime.BoxedUnit.UNIT;
          });
      return names;
    }

    private static List<String> singlePartReferences(LogicalPlan plan) {
      List<String> names = new ArrayList<>();
      plan.foreachWithSubqueries(
          node -> {
            if (node instanceof UnresolvedRelation relation) {
              List<String> parts = Scala.list(relation.multipartIdentifier());
              if (parts.size() == 1) {
                names.add(parts.get(0).toLowerCase(Locale.ROOT));
              }
            } else if (node instanceof UnresolvedWith with) {
              Scala.list(with.cteRelations()).forEach(cte -> names.addAll(singlePartReferences(cte._2())));
            }
            return scala.runtime.BoxedUnit.UNIT;
          });
      return names;
    }

    private boolean catalogRegistered(String name) {
      return spark.sessionState().catalogManager().isCatalogRegistered(name);
    }

    private String currentCatalog() {
      return spark.sessionState().catalogManager().currentCatalog().name();
    }

    private List<String> currentNamespace() {
      return Arrays.asList(spark.sessionState().catalogManager().currentNamespace());
    }

    private void problem(PipelineStatement statement, String dataset, String message) {
      problems.add(new PipelineProblem(statement.location(), dataset, message));
    }
  }

  /** Everything that defines a dataset, digested: the statement minus how it asks to be created. */
  static String hash(String name, CreateMaterializedView create, String catalog, List<String> namespace) {
    String canonical =
        String.join(
            "\n",
            name,
            catalog + "." + String.join(".", namespace),
            Boolean.toString(create.managed()),
            create.columns().toString(),
            create.expectations().toString(),
            create.comment().orElse(""),
            create.partitionedBy().toString(),
            create.tableProperties().toString(),
            create.schedule().map(Object::toString).orElse(""),
            create.refreshPolicy().map(Object::toString).orElse(""),
            create.query().trim().replaceAll("\\s+", " "));
    return digest(canonical);
  }

  private static String digest(String canonical) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  private static List<String> nameParts(String text) {
    List<String> parts = new ArrayList<>();
    for (String part : text.split("\\.")) {
      parts.add(unquote(part));
    }
    return parts;
  }

  private static String unquote(String text) {
    String trimmed = text.trim();
    if (trimmed.length() >= 2) {
      char first = trimmed.charAt(0);
      char last = trimmed.charAt(trimmed.length() - 1);
      if ((first == '`' || first == '\'' || first == '"') && first == last) {
        return trimmed.substring(1, trimmed.length() - 1);
      }
    }
    return trimmed;
  }

  private static String firstWords(String sql) {
    String[] words = sql.trim().split("\\s+");
    return String.join(" ", Arrays.asList(words).subList(0, Math.min(3, words.length)));
  }
}
