-- Gold: revenue by category and customer lifetime value, on completed orders.
CREATE MATERIALIZED VIEW revenue_by_category AS
SELECT category, SUM(amount) AS total_revenue, COUNT(order_id) AS order_count, AVG(amount) AS avg_order_value
FROM silver_orders
WHERE status = 'completed'
GROUP BY category;

CREATE MATERIALIZED VIEW customer_ltv AS
SELECT customer_id, SUM(amount) AS total_spend, COUNT(order_id) AS total_orders, AVG(amount) AS avg_order_value
FROM silver_orders
WHERE status = 'completed'
GROUP BY customer_id;
