package reconcile

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// line is one lineas_pedido row of a fixture: pedido, pais, fecha,
// cantidad, precio.
type line replaytest.Line

// values orders named values by table's schema; missing columns are NULL.
func values(t *testing.T, table warehouse.Table, named map[string]warehouse.Value) []warehouse.Value {
	t.Helper()
	out := make([]warehouse.Value, len(table.Schema))
	for i, f := range table.Schema {
		v, ok := named[f.Name]
		if !ok {
			v = warehouse.NullValue()
		}
		out[i] = v
		delete(named, f.Name)
	}
	for n := range named {
		t.Fatalf("table %s has no column %s", table.Name, n)
	}
	return out
}

func lookup(t *testing.T, name string) warehouse.Table {
	t.Helper()
	tb, err := warehouse.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

type pane struct {
	agg, pais, start, timing, importe string
	index, pedidos, unidades          int64
}

func appendPanes(t *testing.T, w *duckdb.Warehouse, panes ...pane) {
	t.Helper()
	tb := lookup(t, warehouse.VentasHoraPaisPaneles)
	var rows []warehouse.Row
	for _, p := range panes {
		start, err := time.Parse(time.RFC3339, p.start)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, warehouse.Row{
			ID: p.agg + "|" + p.start + "|" + p.pais + "|" + strconv.FormatInt(p.index, 10),
			Values: values(t, tb, map[string]warehouse.Value{
				"aggregation": warehouse.StringValue(p.agg), "window_start": warehouse.TimeValue(start),
				"window_end": warehouse.TimeValue(start.Add(time.Hour)), "pais": warehouse.StringValue(p.pais),
				"importe": warehouse.DecValue(replaytest.Dec(t, p.importe)), "pedidos": warehouse.IntValue(p.pedidos),
				"unidades": warehouse.IntValue(p.unidades), "pane_index": warehouse.IntValue(p.index),
				"timing": warehouse.StringValue(p.timing), "accumulation": warehouse.StringValue(warehouse.Accumulating),
				"watermark": warehouse.TimeValue(start), "emitted_at": warehouse.TimeValue(start),
			}),
		})
	}
	if err := w.Append(context.Background(), warehouse.VentasHoraPaisPaneles, rows); err != nil {
		t.Fatal(err)
	}
}

type discarded struct {
	pedido, agg, reason, eventTime, windowStart string
}

func appendDrops(t *testing.T, w *duckdb.Warehouse, drops ...discarded) {
	t.Helper()
	tb := lookup(t, warehouse.PedidosDescartados)
	ts := func(s string) warehouse.Value {
		if s == "" {
			return warehouse.NullValue()
		}
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return warehouse.TimeValue(v)
	}
	str := func(s string) warehouse.Value {
		if s == "" {
			return warehouse.NullValue()
		}
		return warehouse.StringValue(s)
	}
	var rows []warehouse.Row
	for i, d := range drops {
		rows = append(rows, warehouse.Row{ID: "drop-" + strconv.Itoa(i), Values: values(t, tb, map[string]warehouse.Value{
			"pedido_id": str(d.pedido), "aggregation": str(d.agg), "reason": warehouse.StringValue(d.reason),
			"event_time": ts(d.eventTime), "window_start": ts(d.windowStart),
			"received_at": ts("2026-03-14T21:00:00Z"), "message_id": warehouse.StringValue("m-" + strconv.Itoa(i)),
		})})
	}
	if err := w.Append(context.Background(), warehouse.PedidosDescartados, rows); err != nil {
		t.Fatal(err)
	}
}

