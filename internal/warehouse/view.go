package warehouse

import (
	"fmt"
	"strings"
)

// The accumulation modes of a windowed aggregation (see event-time.md).
const (
	Accumulating = "ACCUMULATING" // each pane holds the window's totals so far
	Discarding   = "DISCARDING"   // each pane holds the change since the previous pane
)

// ViewColumns are the columns of the dashboard view VentasHoraPais.
var ViewColumns = View{Key: "pais"}.Columns()

// Columns are the view's columns, in order: ViewColumns with v's key.
func (v View) Columns() []string {
	return []string{"aggregation", "window_start", "window_end", v.Key, "importe", "pedidos", "unidades", "timing", "pane_index"}
}

// SQL renders the SELECT defining the dashboard view v over its panes, one
// definition for Terraform's view and the embedded warehouse: per
// (aggregation, window_start, key), ACCUMULATING shows the latest pane,
// DISCARDING the sum of the panes (each identity once: streaming dedup is
// best effort) with the latest pane's timing and index. QUALIFY needs the
// WHERE TRUE in BigQuery. A session view leaves out the sessions whose
// latest pane is MERGED, filtering after the latest pane is chosen, so an
// earlier pane of a merged session never shows. qualify names the panes
// table (Unqualified where the engine resolves names); it must not be nil.
func (v View) SQL(d Dialect, qualify func(table string) string) (string, error) {
	if err := d.check(); err != nil {
		return "", err
	}
	src := qualify(v.Panes)
	live := ""
	if v.Session {
		live = " AND timing != 'MERGED'"
	}
	window := "PARTITION BY aggregation, window_start, " + v.Key
	cols := strings.Join(v.Columns(), ", ")
	switch v.Accumulation {
	case Accumulating:
		return "SELECT " + cols + "\n" +
			"FROM " + src + "\n" +
			"WHERE TRUE\n" +
			"QUALIFY ROW_NUMBER() OVER (" + window + " ORDER BY pane_index DESC) = 1" + live, nil
	case Discarding:
		i64 := d.typeName(Int64)
		return "SELECT " + cols + "\n" +
			"FROM (\n" +
			"  SELECT aggregation, window_start, window_end, " + v.Key + ",\n" +
			"    SUM(importe) OVER (" + window + ") AS importe,\n" +
			"    CAST(SUM(pedidos) OVER (" + window + ") AS " + i64 + ") AS pedidos,\n" +
			"    CAST(SUM(unidades) OVER (" + window + ") AS " + i64 + ") AS unidades,\n" +
			"    timing, pane_index,\n" +
			"    ROW_NUMBER() OVER (" + window + " ORDER BY pane_index DESC) AS newest\n" +
			"  FROM (\n" +
			"    SELECT * FROM " + src + "\n" +
			"    WHERE TRUE\n" +
			"    QUALIFY ROW_NUMBER() OVER (" + window + ", pane_index ORDER BY emitted_at DESC) = 1\n" +
			"  ) AS panes\n" +
			") AS totals\n" +
			"WHERE newest = 1" + live, nil
	}
	return "", fmt.Errorf("warehouse: unknown accumulation mode %q (want %s or %s)", v.Accumulation, Accumulating, Discarding)
}
