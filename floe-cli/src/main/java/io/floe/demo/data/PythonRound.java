package io.floe.demo.data;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Python's {@code round(x, digits)} for floats: rounds the exact binary value of the double, ties
 * to even. Using the exact value (not {@code Double.toString}) matters: {@code round(2.675, 2)} is
 * 2.67 in Python because 2.675 is stored as 2.67499999...
 */
final class PythonRound {

    private PythonRound() {}

    static double round(double value, int digits) {
        return new BigDecimal(value).setScale(digits, RoundingMode.HALF_EVEN).doubleValue();
    }
}
