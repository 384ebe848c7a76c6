package io.floe.demo.data;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * One raw e-commerce order of the messy seed data, as it lands in the bronze layer.
 *
 * <p>Deliberately dirty: {@code category} varies in case, {@code amount} may be null and
 * {@code orderDate} is either {@code yyyy-MM-dd} or {@code MM/dd/yyyy}. Any field but
 * {@code quantity} may be null so that tests can build worse rows than the generator does.
 */
public record Order(
        String orderId,
        String customerId,
        String category,
        Double amount,
        String orderDate,
        String status,
        int quantity) {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Creates an order.
     *
     * @throws IllegalArgumentException if {@code amount} is NaN or infinite, which JSON cannot carry
     */
    public Order {
        if (amount != null && !Double.isFinite(amount)) {
            throw new IllegalArgumentException("Order amount must be finite: " + amount);
        }
    }

    /**
     * This order as one line of JSON, without a line end, with keys {@code order_id},
     * {@code customer_id}, {@code category}, {@code amount}, {@code order_date}, {@code status},
     * {@code quantity} in that order, as Python's {@code json.dumps} writes it:
     * {@code {"order_id": "ORD-1000", ..., "amount": 123.45, ..., "quantity": 3}}. The amount is a
     * number rounded to at most two decimals, or {@code null}.
     */
    public String toJson() {
        StringWriter out = new StringWriter();
        try (JsonGenerator json = JSON.createGenerator(out)) {
            json.setPrettyPrinter(new PythonSeparators());
            json.writeStartObject();
            json.writeStringField("order_id", orderId);
            json.writeStringField("customer_id", customerId);
            json.writeStringField("category", category);
            json.writeFieldName("amount");
            if (amount == null) {
                json.writeNull();
            } else {
                json.writeNumber(amountText(amount));
            }
            json.writeStringField("order_date", orderDate);
            json.writeStringField("status", status);
            json.writeNumberField("quantity", quantity);
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("Writing to a StringWriter failed", e);
        }
        return out.toString();
    }

    /**
     * Plain decimal text with one or two decimals ({@code 100.0}, {@code 12.3}, {@code 123.45}),
     * as Python prints a float rounded to cents; never exponent notation.
     */
    private static String amountText(double amount) {
        // Double.toString gives the shortest decimal that reads back as this double, so a value
        // that was rounded to cents stays exactly its cents here.
        BigDecimal cents = new BigDecimal(Double.toString(amount))
                .setScale(2, RoundingMode.HALF_EVEN)
                .stripTrailingZeros();
        return (cents.scale() < 1 ? cents.setScale(1) : cents).toPlainString();
    }

    /** Single-line output with Python's default {@code ", "} and {@code ": "} separators. */
    private static final class PythonSeparators extends MinimalPrettyPrinter {
        private static final long serialVersionUID = 1L;

        @Override
        public void writeObjectFieldValueSeparator(JsonGenerator json) throws IOException {
            json.writeRaw(": ");
        }

        @Override
        public void writeObjectEntrySeparator(JsonGenerator json) throws IOException {
            json.writeRaw(", ");
        }
    }
}
