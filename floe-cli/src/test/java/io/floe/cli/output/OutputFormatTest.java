package io.floe.cli.output;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OutputFormatTest {

    @Test
    void parsesNamesIgnoringCaseAndBlanks() {
        assertThat(OutputFormat.parse("table")).isEqualTo(OutputFormat.TABLE);
        assertThat(OutputFormat.parse("Csv")).isEqualTo(OutputFormat.CSV);
        assertThat(OutputFormat.parse(" JSON ")).isEqualTo(OutputFormat.JSON);
    }

    @Test
    void rejectsUnknownNamesListingTheValidOnes() {
        assertThatThrownBy(() -> OutputFormat.parse("xml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'xml'")
                .hasMessageContaining("table, csv, json");
        assertThatThrownBy(() -> OutputFormat.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
