package io.floe.cli.output;

import io.floe.spark.pipeline.PipelineEvent;
import io.floe.spark.pipeline.PipelineRun;
import io.floe.spark.pipeline.PipelineRunResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.jline.utils.AttributedString;
import org.jline.utils.AttributedStringBuilder;
import org.jline.utils.AttributedStyle;
import org.jline.utils.Display;

/**
 * Shows a pipeline run as it happens: on a terminal, one line per dataset redrawn in place; when
 * the output is not a terminal, a plain log line per state change.
 */
public abstract class PipelineProgress implements AutoCloseable {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

  protected final PrintWriter out;
  protected final String pipeline;

  private PipelineProgress(PrintWriter out, String pipeline) {
    this.out = out;
    this.pipeline = pipeline;
  }

  /** A live display when standard output is a terminal, a log otherwise. */
  public static PipelineProgress open(PrintWriter out, String pipeline) {
    if (System.console() != null && !"dumb".equals(System.getenv("TERM")) && System.getenv("TERM") != null) {
      try {
        return new Live(out, pipeline, TerminalBuilder.builder().system(true).build());
      } catch (IOException | RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(PipelineProgress.class).warn("No live progress display: {}", e.getMessage(), e);
      }
    }
    return new Log(out, pipeline);
  }

  /** A plain log, one line per state change. */
  public static PipelineProgress log(PrintWriter out, String pipeline) {
    return new Log(out, pipeline);
  }

  public abstract void update(PipelineEvent event);

  /** Prints the run's summary. */
  public void finish(PipelineRunResult result) {
    close();
    out.printf("Pipeline %s %s in %.1f s%n", result.pipeline(), result.succeeded() ? "finished" : "finished with failures",
        result.durationMs() / 1000.0);
    for (PipelineRun.DatasetOutcome outcome : result.datasets()) {
      out.printf("  %-10s %s%s%n", outcome.state(), outcome.dataset(), outcome.detail().isEmpty() ? "" : "  " + outcome.detail());
    }
    out.flush();
  }

  @Override
  public void close() {}

  private static final class Log extends PipelineProgress {
    Log(PrintWriter out, String pipeline) {
      super(out, pipeline);
    }

    @Override
    public synchronized void update(PipelineEvent event) {
      if (event.state() == PipelineEvent.State.PENDING) {
        return;
      }
      out.printf("%s %-10s %s%s%n", LocalTime.now().format(TIME), event.state(), event.dataset(),
          event.detail().isEmpty() ? "" : "  " + event.detail());
      out.flush();
    }
  }

  private static final class Live extends PipelineProgress {
    private final Terminal terminal;
    private final Display display;
    private final Map<String, PipelineEvent> states = new LinkedHashMap<>();
    private boolean closed;

    Live(PrintWriter out, String pipeline, Terminal terminal) {
      super(out, pipeline);
      this.terminal = terminal;
      this.display = new Display(terminal, false);
      display.resize(terminal.getHeight(), terminal.getWidth());
    }

    @Override
    public synchronized void update(PipelineEvent event) {
      states.put(event.dataset(), event);
      List<AttributedString> lines = new ArrayList<>();
      lines.add(new AttributedString("Pipeline " + pipeline));
      for (PipelineEvent state : states.values()) {
        AttributedStringBuilder line = new AttributedStringBuilder();
        line.style(style(state.state())).append(String.format("  %-10s ", state.state())).style(AttributedStyle.DEFAULT);
        line.append(state.dataset());
        if (!state.detail().isEmpty()) {
          line.append("  ").append(state.detail());
        }
        lines.add(line.toAttributedString().columnSubSequence(0, Math.max(20, terminal.getWidth() - 1)));
      }
      display.update(lines, -1);
      terminal.flush();
    }

    private static AttributedStyle style(PipelineEvent.State state) {
      return switch (state) {
        case REFRESHED, CREATED, REPLACED, UNCHANGED -> AttributedStyle.DEFAULT.foreground(AttributedStyle.GREEN);
        case FAILED -> AttributedStyle.DEFAULT.foreground(AttributedStyle.RED);
        case SKIPPED, REMOVED, DROPPED -> AttributedStyle.DEFAULT.foreground(AttributedStyle.YELLOW);
        default -> AttributedStyle.DEFAULT.foreground(AttributedStyle.CYAN);
      };
    }

    @Override
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      terminal.writer().println();
      terminal.flush();
      try {
        terminal.close();
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot close the terminal", e);
      }
    }
  }
}
