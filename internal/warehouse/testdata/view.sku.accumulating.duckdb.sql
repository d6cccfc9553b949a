SELECT aggregation, window_start, window_end, sku, importe, pedidos, unidades, timing, pane_index
FROM ventas_sku_hora_movil_paneles
WHERE TRUE
QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, sku ORDER BY pane_index DESC) = 1
