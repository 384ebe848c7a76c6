package io.floe.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DependencyGraphTest {
  /** bronze → silver → gold, silver → report; a ⇄ b, b → after_b. */
  private static DependencyGraph<String> graph() {
    return new DependencyGraph<String>()
        .addEdge("bronze", "silver")
        .addEdge("silver", "gold")
        .addEdge("silver", "report")
        .addEdge("a", "b")
        .addEdge("b", "a")
        .addEdge("b", "after_b");
  }

  @Test
  void sourcesComeBeforeTheirReaders() {
    DependencyGraph<String> acyclic =
        new DependencyGraph<String>().addEdge("silver", "gold").addEdge("bronze", "silver").addNode("alone");
    // Ready nodes in the order they were added: silver waits for bronze.
    assertThat(acyclic.topologicalOrder()).containsExactly("bronze", "alone", "silver", "gold")
        .isEqualTo(acyclic.orderOutsideCycles());
  }

  @Test
  void aCycleIsNamedAndLeavesOutOnlyItsNodesAndTheirReaders() {
    DependencyGraph<String> graph = graph();
    assertThat(graph.findCycle()).hasValueSatisfying(cycle -> assertThat(cycle).containsExactly("a", "b", "a"));
    assertThatThrownBy(graph::topologicalOrder).hasMessage("Dependency cycle: a → b → a");
    assertThat(graph.orderOutsideCycles()).containsExactly("bronze", "silver", "gold", "report");
  }
}
