-- ACCUMULATING panes carry the window's totals so far: the current value of a
-- (aggregation, window_start, pais) is its pane with the highest pane_index.
-- Same definition as internal/warehouse.ViewSQL (checked by internal/deploy).
SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index
FROM `${project}.${dataset}.${panes}`
WHERE TRUE
QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, pais ORDER BY pane_index DESC) = 1
