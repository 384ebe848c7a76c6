package io.floe.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class ServerInfoTest {
  @Test
  void aServerNotListeningYetIsDescribedAsStartingAndRoundTripsThroughItsText() {
    Instant since = Instant.parse("2026-12-05T01:00:00Z");
    ServerInfo starting = new ServerInfo(42, "127.0.0.1", 0, since, "/wh");
    assertThat(starting.describe()).isEqualTo("pid 42 (starting, not listening yet) since 2026-12-05T01:00:00Z");
    ServerInfo listening = new ServerInfo(42, "127.0.0.1", 8642, since, "/wh");
    assertThat(listening.describe()).isEqualTo("pid 42 on 127.0.0.1:8642 since 2026-12-05T01:00:00Z");
    assertThat(ServerInfo.fromText(listening.toText())).contains(listening);
  }
}
