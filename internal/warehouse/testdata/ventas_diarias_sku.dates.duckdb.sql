SELECT l.fecha AS fecha, l.sku AS sku, CAST(SUM(l.cantidad) AS BIGINT) AS unidades, SUM(l.importe) AS importe, COUNT(*) AS lineas
FROM lineas_pedido AS l
JOIN (
  SELECT fecha, source_object, MAX(source_generation) AS source_generation
  FROM lineas_pedido
  WHERE fecha IN (DATE '2026-03-14', DATE '2026-03-15')
  GROUP BY fecha, source_object
) AS newest
ON l.fecha = newest.fecha AND l.source_object = newest.source_object AND l.source_generation = newest.source_generation
WHERE l.fecha IN (DATE '2026-03-14', DATE '2026-03-15')
GROUP BY l.fecha, l.sku
