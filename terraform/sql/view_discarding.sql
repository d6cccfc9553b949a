-- DISCARDING panes carry only the change since the previous pane: the current
-- value is the sum of the window's panes, each pane counted once even if it
-- was written twice (same identity after a retried insert), with the timing
-- and pane_index of the latest pane. A session identity whose latest pane is
-- MERGED stopped existing (its panes sum to zero): left out.
-- Same definition as internal/warehouse View.SQL, for every declared
-- aggregation (checked by test/deploy).
SELECT aggregation, window_start, window_end, ${key}, importe, pedidos, unidades, timing, pane_index
FROM (
  SELECT aggregation, window_start, window_end, ${key},
    SUM(importe) OVER (PARTITION BY aggregation, window_start, ${key}) AS importe,
    CAST(SUM(pedidos) OVER (PARTITION BY aggregation, window_start, ${key}) AS INT64) AS pedidos,
    CAST(SUM(unidades) OVER (PARTITION BY aggregation, window_start, ${key}) AS INT64) AS unidades,
    timing, pane_index,
    ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, ${key} ORDER BY pane_index DESC) AS newest
  FROM (
    SELECT * FROM `${project}.${dataset}.${panes}`
    WHERE TRUE
    QUALIFY ROW_NUMBER() OVER (PARTITION BY aggregation, window_start, ${key}, pane_index ORDER BY emitted_at DESC) = 1
  ) AS panes
) AS totals
WHERE newest = 1%{ if session } AND timing != 'MERGED'%{ endif }
