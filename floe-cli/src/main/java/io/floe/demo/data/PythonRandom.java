package io.floe.demo.data;

import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The subset of Python's {@code random} module the tutorials' generators call, on top of
 * {@link java.util.Random}, so the Java ports read line by line like the Python originals.
 *
 * <p>The values differ from CPython's Mersenne Twister; only the distributions match. The data is
 * fixed by the seed and the order of the calls, so callers keep the Python order of draws.
 */
final class PythonRandom {

    private final Random random;

    PythonRandom(long seed) {
        this.random = new Random(seed);
    }

    /** {@code random.random()}: uniform in [0, 1). */
    double random() {
        return random.nextDouble();
    }

    /** {@code random.uniform(a, b)}: {@code a + (b - a) * random()}, as CPython computes it. */
    double uniform(double a, double b) {
        return a + (b - a) * random.nextDouble();
    }

    /** {@code random.randint(a, b)}: uniform over the integers a..b, both included. */
    int randint(int a, int b) {
        return a + random.nextInt(b - a + 1);
    }

    /** {@code random.choice(seq)}. */
    <T> T choice(List<T> seq) {
        return seq.get(random.nextInt(seq.size()));
    }

    /**
     * {@code random.choices(range(len(weights)), weights=weights)[0]}: an index drawn with
     * probability proportional to its weight, by bisecting the cumulative weights as CPython does.
     */
    int weightedIndex(int[] weights) {
        int total = 0;
        for (int weight : weights) {
            total += weight;
        }
        double point = random.nextDouble() * total;
        int cumulative = 0;
        for (int i = 0; i < weights.length; i++) {
            cumulative += weights[i];
            if (point < cumulative) {
                return i;
            }
        }
        return weights.length - 1;
    }

    /** {@code random.shuffle(list)}, in place. */
    void shuffle(List<?> list) {
        Collections.shuffle(list, random);
    }
}
