package io.floe.cli.output;

/**
 * Terminal column width of text, so a table stays aligned when cells hold CJK text.
 *
 * <p>Each code point counts 1, East Asian wide and full-width code points count 2. The BMP ranges
 * are the ones Spark's {@code Utils.stringHalfWidth} uses, so a table lines up exactly as
 * {@code Dataset.show()} would print it. Spark counts every supplementary code point as 2 because
 * it measures UTF-16 length; here only the supplementary ideographs and emoji count 2, which gives
 * the same result for the text that occurs in practice and stays right for narrow ones.
 */
final class DisplayWidth {

    /** Inclusive code point ranges that a terminal draws two columns wide. */
    private static final int[][] WIDE_RANGES = {
        {0x1100, 0x115F}, // Hangul Jamo initial consonants
        {0x2E80, 0xA4CF}, // CJK radicals, Kana, CJK unified ideographs, Yi
        {0xAC00, 0xD7A3}, // Hangul syllables
        {0xF900, 0xFAFF}, // CJK compatibility ideographs
        {0xFE10, 0xFE19}, // vertical forms
        {0xFE30, 0xFE6F}, // CJK compatibility forms, small form variants
        {0xFF00, 0xFF60}, // full-width ASCII variants
        {0xFFE0, 0xFFE6}, // full-width signs
        {0x1F300, 0x1F64F}, // pictographs and emoticons
        {0x1F680, 0x1F6FF}, // transport and map symbols
        {0x1F900, 0x1F9FF}, // supplemental symbols and pictographs
        {0x20000, 0x3FFFD}, // CJK unified ideographs extensions B onwards
    };

    private DisplayWidth() {}

    /** Number of terminal columns {@code text} occupies. */
    static int of(String text) {
        int width = 0;
        for (int i = 0; i < text.length(); ) {
            int codePoint = text.codePointAt(i);
            width += isWide(codePoint) ? 2 : 1;
            i += Character.charCount(codePoint);
        }
        return width;
    }

    private static boolean isWide(int codePoint) {
        for (int[] range : WIDE_RANGES) {
            if (codePoint >= range[0] && codePoint <= range[1]) {
                return true;
            }
        }
        return false;
    }
}
