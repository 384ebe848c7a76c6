package io.floe.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SqlLexerTest {

    private static List<Token> tokens(String sql) {
        return SqlLexer.tokenize(sql);
    }

    @Test
    void stringEscapesAreUnescapedAsSparkDoes() {
        Token token = tokens("'a\\'b\\\\c\\nd\\te\\u0041\\%\\x'").get(0);

        assertThat(token.kind()).isEqualTo(Token.Kind.STRING);
        assertThat(token.value()).isEqualTo("a'b\\c\nd\teA\\%x");
    }

    @Test
    void tokensKeepTheirSourceOffsets() {
        String sql = "  CREATE /* c */ `a``b`.x";
        List<Token> tokens = tokens(sql);

        assertThat(tokens).extracting(Token::kind).containsExactly(Token.Kind.WORD, Token.Kind.QUOTED_IDENTIFIER,
                Token.Kind.SYMBOL, Token.Kind.WORD, Token.Kind.END);
        Token quoted = tokens.get(1);
        assertThat(quoted.value()).isEqualTo("a`b");
        assertThat(sql.substring(quoted.start(), quoted.end())).isEqualTo("`a``b`");
    }

    @Test
    void problemsBecomeOneErrorTokenInsteadOfFailing() {
        List<Token> tokens = tokens("SELECT 'abc");

        assertThat(tokens).extracting(Token::kind)
                .containsExactly(Token.Kind.WORD, Token.Kind.ERROR, Token.Kind.END);
        assertThat(tokens.get(1).value()).isEqualTo("unterminated string literal");
    }

    @Test
    void numbersIncludeFractionsAndSuffixes() {
        assertThat(tokens("1 1.5 10L 5MINUTES")).extracting(Token::text)
                .containsExactly("1", "1.5", "10L", "5MINUTES", "");
        assertThat(tokens("1 1.5").get(1).isInteger()).isFalse();
    }
}
