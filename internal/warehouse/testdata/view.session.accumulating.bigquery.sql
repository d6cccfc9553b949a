SELECT aggregation, window_start, window_end, cliente_id, importe, pedidos, unidades, timing, pane_index
FROM `proj.ds.sesiones_cliente_paneles`
WHERE TRUE
QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, cliente_id ORDER BY pane_index DESC) = 1 AND timing != 'MERGED'
