-- Silver: the Glue job's cleaning as one materialized view. Its rules are expectations,
-- counted at every refresh: orders without an amount or a readable date are dropped.
CREATE TEMPORARY VIEW typed_orders AS
SELECT order_id, customer_id,
       lower(trim(category)) AS category,
       CAST(amount AS DECIMAL(10,2)) AS amount,
       coalesce(to_date(try_to_timestamp(order_date, 'yyyy-MM-dd')),
                to_date(try_to_timestamp(order_date, 'MM/dd/yyyy'))) AS order_date,
       status, CAST(quantity AS INT) AS quantity
FROM bronze_orders
WHERE order_id IS NOT NULL;

CREATE MATERIALIZED VIEW silver_orders (
  CONSTRAINT valid_amount EXPECT (amount IS NOT NULL) ON VIOLATION DROP ROW,
  CONSTRAINT valid_order_date EXPECT (order_date IS NOT NULL) ON VIOLATION DROP ROW
)
COMMENT 'Silver: deduplicated, typed and normalized orders'
AS
SELECT order_id, customer_id, category, amount, order_date, status, quantity
FROM (
  SELECT *, row_number() OVER (PARTITION BY order_id
                               ORDER BY customer_id, category, amount, order_date, status, quantity) AS occurrence
  FROM typed_orders)
WHERE occurrence = 1;