// fixture is a day (2026-03-14) whose differences are all explained, and a
// next day whose ERP lines never reached the stream.
func fixture(t *testing.T) *duckdb.Warehouse {
	w := replaytest.OpenWarehouse(t)
	const obj = "gs://alpinashop-catalogo/exportaciones/2026/03/15/pedidos.csv"
	// Generation 1 had P-1 wrong; the corrected generation 2 replaces it.
	replaytest.LoadLines(t, w, obj, 1, line{"P-1", "ES", "2026-03-14", 2, "99.90"})
	replaytest.LoadLines(t, w, obj, 2,
		line{"P-1", "ES", "2026-03-14", 2, "89.90"}, line{"P-1", "ES", "2026-03-14", 1, "10"},
		line{"P-2", "ES", "2026-03-14", 1, "50"},
		line{"P-3", "FR", "2026-03-14", 3, "13.30"},
		line{"P-4", "FR", "2026-03-14", 1, "5"},
		line{"P-6", "ES", "2026-03-15", 1, "7.5"},
	)
	replaytest.LoadLines(t, w, "gs://alpinashop-catalogo/exportaciones/2026/03/15/pt.csv", 7, line{"P-5", "PT", "2026-03-14", 1, "20"})
	appendPanes(t, w,
		pane{"ventas_hora_pais", "ES", "2026-03-14T10:00:00Z", "EARLY", "179.8", 0, 1, 2},
		pane{"ventas_hora_pais", "ES", "2026-03-14T10:00:00Z", "ON_TIME", "189.8", 1, 1, 3},
		pane{"ventas_hora_pais", "FR", "2026-03-14T11:00:00Z", "ON_TIME", "39.9", 0, 1, 3},
		pane{"otra", "ES", "2026-03-14T10:00:00Z", "ON_TIME", "1000", 0, 9, 9},
		pane{"ventas_hora_pais", "DE", "2026-03-15T00:00:00Z", "EARLY", "12", 0, 1, 1},
	)
	appendDrops(t, w,
		discarded{"P-2", "ventas_hora_pais", "too_late", "2026-03-14T09:30:00Z", "2026-03-14T09:00:00Z"},
		discarded{"P-5", "ventas_hora_pais", "too_late", "2026-03-14T07:10:00Z", "2026-03-14T07:00:00Z"},
		discarded{"P-4", "", `invalid: pais "XX" is not an ISO 3166-1 alpha-2 code`, "2026-03-14T11:30:00Z", ""},
		discarded{"P-7", "otra", "too_late", "2026-03-14T08:00:00Z", "2026-03-14T08:00:00Z"},
		discarded{"P-999", "", "invalid: body is not an order: unexpected EOF", "2026-03-14T13:05:00Z", ""},
	)
	return w
}

func TestRunExplainsADay(t *testing.T) {
	w := fixture(t)
	r, err := Run(context.Background(), w, Request{Date: "2026-03-14"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []Country{
		{Pais: "ES", Batch: ms(t, "239.8", 2, 4), RealTime: ms(t, "189.8", 1, 3), Difference: ms(t, "50", 1, 1),
			TooLate: ms(t, "50", 1, 1), Status: Explained},
		{Pais: "FR", Batch: ms(t, "44.9", 2, 4), RealTime: ms(t, "39.9", 1, 3), Difference: ms(t, "5", 1, 1),
			Invalid: ms(t, "5", 1, 1), Status: Explained},
		{Pais: "PT", Batch: ms(t, "20", 1, 1), Difference: ms(t, "20", 1, 1), TooLate: ms(t, "20", 1, 1), Status: Explained},
	}
	if diff := cmp.Diff(want, r.Countries); diff != "" {
		t.Errorf("countries (-want +got):\n%s", diff)
	}
	if !r.OK() || r.UnmatchedInvalid != 1 || r.UnmatchedTooLate != 0 {
		t.Errorf("OK=%v unmatched invalid=%d too late=%d; want true, 1, 0", r.OK(), r.UnmatchedInvalid, r.UnmatchedTooLate)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	replaytest.Golden(t, "testdata/explained.golden", buf.Bytes())
}

func TestRunFindsAnUnexplainedDay(t *testing.T) {
	w := fixture(t)
	r, err := Run(context.Background(), w, Request{Date: "2026-03-15"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"DE", "ES"}, r.Unexplained); diff != "" {
		t.Errorf("unexplained (-want +got):\n%s", diff)
	}
}

func TestRunDayInAZone(t *testing.T) {
	w := fixture(t)
	// In UTC+1 the 15th starts at 23:00 UTC on the 14th: no window of the
	// fixture starts in it but DE's, and the batch lines of the 15th.
	r, err := Run(context.Background(), w, Request{Date: "2026-03-15", Location: time.FixedZone("CET", 3600)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := time.Date(2026, 3, 14, 23, 0, 0, 0, time.UTC); !r.DayStart.Equal(want) || !r.DayEnd.Equal(want.Add(24*time.Hour)) {
		t.Errorf("day = [%s, %s), want to start at %s", r.DayStart, r.DayEnd, want)
	}
	if diff := cmp.Diff([]string{"DE", "ES"}, r.Unexplained); diff != "" {
		t.Errorf("unexplained (-want +got):\n%s", diff)
	}
}

func TestLoadRejectsBadRequests(t *testing.T) {
	w := replaytest.OpenWarehouse(t)
	for _, req := range []Request{
		{Date: "14/03/2026"},
		{Date: "2026-03-14", Aggregation: "x'; DROP TABLE lineas_pedido; --"},
	} {
		if _, err := Load(context.Background(), w, req); err == nil {
			t.Errorf("Load(%+v) succeeded, want an error", req)
		}
	}
}
