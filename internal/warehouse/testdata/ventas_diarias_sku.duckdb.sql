SELECT g.fecha AS fecha, g.sku AS sku, CASE WHEN g.unidades BETWEEN -9223372036854775808 AND 9223372036854775807 THEN CAST(g.unidades AS BIGINT) END AS unidades, CASE WHEN g.importe_int BETWEEN -100000000000000000000000000000 AND 99999999999999999999999999999 AND (g.importe_int > -100000000000000000000000000000 OR g.importe_nano > 0) THEN CAST(g.importe_int * 1000000000 + g.importe_nano AS DECIMAL(38,0)) * CAST('0.000000001' AS DECIMAL(10,9)) END AS importe, g.lineas AS lineas
FROM (
  SELECT l.fecha AS fecha, l.sku AS sku, SUM(l.cantidad) AS unidades, SUM(CASE WHEN TRY_CAST(l.importe AS DECIMAL(18,9)) IS NULL THEN CAST(TRUNC(l.importe) AS HUGEINT) ELSE 0 END) + CAST(FLOOR(SUM(COALESCE(TRY_CAST(l.importe AS DECIMAL(18,9)), CAST(l.importe - TRUNC(l.importe) AS DECIMAL(18,9))))) AS HUGEINT) AS importe_int, CAST((SUM(COALESCE(TRY_CAST(l.importe AS DECIMAL(18,9)), CAST(l.importe - TRUNC(l.importe) AS DECIMAL(18,9)))) - FLOOR(SUM(COALESCE(TRY_CAST(l.importe AS DECIMAL(18,9)), CAST(l.importe - TRUNC(l.importe) AS DECIMAL(18,9)))))) * 1000000000 AS BIGINT) AS importe_nano, COUNT(*) AS lineas
  FROM lineas_pedido AS l
  WHERE l.fecha = $fecha
  AND CONCAT(CAST(l.fecha AS VARCHAR), '#', l.source_object, '#', CAST(l.source_generation AS VARCHAR)) IN (
    SELECT CONCAT(CAST(fecha AS VARCHAR), '#', source_object, '#', CAST(MAX(source_generation) AS VARCHAR))
    FROM lineas_pedido
    WHERE fecha = $fecha
    GROUP BY fecha, source_object
  )
  GROUP BY l.fecha, l.sku
) AS g
WHERE g.unidades BETWEEN -9223372036854775808 AND 9223372036854775807 AND g.importe_int BETWEEN -100000000000000000000000000000 AND 99999999999999999999999999999 AND (g.importe_int > -100000000000000000000000000000 OR g.importe_nano > 0)
