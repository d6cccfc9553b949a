SELECT CAST(g.fecha AS STRING) AS fecha, CAST(g.sku AS STRING) AS sku, CASE WHEN g.unidades BETWEEN BIGNUMERIC '-9223372036854775808' AND BIGNUMERIC '9223372036854775807' THEN NULL ELSE CAST(g.unidades AS STRING) END AS unidades, CASE WHEN g.importe BETWEEN BIGNUMERIC '-99999999999999999999999999999.999999999' AND BIGNUMERIC '99999999999999999999999999999.999999999' THEN NULL ELSE CAST(g.importe AS STRING) END AS importe
FROM (
  SELECT l.fecha AS fecha, l.sku AS sku, SUM(CAST(l.cantidad AS BIGNUMERIC)) AS unidades, SUM(CAST(l.importe AS BIGNUMERIC)) AS importe, COUNT(*) AS lineas
  FROM `proj.ds.lineas_pedido` AS l
  JOIN (
    SELECT fecha, source_object, MAX(source_generation) AS source_generation
    FROM `proj.ds.lineas_pedido`
    WHERE fecha IN (DATE '2026-03-14')
    GROUP BY fecha, source_object
  ) AS newest
  ON l.fecha = newest.fecha AND l.source_object = newest.source_object AND l.source_generation = newest.source_generation
  WHERE l.fecha IN (DATE '2026-03-14')
  GROUP BY l.fecha, l.sku
) AS g
WHERE NOT (g.unidades BETWEEN BIGNUMERIC '-9223372036854775808' AND BIGNUMERIC '9223372036854775807' AND g.importe BETWEEN BIGNUMERIC '-99999999999999999999999999999.999999999' AND BIGNUMERIC '99999999999999999999999999999.999999999')
