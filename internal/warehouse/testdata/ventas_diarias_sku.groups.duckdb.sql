SELECT l.fecha AS fecha, l.sku AS sku, SUM(l.cantidad) AS unidades, SUM(CASE WHEN TRY_CAST(l.importe AS DECIMAL(18,9)) IS NULL THEN CAST(TRUNC(l.importe) AS HUGEINT) ELSE 0 END) + CAST(FLOOR(SUM(COALESCE(TRY_CAST(l.importe AS DECIMAL(18,9)), CAST(l.importe - TRUNC(l.importe) AS DECIMAL(18,9))))) AS HUGEINT) AS importe_int, CAST((SUM(COALESCE(TRY_CAST(l.importe AS DECIMAL(18,9)), CAST(l.importe - TRUNC(l.importe) AS DECIMAL(18,9)))) - FLOOR(SUM(COALESCE(TRY_CAST(l.importe AS DECIMAL(18,9)), CAST(l.importe - TRUNC(l.importe) AS DECIMAL(18,9)))))) * 1000000000 AS BIGINT) AS importe_nano, COUNT(*) AS lineas
FROM lineas_pedido AS l
WHERE l.fecha IN (DATE '2026-03-14', DATE '2026-03-15')
AND CONCAT(CAST(l.fecha AS VARCHAR), '#', l.source_object, '#', CAST(l.source_generation AS VARCHAR)) IN (
  SELECT CONCAT(CAST(fecha AS VARCHAR), '#', source_object, '#', CAST(MAX(source_generation) AS VARCHAR))
  FROM lineas_pedido
  WHERE fecha IN (DATE '2026-03-14', DATE '2026-03-15')
  GROUP BY fecha, source_object
)
GROUP BY l.fecha, l.sku
