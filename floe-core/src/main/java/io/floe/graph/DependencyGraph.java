package io.floe.graph;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A directed graph of datasets where an edge goes from a source to a dataset that reads it. Node
 * order is the order nodes were added, so every traversal is deterministic.
 *
 * @param <N> node key, such as a qualified name
 */
public final class DependencyGraph<N> {
  private final Map<N, Set<N>> downstream = new LinkedHashMap<>();
  private final Map<N, Set<N>> upstream = new LinkedHashMap<>();

  public DependencyGraph<N> addNode(N node) {
    downstream.computeIfAbsent(node, n -> new LinkedHashSet<>());
    upstream.computeIfAbsent(node, n -> new LinkedHashSet<>());
    return this;
  }

  /** Records that {@code reader} reads {@code source}. */
  public DependencyGraph<N> addEdge(N source, N reader) {
    addNode(source);
    addNode(reader);
    downstream.get(source).add(reader);
    upstream.get(reader).add(source);
    return this;
  }

  public Set<N> nodes() {
    return Collections.unmodifiableSet(downstream.keySet());
  }

  /** The direct sources of {@code node}. */
  public Set<N> sourcesOf(N node) {
    return Collections.unmodifiableSet(upstream.getOrDefault(node, Set.of()));
  }

  /** The direct readers of {@code node}. */
  public Set<N> readersOf(N node) {
    return Collections.unmodifiableSet(downstream.getOrDefault(node, Set.of()));
  }

  /** Every node that reads {@code node} directly or transitively, nearest first. */
  public List<N> allReadersOf(N node) {
    List<N> found = new ArrayList<>();
    Set<N> seen = new LinkedHashSet<>();
    Deque<N> queue = new ArrayDeque<>(readersOf(node));
    while (!queue.isEmpty()) {
      N next = queue.removeFirst();
      if (seen.add(next)) {
        found.add(next);
        queue.addAll(readersOf(next));
      }
    }
    return found;
  }

  /**
   * A cycle, as the list of nodes along it with the first node repeated at the end ({@code a → b →
   * a}), or empty when the graph is acyclic.
   */
  public Optional<List<N>> findCycle() {
    Map<N, Integer> color = new HashMap<>(); // absent: unvisited, 1: on stack, 2: done
    Deque<N> path = new ArrayDeque<>();
    for (N start : downstream.keySet()) {
      if (!color.containsKey(start)) {
        Optional<List<N>> cycle = visit(start, color, path);
        if (cycle.isPresent()) {
          return cycle;
        }
      }
    }
    return Optional.empty();
  }

  private Optional<List<N>> visit(N node, Map<N, Integer> color, Deque<N> path) {
    color.put(node, 1);
    path.addLast(node);
    for (N next : downstream.get(node)) {
      Integer c = color.get(next);
      if (c == null) {
        Optional<List<N>> cycle = visit(next, color, path);
        if (cycle.isPresent()) {
          return cycle;
        }
      } else if (c == 1) {
        List<N> cycle = new ArrayList<>();
        boolean on = false;
        for (N p : path) {
          on |= p.equals(next);
          if (on) {
            cycle.add(p);
          }
        }
        cycle.add(next);
        return Optional.of(cycle);
      }
    }
    path.removeLast();
    color.put(node, 2);
    return Optional.empty();
  }

  /**
   * Every node, sources before their readers.
   *
   * @throws IllegalStateException naming the cycle when there is one
   */
  public List<N> topologicalOrder() {
    findCycle()
        .ifPresent(
            cycle -> {
              throw new IllegalStateException("Dependency cycle: " + describePath(cycle));
            });
    return orderOutsideCycles();
  }

  /**
   * The nodes that are neither on a cycle nor read one, directly or transitively, sources before
   * their readers: every node when the graph is acyclic.
   */
  public List<N> orderOutsideCycles() {
    Map<N, Integer> remaining = new LinkedHashMap<>();
    upstream.forEach((node, sources) -> remaining.put(node, sources.size()));
    Deque<N> ready = new ArrayDeque<>();
    remaining.forEach((node, count) -> {
      if (count == 0) {
        ready.add(node);
      }
    });
    List<N> order = new ArrayList<>();
    while (!ready.isEmpty()) {
      N node = ready.removeFirst();
      order.add(node);
      for (N reader : downstream.get(node)) {
        if (remaining.merge(reader, -1, Integer::sum) == 0) {
          ready.addLast(reader);
        }
      }
    }
    return order;
  }

  /** {@code a → b → c}. */
  public static String describePath(List<?> path) {
    StringBuilder text = new StringBuilder();
    for (Object node : path) {
      if (text.length() > 0) {
        text.append(" → ");
      }
      text.append(node);
    }
    return text.toString();
  }
}
