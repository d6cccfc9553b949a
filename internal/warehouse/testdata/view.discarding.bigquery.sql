SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index
FROM (
  SELECT aggregation, window_start, window_end, pais,
    SUM(importe) OVER (PARTITION BY aggregation, window_start, pais) AS importe,
    CAST(SUM(pedidos) OVER (PARTITION BY aggregation, window_start, pais) AS INT64) AS pedidos,
    CAST(SUM(unidades) OVER (PARTITION BY aggregation, window_start, pais) AS INT64) AS unidades,
    timing, pane_index,
    ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, pais ORDER BY pane_index DESC) AS newest
  FROM (
    SELECT * FROM `proj.ds.ventas_hora_pais_paneles`
    WHERE TRUE
    QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, pais, pane_index ORDER BY emitted_at DESC) = 1
  ) AS panes
) AS totals
WHERE newest = 1
