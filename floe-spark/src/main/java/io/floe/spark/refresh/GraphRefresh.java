package io.floe.spark.refresh;

import io.floe.FloeException;
import io.floe.graph.DependencyGraph;
import io.floe.refresh.RefreshOutcome;
import io.floe.refresh.RefreshResult;
import io.floe.refresh.RefreshRun;
import io.floe.refresh.RefreshStatus;
import io.floe.refresh.RefreshTrigger;
import io.floe.spark.mv.MaterializedView;
import io.floe.spark.mv.MaterializedViewCatalog;
import io.floe.spark.mv.ResolvedName;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.spark.sql.classic.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refreshes a set of materialized views and, unless told otherwise, every view that reads them,
 * as one run over the dependency graph that the views' {@code floe.sources} edges form:
 *
 * <ul>
 *   <li>Every source outside the refreshed set (base tables, views not refreshed) is pinned once,
 *       at the start, and every view of the run reads it at that snapshot. A view reading a view
 *       of the run reads exactly the storage snapshot that view committed in this run.
 *   <li>Views refresh sources before readers; views that do not depend on each other refresh in
 *       parallel, at most {@value #PARALLELISM} at once (default 2).
 *   <li>A failed refresh is retried as {@link RetryPolicy} says. When it still fails, every view
 *       that reads it, directly or not, is skipped with the reason; what succeeded stays committed.
 * </ul>
 *
 * <pre>{@code
 * GraphRefreshResult result = GraphRefresh.of(spark).target(silver).fullRefreshOf(List.of(gold)).refresh();
 * }</pre>
 *
 * Every refresh and skip is recorded in the refresh history under one run.
 */
public final class GraphRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(GraphRefresh.class);

  /** Session key: how many views refresh at once. */
  public static final String PARALLELISM = "floe.refresh.parallelism";

  private static final AtomicInteger POOLS = new AtomicInteger();

  private final SparkSession spark;
  private final MaterializedViewCatalog catalog;
  private final SourcePinning pinning;
  private final Map<String, MaterializedView> targets = new LinkedHashMap<>();
  private final Set<String> catalogs = new LinkedHashSet<>();
  private final Set<String> fullRefreshes = new HashSet<>();
  private boolean fullRefreshAll;
  private boolean downstream = true;
  private Integer parallelism;
  private RefreshRun run;
  private final Map<String, RefreshTrigger> triggers = new HashMap<>();
  private BooleanSupplier stopping = () -> false;
  private RefreshListener listener = new RefreshListener() {};

  private GraphRefresh(SparkSession spark) {
    this.spark = spark;
    this.catalog = new MaterializedViewCatalog(spark);
    this.pinning = new SourcePinning(spark);
  }

  public static GraphRefresh of(SparkSession spark) {
    return new GraphRefresh(spark);
  }

  /** Refreshes {@code mv}. */
  public GraphRefresh target(MaterializedView mv) {
    targets.put(mv.name().toString(), mv);
    catalogs.add(mv.name().catalogName());
    return this;
  }

  /** Refreshes each of {@code mvs}. */
  public GraphRefresh targets(Collection<MaterializedView> mvs) {
    mvs.forEach(this::target);
    return this;
  }

  /** Refreshes every materialized view of the catalog. */
  public GraphRefresh everyViewOf(String catalogName) {
    return targets(catalog.listAll(catalogName));
  }

  /** Whether the views that read the targets, directly or not, refresh too (they do by default). */
  public GraphRefresh downstream(boolean includeReaders) {
    this.downstream = includeReaders;
    return this;
  }

  /** Recomputes these views (fully qualified names) in full even when a cheaper refresh would do. */
  public GraphRefresh fullRefreshOf(Collection<String> materializedViews) {
    fullRefreshes.addAll(materializedViews);
    return this;
  }

  /** Recomputes every view of the run in full. */
  public GraphRefresh fullRefreshAll(boolean full) {
    this.fullRefreshAll = full;
    return this;
  }

  /** At most this many refreshes at once; the session's {@value #PARALLELISM} otherwise. */
  public GraphRefresh parallelism(int maxConcurrent) {
    if (maxConcurrent < 1) {
      throw new FloeException("Refresh parallelism must be at least 1 but is " + maxConcurrent);
    }
    this.parallelism = maxConcurrent;
    return this;
  }

  /** Records the refreshes under this run; the thread's local properties give it otherwise. */
  public GraphRefresh run(RefreshRun refreshRun) {
    this.run = refreshRun;
    return this;
  }

  /**
   * Records this view's refresh with its own trigger instead of the run's: a scheduler round may
   * refresh one view because its interval came round and another because a source changed.
   */
  public GraphRefresh trigger(String materializedView, RefreshTrigger trigger) {
    triggers.put(materializedView, trigger);
    return this;
  }

  /**
   * Starts no further refresh once {@code stop} says so: the views not started yet are skipped,
   * the ones in flight finish.
   */
  public GraphRefresh stopWhen(BooleanSupplier stop) {
    this.stopping = stop;
    return this;
  }

  public GraphRefresh listener(RefreshListener refreshListener) {
    this.listener = refreshListener;
    return this;
  }

  /**
   * Runs the refreshes and waits for them all.
   *
   * @throws FloeException when the graph cannot be planned (a cycle, a mix of catalogs' views that
   *     cannot be listed); failures of single views are in the result instead
   */
  public GraphRefreshResult refresh() {
    RefreshRun theRun = run != null ? run : RefreshExecutor.currentRun(spark);
    int maxConcurrent = parallelism != null ? parallelism : RetryPolicy.intSetting(spark, PARALLELISM, 2);
    if (maxConcurrent < 1) {
      throw new FloeException(PARALLELISM + " must be at least 1 but is " + maxConcurrent);
    }

    Map<String, MaterializedView> views = new LinkedHashMap<>();
    for (String catalogName : catalogs) {
      // A reader downstream may be another catalog's MV.
      views.putAll(downstream ? catalog.byNameWithOtherCatalogs(catalogName, false) : catalog.byName(catalogName));
    }
    DependencyGraph<String> graph = MaterializedViewCatalog.dependencies(views.values());
    views.putAll(targets);
    targets.keySet().forEach(graph::addNode);
    Set<String> selected = new HashSet<>(targets.keySet());
    if (downstream) {
      for (String target : targets.keySet()) {
        graph.allReadersOf(target).stream().filter(views::containsKey).forEach(selected::add);
      }
    }
    List<String> order = new ArrayList<>();
    try {
      graph.topologicalOrder().stream().filter(selected::contains).forEach(order::add);
    } catch (IllegalStateException cycle) {
      throw new FloeException("Cannot refresh " + String.join(", ", targets.keySet()) + ": " + cycle.getMessage(), cycle);
    }

    Map<String, Source> pins = pinOutsideSources(order, views, selected);
    Map<String, Set<String>> waitsOn = nearestSelectedSources(graph, order, selected);
    Map<String, Integer> waitingFor = new HashMap<>();
    for (String name : order) {
      waitingFor.put(name, waitsOn.get(name).size());
    }

    Map<String, RefreshOutcome> outcomes = new HashMap<>();
    Deque<String> ready = new ArrayDeque<>();
    order.stream().filter(name -> waitingFor.get(name) == 0).forEach(ready::add);
    ExecutorService pool = Executors.newFixedThreadPool(maxConcurrent, threads());
    CompletionService<RefreshOutcome> done = new ExecutorCompletionService<>(pool);
    int running = 0;
    try {
      while (outcomes.size() < order.size()) {
        while (!ready.isEmpty()) {
          String name = ready.removeFirst();
          if (stopping.getAsBoolean()) {
            RefreshOutcome stopped = RefreshOutcome.skipped(name, "the refresh run was stopped before it started");
            recordSkip(views.get(name), runOf(theRun, name), stopped, outcomes);
            continue;
          }
          MaterializedView mv = views.get(name);
          Map<String, Source> pinned = Map.copyOf(pins);
          RefreshRun viewRun = runOf(theRun, name);
          done.submit(() -> refreshOne(mv, viewRun, pinned));
          running++;
        }
        if (outcomes.size() == order.size()) {
          break;
        }
        if (running == 0 && stopping.getAsBoolean()) {
          for (String name : order) {
            if (!outcomes.containsKey(name)) {
              recordSkip(views.get(name), runOf(theRun, name),
                  RefreshOutcome.skipped(name, "the refresh run was stopped before it started"), outcomes);
            }
          }
          break;
        }
        if (running == 0) {
          throw new IllegalStateException("Graph refresh stalled with " + (order.size() - outcomes.size()) + " views left");
        }
        RefreshOutcome outcome = take(done);
        running--;
        outcomes.put(outcome.materializedView(), outcome);
        listener.finished(outcome);
        if (outcome.status() == RefreshStatus.SUCCEEDED) {
          pinCommitted(views.get(outcome.materializedView()), outcome.result(), pins);
          for (String reader : order) {
            if (waitsOn.get(reader).contains(outcome.materializedView())
                && waitingFor.merge(reader, -1, Integer::sum) == 0 && !outcomes.containsKey(reader)) {
              ready.addLast(reader);
            }
          }
        } else {
          skipReaders(outcome, graph, order, selected, views, theRun, outcomes);
        }
      }
    } finally {
      pool.shutdownNow();
    }
    List<RefreshOutcome> ordered = new ArrayList<>();
    order.forEach(name -> ordered.add(outcomes.get(name)));
    return new GraphRefreshResult(theRun, ordered);
  }

  /** Pins, once for the whole run, every source that no view of the run writes. */
  private Map<String, Source> pinOutsideSources(
      List<String> order, Map<String, MaterializedView> views, Set<String> selected) {
    Map<String, Source> pins = new ConcurrentHashMap<>();
    for (String name : order) {
      MaterializedView mv = views.get(name);
      List<ResolvedName> sources;
      try {
        sources = pinning.sourceNames(pinning.parse(mv.query()), mv.defaultCatalog(), mv.defaultNamespace());
      } catch (Exception e) { // a ParseException is an AnalysisException, thrown undeclared
        LOG.debug("Sources of {} not pinned up front; its refresh reports the problem", mv, e);
        continue;
      }
      for (ResolvedName source : sources) {
        String key = source.toString();
        if (selected.contains(key) || pins.containsKey(key)) {
          continue;
        }
        try {
          pins.put(key, pinning.pinSource(source));
        } catch (RuntimeException e) {
          // A missing source fails the refreshes that read it, each with its own error.
          LOG.debug("Source {} not pinned up front; the refreshes reading it report the problem", key, e);
        }
      }
    }
    return pins;
  }

  private void pinCommitted(MaterializedView mv, RefreshResult result, Map<String, Source> pins) {
    try {
      MaterializedView current = catalog.loadExisting(mv.name(), "refresh");
      pins.put(mv.name().toString(), pinning.pinMaterializedView(current, result.storageSnapshotId()).refreshedInThisRun());
    } catch (RuntimeException e) {
      // Dropped or rewritten meanwhile: its readers pin it themselves and report what they find.
      LOG.warn("Cannot pin {} at the snapshot it just committed; its readers read its current state", mv, e);
    }
  }

  private RefreshOutcome refreshOne(MaterializedView mv, RefreshRun theRun, Map<String, Source> pinned) {
    String name = mv.name().toString();
    var context = spark.sparkContext();
    context.setLocalProperty(RefreshRun.TRIGGER_PROPERTY, theRun.trigger().name().toLowerCase(java.util.Locale.ROOT));
    context.setLocalProperty(RefreshRun.RUN_ID_PROPERTY, theRun.runId());
    try {
      listener.started(name);
      boolean full = fullRefreshAll || fullRefreshes.contains(name);
      return RefreshOutcome.succeeded(new RefreshExecutor(spark).refresh(mv, full, theRun, pinned));
    } catch (Exception e) { // not RuntimeException: Spark's AnalysisException is thrown undeclared
      return RefreshOutcome.failed(name, FloeException.unchecked(e));
    } finally {
      context.setLocalProperty(RefreshRun.TRIGGER_PROPERTY, null);
      context.setLocalProperty(RefreshRun.RUN_ID_PROPERTY, null);
    }
  }

  /** Skips every reader of a failed view, recording why. */
  private void skipReaders(
      RefreshOutcome failed,
      DependencyGraph<String> graph,
      List<String> order,
      Set<String> selected,
      Map<String, MaterializedView> views,
      RefreshRun theRun,
      Map<String, RefreshOutcome> outcomes) {
    String cause =
        failed.status() == RefreshStatus.FAILED
            ? "upstream " + failed.materializedView() + " failed: " + failed.message()
            : failed.message();
    Set<String> readers = new HashSet<>(graph.allReadersOf(failed.materializedView()));
    for (String name : order) {
      if (readers.contains(name) && selected.contains(name) && !outcomes.containsKey(name)) {
        recordSkip(views.get(name), runOf(theRun, name), RefreshOutcome.skipped(name, cause), outcomes);
      }
    }
  }

  private void recordSkip(
      MaterializedView mv, RefreshRun viewRun, RefreshOutcome skipped, Map<String, RefreshOutcome> outcomes) {
    new RefreshExecutor(spark)
        .recordSkipped(mv, viewRun, skipped.message())
        .ifPresent(warning -> LOG.warn("{}", warning));
    outcomes.put(skipped.materializedView(), skipped);
    listener.finished(skipped);
  }

  /** The run as this view's refresh records it: the run's id, with the view's own trigger if it has one. */
  private RefreshRun runOf(RefreshRun theRun, String name) {
    RefreshTrigger own = triggers.get(name);
    return own == null ? theRun : new RefreshRun(theRun.runId(), own);
  }

  /**
   * For each view of the run, the views of the run it must wait for: its sources that are in the
   * run, and, through each source that is not, that source's own nearest sources in the run. A
   * view reading a refreshed view through one left out still refreshes after it.
   */
  private static Map<String, Set<String>> nearestSelectedSources(
      DependencyGraph<String> graph, List<String> order, Set<String> selected) {
    Map<String, Set<String>> nearest = new HashMap<>();
    for (String name : order) {
      Set<String> found = new LinkedHashSet<>();
      Deque<String> queue = new ArrayDeque<>(graph.sourcesOf(name));
      Set<String> seen = new HashSet<>();
      while (!queue.isEmpty()) {
        String source = queue.removeFirst();
        if (!seen.add(source)) {
          continue;
        }
        if (selected.contains(source)) {
          found.add(source);
        } else {
          queue.addAll(graph.sourcesOf(source));
        }
      }
      nearest.put(name, found);
    }
    return nearest;
  }

  private static RefreshOutcome take(CompletionService<RefreshOutcome> done) {
    try {
      return done.take().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FloeException("Graph refresh interrupted", e);
    } catch (ExecutionException e) {
      // refreshOne returns failures as outcomes; only an Error gets here
      throw new FloeException("Graph refresh failed: " + e.getCause(), e.getCause());
    }
  }

  private static ThreadFactory threads() {
    int pool = POOLS.incrementAndGet();
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, "floe-refresh-" + pool + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
