package io.floe.spark;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.iceberg.SystemConfigs;
import org.junit.jupiter.api.Test;

/** The JVM-wide setting the embedded lakehouse makes besides its Spark settings. */
class EmbeddedLakehouseTest {
  private static final String PLAN_IN_WORKER_POOL = SystemConfigs.SCAN_THREAD_POOL_ENABLED.propertyKey();

  @Test
  void icebergPlansTheEmbeddedLakehousesScansInTheCallingThread() {
    SharedSpark.session();

    assertThat(SystemConfigs.SCAN_THREAD_POOL_ENABLED.value()).isFalse();
  }

  @Test
  void aPlanningModeTheJvmWasGivenIsKept() {
    String before = System.getProperty(PLAN_IN_WORKER_POOL);
    try {
      System.setProperty(PLAN_IN_WORKER_POOL, "true");

      EmbeddedLakehouse.planScansInCallingThread();

      assertThat(System.getProperty(PLAN_IN_WORKER_POOL)).isEqualTo("true");
    } finally {
      if (before == null) {
        System.clearProperty(PLAN_IN_WORKER_POOL);
      } else {
        System.setProperty(PLAN_IN_WORKER_POOL, before);
      }
    }
  }
}
