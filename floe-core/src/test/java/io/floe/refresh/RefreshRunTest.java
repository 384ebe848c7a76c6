package io.floe.refresh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RefreshRunTest {

  @Test
  void triggerNamesParseInAnyCase() {
    for (RefreshTrigger trigger : RefreshTrigger.values()) {
      assertThat(RefreshTrigger.parse(trigger.name().toLowerCase())).isEqualTo(trigger);
      assertThat(RefreshTrigger.parse(trigger.name())).isEqualTo(trigger);
    }
  }

  @Test
  void unknownTriggerNamesTheAcceptedOnes() {
    assertThatThrownBy(() -> RefreshTrigger.parse("cron"))
        .hasMessageContaining("'cron'")
        .hasMessageContaining("manual, schedule, change or pipeline");
  }

  @Test
  void unsetPropertiesMeanAManualRunWithAFreshId() {
    RefreshRun first = RefreshRun.of(null, null);
    RefreshRun second = RefreshRun.of(null, "");

    assertThat(first.trigger()).isEqualTo(RefreshTrigger.MANUAL);
    assertThat(first.runId()).isNotBlank().isNotEqualTo(second.runId());
  }

  @Test
  void setPropertiesAreKept() {
    assertThat(RefreshRun.of("schedule", "run-7")).isEqualTo(new RefreshRun("run-7", RefreshTrigger.SCHEDULE));
  }
}
