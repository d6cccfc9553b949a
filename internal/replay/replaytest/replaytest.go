// Package replaytest holds the fixtures the tests of the batch side of the
// pipeline share: a DuckDB warehouse private to a test, lineas_pedido rows
// loaded into it as the ingest would, and golden files. The replay reads
// those rows back as orders, and reconcile compares them with the panes.
package replaytest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
	"github.com/alpinashop/alpipe/internal/window"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// OpenWarehouse opens an in-memory DuckDB, closed when the test ends.
func OpenWarehouse(t testing.TB) *duckdb.Warehouse {
	t.Helper()
	w, err := duckdb.Open("", duckdb.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open DuckDB: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// Golden compares got with the golden file at path, rewriting the file first
// when the test binary runs with -update.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// Line is one lineas_pedido row of a fixture; the other columns are derived
// from it (importe = precio × cantidad, cliente_id from the order). It is an
// unnamed struct so that a test package can declare `type line
// replaytest.Line` and keep its fixtures as unkeyed literals of its own type.
type Line = struct {
	Pedido, Pais, Fecha string // Fecha as YYYY-MM-DD
	Cantidad            int64
	Precio              string // a decimal
}

// LoadLines loads lines as generation gen of the source object, numbered
// from 1 in the order given.
func LoadLines[L ~Line](t testing.TB, w warehouse.Warehouse, object string, gen int64, lines ...L) {
	t.Helper()
	id := "test-" + strings.NewReplacer(".", "_", "/", "_", ":", "_").Replace(object) + "-" + strconv.FormatInt(gen, 10)
	src := &warehousetest.Source{}
	for i, l := range lines {
		l := Line(l)
		fecha, err := time.Parse(time.DateOnly, l.Fecha)
		if err != nil {
			t.Fatalf("fecha %q: %v", l.Fecha, err)
		}
		precio := Dec(t, l.Precio)
		importe, err := precio.MulInt(l.Cantidad)
		if err != nil {
			t.Fatal(err)
		}
		src.Rows = append(src.Rows, Values(t, warehouse.LineasPedido, map[string]warehouse.Value{
			"pedido_id": warehouse.StringValue(l.Pedido), "linea": warehouse.IntValue(int64(i + 1)),
			"fecha": warehouse.DateValue(warehouse.DateOf(fecha)), "sku": warehouse.StringValue("MOCH-40L-AZ"),
			"cantidad": warehouse.IntValue(l.Cantidad), "precio_unitario": warehouse.DecValue(precio),
			"cliente_id": warehouse.StringValue("C-" + l.Pedido), "pais": warehouse.StringValue(l.Pais),
			"importe": warehouse.DecValue(importe), "source_object": warehouse.StringValue(object),
			"source_generation": warehouse.IntValue(gen), "source_line": warehouse.IntValue(int64(i + 2)),
			"ingested_at": warehouse.TimeValue(time.Date(2026, 3, 16, 2, 0, 0, 0, time.UTC)),
		}))
	}
	if _, err := w.Load(context.Background(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: src}); err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
}

// AppendPanes appends panes to ventas_hora_pais_paneles, each watermarked
// and emitted at its window's start.
func AppendPanes(t testing.TB, w warehouse.Appender, panes ...window.Pane) {
	t.Helper()
	var rows []warehouse.Row
	for _, p := range panes {
		rows = append(rows, warehouse.Row{ID: p.ID(), Values: Values(t, warehouse.VentasHoraPaisPaneles, map[string]warehouse.Value{
			"aggregation": warehouse.StringValue(p.Aggregation), "window_start": warehouse.TimeValue(p.WindowStart),
			"window_end": warehouse.TimeValue(p.WindowEnd), "pais": warehouse.StringValue(p.Key),
			"importe": warehouse.DecValue(p.Measures.Importe), "pedidos": warehouse.IntValue(p.Measures.Pedidos),
			"unidades": warehouse.IntValue(p.Measures.Unidades), "pane_index": warehouse.IntValue(p.Index),
			"timing": warehouse.StringValue(string(p.Timing)), "accumulation": warehouse.StringValue(string(p.Accumulation)),
			"watermark": warehouse.TimeValue(p.WindowStart), "emitted_at": warehouse.TimeValue(p.WindowStart),
		})})
	}
	if err := w.Append(context.Background(), warehouse.VentasHoraPaisPaneles, rows); err != nil {
		t.Fatal(err)
	}
}

// Values orders named values by table's schema; missing columns are NULL.
func Values(t testing.TB, table string, named map[string]warehouse.Value) []warehouse.Value {
	t.Helper()
	tb, err := warehouse.Lookup(table)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]warehouse.Value, len(tb.Schema))
	for i, f := range tb.Schema {
		v, ok := named[f.Name]
		if !ok {
			v = warehouse.NullValue()
		}
		out[i] = v
		delete(named, f.Name)
	}
	for n := range named {
		t.Fatalf("table %s has no column %s", table, n)
	}
	return out
}

// Dec parses a decimal of a fixture.
func Dec(t testing.TB, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}
