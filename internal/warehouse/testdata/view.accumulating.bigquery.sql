SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index
FROM `proj.ds.ventas_hora_pais_paneles`
WHERE TRUE
QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, pais ORDER BY pane_index DESC) = 1
