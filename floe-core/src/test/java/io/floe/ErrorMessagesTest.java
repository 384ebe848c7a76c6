package io.floe;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ErrorMessagesTest {
  @Test
  void aMessageOpeningWithAnEmptyLineShowsItsFirstLineThatSaysSomething() {
    String parse = "\n[PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'. SQLSTATE: 42601 (line 1, pos 0)\n\n== SQL ==\nSELEC k\n^^^\n";
    assertThat(ErrorMessages.firstLine(parse))
        .isEqualTo("[PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'. SQLSTATE: 42601 (line 1, pos 0)");
  }

  @Test
  void aLineEndingWithAColonKeepsWhatItAnnounces() {
    assertThat(ErrorMessages.firstLine("Couldn't find column nocol in:\n  struct<k:string,v:int>\nmore"))
        .isEqualTo("Couldn't find column nocol in: struct<k:string,v:int>");
    assertThat(ErrorMessages.firstLine("nothing follows:")).isEqualTo("nothing follows:");
  }

  @Test
  void aMissingMessageIsEmptyOrTheGivenText() {
    assertThat(ErrorMessages.firstLine(null)).isEmpty();
    assertThat(ErrorMessages.firstLine(" \n ", "unknown error")).isEqualTo("unknown error");
    assertThat(ErrorMessages.firstLine("one line", "unknown error")).isEqualTo("one line");
  }

  @Test
  void aFailureShowsItsMessageOrItsClassName() {
    assertThat(ErrorMessages.firstLineOf(new IllegalStateException("\nbroken\nmore"))).isEqualTo("broken");
    assertThat(ErrorMessages.firstLineOf(new IllegalStateException())).isEqualTo("IllegalStateException");
    assertThat(ErrorMessages.firstLineOf(new IllegalStateException(" "))).isEqualTo("IllegalStateException");
  }
}
