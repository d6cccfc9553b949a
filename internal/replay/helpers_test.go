package replay

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

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/window"
)

// replayStart is the processing time tests start replays at.
var replayStart = time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)

func openWarehouse(t testing.TB) *duckdb.Warehouse {
	t.Helper()
	w, err := duckdb.Open("", duckdb.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open DuckDB: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func options(t testing.TB, specs ...window.Spec) Options {
	if len(specs) == 0 {
		specs = []window.Spec{window.Defaults()}
	}
	return Options{
		Specs: specs, IsCountry: contract.IsCountry, TempDir: t.TempDir(),
		Now: func() time.Time { return replayStart },
	}
}

// panesQuery lists the panes table in a stable order, without emitted_at
// and watermark, which the replay's clock decides.
const panesQuery = "SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, pane_index, timing, accumulation " +
	"FROM ventas_hora_pais_paneles ORDER BY aggregation, window_start, pais, pane_index"

func query(t testing.TB, q warehouse.Querier, sql string) [][]string {
	t.Helper()
	res, err := q.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return res.Rows
}

// line is one lineas_pedido row of a fixture.
type line struct {
	pedido, pais, fecha string
	cantidad            int64
	precio              string
}

type lineRows struct {
	t      testing.TB
	table  warehouse.Table
	object string
	gen    int64
	lines  []line
	i      int
	row    []warehouse.Value
}

func (r *lineRows) Next() bool {
	if r.i >= len(r.lines) {
		return false
	}
	l := r.lines[r.i]
	r.i++
	fecha, err := time.Parse(time.DateOnly, l.fecha)
	if err != nil {
		r.t.Fatalf("fecha %q: %v", l.fecha, err)
	}
	precio := dec(r.t, l.precio)
	importe, err := precio.MulInt(l.cantidad)
	if err != nil {
		r.t.Fatal(err)
	}
	named := map[string]warehouse.Value{
		"pedido_id": warehouse.StringValue(l.pedido), "linea": warehouse.IntValue(int64(r.i)),
		"fecha": warehouse.DateValue(warehouse.DateOf(fecha)), "sku": warehouse.StringValue("MOCH-40L-AZ"),
		"cantidad": warehouse.IntValue(l.cantidad), "precio_unitario": warehouse.DecValue(precio),
		"cliente_id": warehouse.StringValue("C-" + l.pedido), "pais": warehouse.StringValue(l.pais),
		"importe": warehouse.DecValue(importe), "source_object": warehouse.StringValue(r.object),
		"source_generation": warehouse.IntValue(r.gen), "source_line": warehouse.IntValue(int64(r.i + 1)),
		"ingested_at": warehouse.TimeValue(time.Date(2026, 3, 16, 2, 0, 0, 0, time.UTC)),
	}
	r.row = make([]warehouse.Value, len(r.table.Schema))
	for i, f := range r.table.Schema {
		v, ok := named[f.Name]
		if !ok {
			r.t.Fatalf("fixture has no value for column %s", f.Name)
		}
		r.row[i] = v
	}
	return true
}

func (r *lineRows) Row() []warehouse.Value { return r.row }
func (r *lineRows) Err() error             { return nil }

func loadLines(t testing.TB, w *duckdb.Warehouse, object string, gen int64, lines ...line) {
	t.Helper()
	tb, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		t.Fatal(err)
	}
	id := "test-" + strings.NewReplacer(".", "_", "/", "_", ":", "_").Replace(object) + "-" + strconv.FormatInt(gen, 10)
	src := &lineRows{t: t, table: tb, object: object, gen: gen, lines: lines}
	if _, err := w.Load(context.Background(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: src}); err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
}

func dec(t testing.TB, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, path string, got []byte) {
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
