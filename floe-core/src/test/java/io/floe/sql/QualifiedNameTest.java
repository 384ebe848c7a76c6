package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class QualifiedNameTest {

    @Test
    void nameIsTheLastPartAndNamespaceTheRest() {
        QualifiedName name = QualifiedName.of("lake", "urbanride", "mv_trips_silver");

        assertThat(name.name()).isEqualTo("mv_trips_silver");
        assertThat(name.namespace()).containsExactly("lake", "urbanride");
        assertThat(QualifiedName.of("t").namespace()).isEmpty();
    }

    @Test
    void toStringQuotesOnlyPartsThatAreNotPlainIdentifiers() {
        assertThat(QualifiedName.of("lake", "db_1", "_t").toString()).isEqualTo("lake.db_1._t");
        assertThat(QualifiedName.of("my-cat", "a.b", "x`y", "1st").toString())
                .isEqualTo("`my-cat`.`a.b`.`x``y`.`1st`");
    }

    @Test
    void toStringParsesBackToTheSameName() {
        QualifiedName name = QualifiedName.of("my-cat", "a.b", "x`y");
        DropTable drop = (DropTable) FloeStatementParser.parse("DROP TABLE " + name).orElseThrow();

        assertThat(drop.name()).isEqualTo(name);
    }

    @Test
    void parseReadsBackWhatToStringWrote() {
        QualifiedName name = QualifiedName.of("my-cat", "a.b", "x`y", "Mixed Case", "c,d");

        assertThat(QualifiedName.parse(name.toString())).isEqualTo(name);
        assertThat(QualifiedName.parse("lake.db_1._t")).isEqualTo(QualifiedName.of("lake", "db_1", "_t"));
    }

    @Test
    void parseReadsUnquotedPartsAsWritten() {
        // Names stored before parts were quoted: split at each dot, nothing unescaped.
        assertThat(QualifiedName.parse("db.my-table")).isEqualTo(QualifiedName.of("db", "my-table"));
        assertThat(QualifiedName.parse("t")).isEqualTo(QualifiedName.of("t"));
    }

    @Test
    void parseListSplitsAtCommasOutsideBackticks() {
        QualifiedName odd = QualifiedName.of("lake", "r", "a,b.c");

        assertThat(QualifiedName.parseList("lake.db.t," + odd + ",lake.`x`.y"))
                .containsExactly(QualifiedName.of("lake", "db", "t"), odd, QualifiedName.of("lake", "x", "y"));
    }

    @Test
    void parseRejectsMalformedNames() {
        assertThatThrownBy(() -> QualifiedName.parse("a..b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QualifiedName.parse("a.`b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QualifiedName.parse("`a`b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QualifiedName.parse("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void emptyNamesAndPartsAreRejected() {
        assertThatThrownBy(() -> new QualifiedName(List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> QualifiedName.of("a", "")).isInstanceOf(IllegalArgumentException.class);
    }
}
