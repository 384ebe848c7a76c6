package io.floe.demo.data;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Deterministic e-commerce orders with data quality problems, a Java port of the data-cleaning
 * tutorial's Python generator, for a bronze/silver/gold demo.
 *
 * <p>{@link #generate(long)} returns 550 orders: 500 distinct orders {@code ORD-1000} to
 * {@code ORD-1499} plus 50 exact duplicates, shuffled. About 5% have a null amount, about 3% a
 * {@code MM/dd/yyyy} date instead of {@code yyyy-MM-dd}, and categories come in mixed case. The
 * values differ from the Python original (different random generator); the shape and the rates
 * are the same. The tutorial uses seed 42.
 */
public final class MessyOrdersGenerator {

    private static final int DISTINCT_ORDERS = 500;
    private static final int DUPLICATES = 50;
    private static final int FIRST_ORDER_NUMBER = 1000;
    private static final LocalDate FIRST_DAY = LocalDate.of(2024, 1, 1);

    private static final List<String> CATEGORIES = List.of(
            "Electronics", "electronics", "ELECTRONICS", "Clothing", "clothing",
            "Home & Garden", "home & garden", "Books", "books", "Sports");

    private static final List<String> STATUSES = List.of("completed", "completed", "completed", "pending", "cancelled");

    private static final List<String> CUSTOMERS = customers();

    private static final DateTimeFormatter ISO_DATE =
            DateTimeFormatter.ofPattern("uuuu-MM-dd", Locale.ROOT).withResolverStyle(ResolverStyle.STRICT);
    private static final DateTimeFormatter US_DATE =
            DateTimeFormatter.ofPattern("MM/dd/uuuu", Locale.ROOT).withResolverStyle(ResolverStyle.STRICT);

    private MessyOrdersGenerator() {}

    /** The 550 orders for {@code seed}; the same seed always gives the same list. */
    public static List<Order> generate(long seed) {
        PythonRandom random = new PythonRandom(seed);
        List<Order> orders = new ArrayList<>(DISTINCT_ORDERS + DUPLICATES);
        for (int i = 0; i < DISTINCT_ORDERS; i++) {
            // The draws happen in the order of the Python original.
            LocalDate day = FIRST_DAY.plusDays(random.randint(0, 180));
            double amount = PythonRound.round(random.uniform(5.0, 500.0), 2);
            String orderId = "ORD-" + (FIRST_ORDER_NUMBER + i);
            String customer = random.choice(CUSTOMERS);
            String category = random.choice(CATEGORIES);
            Double maybeAmount = random.random() > 0.05 ? amount : null;
            String date = (random.random() > 0.03 ? ISO_DATE : US_DATE).format(day);
            String status = random.choice(STATUSES);
            int quantity = random.randint(1, 10);
            orders.add(new Order(orderId, customer, category, maybeAmount, date, status, quantity));
        }
        List<Order> originals = List.copyOf(orders);
        for (int i = 0; i < DUPLICATES; i++) {
            orders.add(random.choice(originals));
        }
        random.shuffle(orders);
        return List.copyOf(orders);
    }

    /**
     * Writes {@code orders} as JSON Lines ({@link Order#toJson()}, UTF-8, {@code "\n"} after each
     * line) into {@code files} files {@code orders-0001.json}, {@code orders-0002.json}, ... in
     * {@code dir}, creating {@code dir} if needed and overwriting those files if they exist.
     * The orders are split into contiguous chunks in list order whose sizes differ by at most one,
     * larger chunks first; with more files than orders the last files are empty.
     *
     * @return the written files, in order
     * @throws IllegalArgumentException if {@code files} is less than 1
     */
    public static List<Path> writeJsonLines(List<Order> orders, Path dir, int files) throws IOException {
        return writeJsonLines(orders, dir, files, 1);
    }

    /**
     * As {@link #writeJsonLines(List, Path, int)}, numbering the files from {@code firstNumber}, so a later batch
     * lands next to an earlier one without replacing it.
     */
    public static List<Path> writeJsonLines(List<Order> orders, Path dir, int files, int firstNumber)
            throws IOException {
        if (files < 1) {
            throw new IllegalArgumentException("Need at least one file, got " + files);
        }
        Files.createDirectories(dir);
        int base = orders.size() / files;
        int larger = orders.size() % files;
        List<Path> written = new ArrayList<>(files);
        int from = 0;
        for (int f = 0; f < files; f++) {
            int to = from + base + (f < larger ? 1 : 0);
            Path file = dir.resolve(String.format(Locale.ROOT, "orders-%04d.json", f + firstNumber));
            try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                for (Order order : orders.subList(from, to)) {
                    out.write(order.toJson());
                    out.write('\n');
                }
            }
            written.add(file);
            from = to;
        }
        return List.copyOf(written);
    }

    /**
     * How many rows the silver cleaning job must produce from {@code orders}, recomputed in plain
     * Java as a check on the Spark job: drop orders with a null order id or amount, keep the first
     * order seen per order id, then keep those whose date parses strictly as {@code yyyy-MM-dd} or
     * {@code MM/dd/yyyy}. Deduplicating before the date check matters only if two rows share an
     * id but not a date, which the generator never produces.
     */
    public static long expectedSilverRowCount(List<Order> orders) {
        Set<String> seenIds = new HashSet<>();
        long count = 0;
        for (Order order : orders) {
            if (order.orderId() == null || order.amount() == null || !seenIds.add(order.orderId())) {
                continue;
            }
            if (parsesAsDate(order.orderDate())) {
                count++;
            }
        }
        return count;
    }

    private static boolean parsesAsDate(String text) {
        if (text == null) {
            return false;
        }
        for (DateTimeFormatter format : List.of(ISO_DATE, US_DATE)) {
            try {
                LocalDate.parse(text, format);
                return true;
            } catch (DateTimeParseException e) {
                // Not this format; try the next one.
            }
        }
        return false;
    }

    private static List<String> customers() {
        List<String> ids = new ArrayList<>(50);
        for (int n = 1; n <= 50; n++) {
            ids.add(String.format(Locale.ROOT, "CUST-%04d", n));
        }
        return List.copyOf(ids);
    }
}
