package io.floe.cli.output;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultFormatterTest {

    private static final List<String> COLUMNS = List.of("region", "product_category", "order_count");
    private static final List<List<String>> ROWS =
            List.of(List.of("Fukuoka", "Books", "1"), List.of("Osaka", "Clothing", "3"));

    @Test
    void tableMatchesSparkShowWithoutTruncation() {
        assertThat(ResultFormatter.format(COLUMNS, ROWS, OutputFormat.TABLE))
                .isEqualTo("+-------+----------------+-----------+\n"
                        + "|region |product_category|order_count|\n"
                        + "+-------+----------------+-----------+\n"
                        + "|Fukuoka|Books           |1          |\n"
                        + "|Osaka  |Clothing        |3          |\n"
                        + "+-------+----------------+-----------+\n");
    }

    @Test
    void tableColumnsAreAtLeastThreeWideAndNullPrintsAsNull() {
        assertThat(ResultFormatter.format(List.of("a", "b"), List.of(row("x", null)), OutputFormat.TABLE))
                .isEqualTo("+---+----+\n"
                        + "|a  |b   |\n"
                        + "+---+----+\n"
                        + "|x  |NULL|\n"
                        + "+---+----+\n");
    }

    @Test
    void tableWithoutRowsPrintsTheHeaderBetweenBorders() {
        assertThat(ResultFormatter.format(List.of("id"), List.of(), OutputFormat.TABLE))
                .isEqualTo("+---+\n|id |\n+---+\n+---+\n");
    }

    @Test
    void tableWithoutColumnsIsEmpty() {
        assertThat(ResultFormatter.format(List.of(), List.of(), OutputFormat.TABLE)).isEmpty();
        assertThat(ResultFormatter.format(List.of(), List.of(List.of()), OutputFormat.TABLE)).isEmpty();
    }

    @Test
    void tableCountsEastAsianWideCharactersAsTwoColumns() {
        String table = ResultFormatter.format(
                List.of("region", "n"), List.of(List.of("東京", "1"), List.of("Osaka", "22")), OutputFormat.TABLE);

        assertThat(table)
                .isEqualTo("+------+---+\n"
                        + "|region|n  |\n"
                        + "+------+---+\n"
                        + "|東京  |1  |\n"
                        + "|Osaka |22 |\n"
                        + "+------+---+\n");
        // Full-width and Hangul widen the column just as ideographs do.
        assertThat(ResultFormatter.format(List.of("c"), List.of(List.of("ＡＢ한")), OutputFormat.TABLE))
                .contains("|ＡＢ한|\n")
                .startsWith("+------+\n");
    }

    @Test
    void tableMeasuresCodePointsNotUtf16Units() {
        // U+1D400 MATHEMATICAL BOLD CAPITAL A: one narrow code point, two UTF-16 units.
        String bold = new String(Character.toChars(0x1D400));
        assertThat(ResultFormatter.format(List.of("c"), List.of(List.of(bold + "bcd")), OutputFormat.TABLE))
                .isEqualTo("+----+\n|c   |\n+----+\n|" + bold + "bcd|\n+----+\n");
        // CJK extension B ideograph: supplementary and wide.
        String wide = new String(Character.toChars(0x20000));
        assertThat(ResultFormatter.format(List.of("c"), List.of(List.of(wide + "ab")), OutputFormat.TABLE))
                .startsWith("+----+\n");
    }

    @Test
    void tableEscapesLineBreaksAndTabsLikeSpark() {
        assertThat(ResultFormatter.format(List.of("c"), List.of(List.of("a\nb\tc")), OutputFormat.TABLE))
                .isEqualTo("+-------+\n|c      |\n+-------+\n|a\\nb\\tc|\n+-------+\n");
    }

    @Test
    void csvQuotesOnlyWhereRfc4180RequiresIt() {
        List<List<String>> rows = List.of(
                row("plain", "a,b", "say \"hi\"", "line1\nline2", "cr\rhere"),
                row(null, "", " spaced ", "x", "y"));

        assertThat(ResultFormatter.format(List.of("a", "b", "c", "d", "e"), rows, OutputFormat.CSV))
                .isEqualTo("a,b,c,d,e\n"
                        + "plain,\"a,b\",\"say \"\"hi\"\"\",\"line1\nline2\",\"cr\rhere\"\n"
                        + ",\"\", spaced ,x,y\n");
    }

    @Test
    void csvQuotesHeaderNamesToo() {
        assertThat(ResultFormatter.format(List.of("count(a, b)"), List.of(), OutputFormat.CSV))
                .isEqualTo("\"count(a, b)\"\n");
    }

    @Test
    void jsonWritesOneObjectPerLineWithNulls() throws Exception {
        String json = ResultFormatter.format(
                List.of("region", "n", "note"),
                List.of(row("Osaka", "3", null), row("東京", null, "a \"q\"\nz")),
                OutputFormat.JSON);

        assertThat(json).endsWith("\n").doesNotContain("\n\n");
        String[] lines = json.split("\n");
        assertThat(lines).hasSize(2);
        assertThat(lines[0]).isEqualTo("{\"region\":\"Osaka\",\"n\":\"3\",\"note\":null}");
        ObjectMapper mapper = new ObjectMapper();
        JsonNode second = mapper.readTree(lines[1]);
        assertThat(second.get("region").asText()).isEqualTo("東京");
        assertThat(second.get("n").isNull()).isTrue();
        assertThat(second.get("note").asText()).isEqualTo("a \"q\"\nz");
        List<String> keys = new ArrayList<>();
        second.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("region", "n", "note");
    }

    @Test
    void jsonWithoutRowsIsEmpty() {
        assertThat(ResultFormatter.format(COLUMNS, List.of(), OutputFormat.JSON)).isEmpty();
    }

    @Test
    void rejectsRowsOfTheWrongSize() {
        assertThatThrownBy(() -> ResultFormatter.format(COLUMNS, List.of(List.of("a")), OutputFormat.CSV))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Row 0");
    }

    @Test
    void formatsDurations() {
        assertThat(ResultFormatter.formatDuration(0)).isEqualTo("0 ms");
        assertThat(ResultFormatter.formatDuration(12)).isEqualTo("12 ms");
        assertThat(ResultFormatter.formatDuration(999)).isEqualTo("999 ms");
        assertThat(ResultFormatter.formatDuration(1000)).isEqualTo("1.00 s");
        assertThat(ResultFormatter.formatDuration(1234)).isEqualTo("1.23 s");
        assertThat(ResultFormatter.formatDuration(61_400)).isEqualTo("61.40 s");
        assertThatThrownBy(() -> ResultFormatter.formatDuration(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    private static List<String> row(String... cells) {
        return Arrays.asList(cells);
    }
}
