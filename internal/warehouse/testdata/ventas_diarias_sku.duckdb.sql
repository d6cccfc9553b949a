SELECT l.fecha AS fecha, l.sku AS sku, CAST(SUM(l.cantidad) AS BIGINT) AS unidades, SUM(l.importe) AS importe, COUNT(*) AS lineas
FROM lineas_pedido AS l
JOIN (
  SELECT fecha, source_object, MAX(source_generation) AS source_generation
  FROM lineas_pedido
  WHERE fecha = $fecha
  GROUP BY fecha, source_object
) AS newest
ON l.fecha = newest.fecha AND l.source_object = newest.source_object AND l.source_generation = newest.source_generation
WHERE l.fecha = $fecha
GROUP BY l.fecha, l.sku
