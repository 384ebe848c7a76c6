package io.floe.demo.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MessyOrdersGeneratorTest {

    private static final List<Order> ORDERS = MessyOrdersGenerator.generate(42);
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void sameSeedGivesTheSameOrders() {
        assertThat(MessyOrdersGenerator.generate(42)).isEqualTo(ORDERS);
        assertThat(MessyOrdersGenerator.generate(43)).isNotEqualTo(ORDERS);
    }

    @Test
    void has500DistinctOrdersAnd50ExactDuplicates() {
        assertThat(ORDERS).hasSize(550);
        Map<String, List<Order>> byId = ORDERS.stream().collect(Collectors.groupingBy(Order::orderId));
        assertThat(byId).hasSize(500);
        assertThat(byId.keySet()).allMatch(id -> id.matches("ORD-1[0-4]\\d\\d"));
        for (List<Order> copies : byId.values()) {
            assertThat(Set.copyOf(copies)).as("duplicates are exact").hasSize(1);
        }
        assertThat(ORDERS.stream().distinct()).hasSize(500);
        // Shuffled: duplicates are spread through the list rather than appended.
        assertThat(ORDERS.subList(0, 500).stream().map(Order::orderId).distinct()).hasSizeLessThan(500);
        assertThat(ORDERS.get(0).orderId()).isNotEqualTo("ORD-1000");
    }

    @Test
    void fieldsHaveTheTutorialsValues() {
        for (Order order : ORDERS) {
            assertThat(order.customerId()).matches("CUST-00[0-4]\\d|CUST-0050").isNotEqualTo("CUST-0000");
            assertThat(order.category()).isIn("Electronics", "electronics", "ELECTRONICS", "Clothing", "clothing",
                    "Home & Garden", "home & garden", "Books", "books", "Sports");
            assertThat(order.status()).isIn("completed", "pending", "cancelled");
            assertThat(order.quantity()).isBetween(1, 10);
            if (order.amount() != null) {
                assertThat(order.amount()).isBetween(5.0, 500.0);
                assertThat(Math.round(order.amount() * 100) / 100.0).isEqualTo(order.amount());
            }
            assertThat(order.orderDate()).matches("2024-\\d{2}-\\d{2}|\\d{2}/\\d{2}/2024");
        }
    }

    @Test
    void qualityProblemsOccurAtAboutTheTutorialsRates() {
        List<Order> distinct = ORDERS.stream().distinct().toList();
        long nullAmounts = distinct.stream().filter(o -> o.amount() == null).count();
        long slashDates = distinct.stream().filter(o -> o.orderDate().contains("/")).count();
        long categorySpellings = distinct.stream().map(Order::category).distinct().count();
        // 5% and 3% of 500, with room for sampling noise.
        assertThat(nullAmounts).isBetween(10L, 45L);
        assertThat(slashDates).isBetween(4L, 30L);
        assertThat(categorySpellings).isEqualTo(10);
    }

    @Test
    void jsonLineParsesBackWithJackson() throws IOException {
        for (Order order : ORDERS) {
            String line = order.toJson();
            assertThat(line).doesNotContain("\n").startsWith("{\"order_id\": \"ORD-");
            JsonNode node = MAPPER.readTree(line);
            List<String> keys = new ArrayList<>();
            node.fieldNames().forEachRemaining(keys::add);
            assertThat(keys).containsExactly(
                    "order_id", "customer_id", "category", "amount", "order_date", "status", "quantity");
            assertThat(node.get("order_id").asText()).isEqualTo(order.orderId());
            assertThat(node.get("customer_id").asText()).isEqualTo(order.customerId());
            assertThat(node.get("category").asText()).isEqualTo(order.category());
            assertThat(node.get("order_date").asText()).isEqualTo(order.orderDate());
            assertThat(node.get("status").asText()).isEqualTo(order.status());
            assertThat(node.get("quantity").isInt()).isTrue();
            assertThat(node.get("quantity").asInt()).isEqualTo(order.quantity());
            if (order.amount() == null) {
                assertThat(node.get("amount").isNull()).isTrue();
            } else {
                assertThat(node.get("amount").isNumber()).isTrue();
                assertThat(node.get("amount").asDouble()).isEqualTo(order.amount());
            }
        }
    }

    @Test
    void jsonLooksLikePythonsJsonDumps() {
        Order order = new Order("ORD-1000", "CUST-0007", "Home & Garden", 100.0, "2024-03-05", "completed", 3);
        assertThat(order.toJson()).isEqualTo("{\"order_id\": \"ORD-1000\", \"customer_id\": \"CUST-0007\", "
                + "\"category\": \"Home & Garden\", \"amount\": 100.0, \"order_date\": \"2024-03-05\", "
                + "\"status\": \"completed\", \"quantity\": 3}");
        assertThat(withAmount(123.45).toJson()).contains("\"amount\": 123.45,");
        assertThat(withAmount(12.3).toJson()).contains("\"amount\": 12.3,");
        assertThat(withAmount(12.345678).toJson()).contains("\"amount\": 12.35,");
        assertThat(withAmount(1e7).toJson()).contains("\"amount\": 10000000.0,");
        assertThat(withAmount(null).toJson()).contains("\"amount\": null,");
        assertThatThrownBy(() -> withAmount(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void writesContiguousEvenChunks(@TempDir Path tmp) throws IOException {
        Path dir = tmp.resolve("landing/orders");
        List<Path> files = MessyOrdersGenerator.writeJsonLines(ORDERS, dir, 3);

        assertThat(files).containsExactly(
                dir.resolve("orders-0001.json"), dir.resolve("orders-0002.json"), dir.resolve("orders-0003.json"));
        List<String> all = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        for (Path file : files) {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            assertThat(text).endsWith("\n").doesNotContain("\r");
            List<String> lines = text.lines().toList();
            sizes.add(lines.size());
            all.addAll(lines);
        }
        assertThat(sizes).containsExactly(184, 183, 183);
        assertThat(all).isEqualTo(ORDERS.stream().map(Order::toJson).toList());
    }

    @Test
    void writesOneFileAndOverwrites(@TempDir Path tmp) throws IOException {
        Files.writeString(tmp.resolve("orders-0001.json"), "stale content that is longer than nothing\n".repeat(10_000));
        List<Path> files = MessyOrdersGenerator.writeJsonLines(ORDERS.subList(0, 2), tmp, 1);

        assertThat(Files.readAllLines(files.get(0))).containsExactly(ORDERS.get(0).toJson(), ORDERS.get(1).toJson());
        assertThat(MessyOrdersGenerator.writeJsonLines(ORDERS.subList(0, 1), tmp, 2))
                .extracting(path -> Files.readAllLines(path).size())
                .containsExactly(1, 0);
        assertThatThrownBy(() -> MessyOrdersGenerator.writeJsonLines(ORDERS, tmp, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void expectedSilverRowCountMatchesAnIndependentCount() {
        Map<String, Order> firstById = new HashMap<>();
        for (Order order : ORDERS) {
            firstById.putIfAbsent(order.orderId(), order);
        }
        long withAmount = firstById.values().stream().filter(o -> o.amount() != null).count();
        // Every generated date is valid in one of the two formats, so only null amounts are dropped.
        assertThat(MessyOrdersGenerator.expectedSilverRowCount(ORDERS)).isEqualTo(withAmount);
        assertThat(withAmount).isBetween(455L, 490L);
    }

    @Test
    void expectedSilverRowCountDropsWhatTheCleaningJobDrops() {
        List<Order> orders = List.of(
                order("ORD-1", 1.0, "2024-01-31"),
                order("ORD-1", 1.0, "2024-01-31"), // duplicate
                order("ORD-2", 2.0, "02/29/2024"), // leap day, US format
                order("ORD-3", null, "2024-01-01"), // null amount
                order(null, 4.0, "2024-01-01"), // null id
                order("ORD-5", 5.0, "2024-02-30"), // no such day
                order("ORD-6", 6.0, "2024/01/01"), // neither format
                order("ORD-7", 7.0, "1/2/2024"), // single digits are not MM/dd
                order("ORD-8", 8.0, null));
        assertThat(MessyOrdersGenerator.expectedSilverRowCount(orders)).isEqualTo(2);
    }

    private static Order withAmount(Double amount) {
        return new Order("ORD-1", "CUST-0001", "Books", amount, "2024-01-01", "pending", 1);
    }

    private static Order order(String id, Double amount, String date) {
        return new Order(id, "CUST-0001", "Books", amount, date, "completed", 1);
    }
}
