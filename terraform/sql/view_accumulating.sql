-- ACCUMULATING panes carry the window's totals so far: the current value of a
-- (aggregation, window_start, ${key}) is its pane with the highest pane_index.
-- A session identity whose latest pane is MERGED stopped existing: left out.
-- Same definition as internal/warehouse View.SQL, for every declared
-- aggregation (checked by test/deploy).
SELECT aggregation, window_start, window_end, ${key}, importe, pedidos, unidades, timing, pane_index
FROM `${project}.${dataset}.${panes}`
WHERE TRUE
QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, ${key} ORDER BY pane_index DESC) = 1%{ if session } AND timing != 'MERGED'%{ endif }
