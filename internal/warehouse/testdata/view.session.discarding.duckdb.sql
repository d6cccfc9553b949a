SELECT aggregation, window_start, window_end, cliente_id, importe, pedidos, unidades, timing, pane_index
FROM (
  SELECT aggregation, window_start, window_end, cliente_id,
    SUM(importe) OVER (PARTITION BY aggregation, window_start, cliente_id) AS importe,
    CAST(SUM(pedidos) OVER (PARTITION BY aggregation, window_start, cliente_id) AS BIGINT) AS pedidos,
    CAST(SUM(unidades) OVER (PARTITION BY aggregation, window_start, cliente_id) AS BIGINT) AS unidades,
    timing, pane_index,
    ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, cliente_id ORDER BY pane_index DESC) AS newest
  FROM (
    SELECT * FROM sesiones_cliente_paneles
    WHERE TRUE
    QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, cliente_id, pane_index ORDER BY emitted_at DESC) = 1
  ) AS panes
) AS totals
WHERE newest = 1 AND timing != 'MERGED'
