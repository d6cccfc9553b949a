package duckdb

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

func open(t testing.TB, path string, opt Options) *Warehouse {
	t.Helper()
	if opt.TempDir == "" {
		opt.TempDir = t.TempDir()
	}
	w, err := Open(path, opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

func TestConformance(t *testing.T) {
	t.Run("in memory", func(t *testing.T) {
		warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse { return open(t, "", Options{}) }, warehousetest.Features{})
	})
	t.Run("on disk", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: the in-memory run covers the same code")
		}
		warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse {
			return open(t, filepath.Join(t.TempDir(), "wh.duckdb"), Options{MemoryLimit: "128MB"})
		}, warehousetest.Features{})
	})
	t.Run("discarding view", func(t *testing.T) {
		warehousetest.RunModeWith(t, func(t *testing.T) warehousetest.Warehouse {
			return open(t, "", Options{Accumulation: warehouse.Discarding})
		}, warehousetest.Features{Accumulation: warehouse.Discarding})
	})
}

// TestOpenRefuses: bad options, and a database whose table lost a column
// (the error names the table).
func TestOpenRefuses(t *testing.T) {
	drifted := filepath.Join(t.TempDir(), "wh.duckdb")
	w := open(t, drifted, Options{})
	if _, err := w.db.Exec("DROP VIEW " + warehouse.VentasHoraPais); err != nil {
		t.Fatal(err)
	}
	drop := "ALTER TABLE " + warehouse.VentasHoraPaisPaneles + " DROP COLUMN emitted_at"
	if _, err := w.db.Exec(drop); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		opt        Options
		wantErr    string
	}{
		{name: "unknown accumulation", opt: Options{Accumulation: "SOMETIMES"}},
		{name: "path with a query", path: "wh.duckdb?access_mode=READ_ONLY"},
		{name: "bad memory limit", opt: Options{MemoryLimit: "lots"}},
		{name: "schema drift", path: drifted, wantErr: warehouse.VentasHoraPaisPaneles},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.TempDir = t.TempDir()
			w, err := Open(tc.path, tc.opt)
			if err == nil {
				w.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not name %s", err, tc.wantErr)
			}
		})
	}
}

func TestLoadSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wh.duckdb")
	w, err := Open(path, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Load(ctx, warehouse.Load{ID: "f-1", Table: warehouse.LineasPedido, Rows: newOrderLines(10, "gs://b/o.csv", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w = open(t, path, Options{})
	res, err := w.Load(ctx, warehouse.Load{ID: "f-1", Table: warehouse.LineasPedido, Rows: newOrderLines(10, "gs://b/o.csv", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(warehouse.LoadResult{AlreadyLoaded: true}, res); diff != "" {
		t.Errorf("Load after reopen (-want +got)\n%s", diff)
	}
	checkQuery(t, w, "SELECT COUNT(*) FROM lineas_pedido", [][]string{{"10"}})
}

// A failure or a cancellation after a Load's first spool file was
// inserted leaves no row, and neither a failed nor a whole Load leaves a
// spool file.
func TestLoadAcrossSpoolFiles(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	w := open(t, "", Options{TempDir: tmp})
	const n = 2*spoolRows + 1000
	_, err := w.Load(ctx, warehouse.Load{ID: "broken", Table: warehouse.LineasPedido,
		Rows: &failAfter{RowSource: newOrderLines(n, "gs://b/o.csv", 1), n: spoolRows + 10}})
	if !errors.Is(err, errBroke) {
		t.Fatalf("Load: got %v, want %v", err, errBroke)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src := &cancelAfter{RowSource: newOrderLines(n, "gs://b/o.csv", 1), n: spoolRows + 100,
		cancel: cancel}
	_, err = w.Load(cctx, warehouse.Load{ID: "c-1", Table: warehouse.LineasPedido, Rows: src})
	if err == nil {
		t.Fatal("Load with a cancelled context succeeded, want an error")
	}
	checkQuery(t, w, "SELECT COUNT(*) FROM lineas_pedido", [][]string{{"0"}})
	res, err := w.Load(ctx, warehouse.Load{ID: "whole", Table: warehouse.LineasPedido, Rows: newOrderLines(n, "gs://b/o.csv", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != n {
		t.Errorf("loaded %d rows, want %d", res.Rows, n)
	}
	var units int64 // the generator's sums, computed independently
	var amount warehouse.Value
	gen := newOrderLines(n, "", 1)
	for gen.Next() {
		units += gen.Row()[4].Int
		s, err := amount.Dec.Add(gen.Row()[8].Dec)
		if err != nil {
			t.Fatal(err)
		}
		amount.Dec = s
	}
	checkQuery(t, w, "SELECT COUNT(*), SUM(cantidad), SUM(importe), COUNT(DISTINCT source_line) FROM lineas_pedido",
		[][]string{{"263144", strconv.FormatInt(units, 10), amount.Dec.String(), "263144"}})
	if diff := cmp.Diff([]string{spoolLockName}, files(t, tmp)); diff != "" {
		t.Errorf("temp folder after a failed and a whole Load (-want +got):\n%s", diff)
	}
}

func TestQueryRendersValues(t *testing.T) {
	w := open(t, "", Options{})
	tests := []struct {
		name, sql string
		want      []string
	}{
		{"decimal", "SELECT CAST('0.300000000' AS DECIMAL(38,9))", []string{"0.3"}},
		{"negative decimal below one", "SELECT CAST('-0.05' AS DECIMAL(38,9))", []string{"-0.05"}},
		{"whole decimal", "SELECT CAST('120' AS DECIMAL(38,9))", []string{"120"}},
		{"decimal beyond int64", "SELECT CAST('12345678901234567890123.123456789' AS DECIMAL(38,9))",
			[]string{"12345678901234567890123.123456789"}},
		{"small decimal", "SELECT CAST('1.5' AS DECIMAL(4,1))", []string{"1.5"}},
		{"hugeint", "SELECT CAST(170141183460469231731687303715884105727 AS HUGEINT)", []string{"170141183460469231731687303715884105727"}},
		{"bigint", "SELECT CAST(-9223372036854775808 AS BIGINT)", []string{"-9223372036854775808"}},
		{"date", "SELECT DATE '1969-12-31'", []string{"1969-12-31"}},
		{"timestamp", "SELECT TIMESTAMP '2026-03-14 18:42:00.5'", []string{"2026-03-14T18:42:00.5Z"}},
		{"null", "SELECT NULL", []string{"NULL"}},
		{"bool", "SELECT 1 < 2", []string{"true"}},
		{"double", "SELECT CAST(0.5 AS DOUBLE)", []string{"0.5"}},
		{"string", "SELECT 'ñ, \"x\"'", []string{`ñ, "x"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkQuery(t, w, tc.sql, [][]string{tc.want}) })
	}
	t.Run("columns", func(t *testing.T) {
		res, err := w.Query(context.Background(), "SELECT 1 AS uno, 'a' AS b WHERE false")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(warehouse.Result{Columns: []string{"uno", "b"}, Rows: [][]string{}}, res); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}

func checkQuery(t *testing.T, w *Warehouse, sql string, want [][]string) {
	t.Helper()
	res, err := w.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	if diff := cmp.Diff(want, res.Rows); diff != "" {
		t.Errorf("Query(%q) (-want +got)\n%s", sql, diff)
	}
}

var errBroke = errors.New("source broke")

// failAfter fails its source after n rows.
type failAfter struct {
	warehouse.RowSource
	n, i int
}

func (f *failAfter) Next() bool {
	if f.i >= f.n {
		return false
	}
	f.i++
	return f.RowSource.Next()
}

func (f *failAfter) Err() error {
	if f.i >= f.n {
		return errBroke
	}
	return f.RowSource.Err()
}

// cancelAfter cancels the load's context after n rows.
type cancelAfter struct {
	warehouse.RowSource
	n, i   int
	cancel func()
}

func (c *cancelAfter) Next() bool {
	if c.i++; c.i == c.n {
		c.cancel()
	}
	return c.RowSource.Next()
}

// A REQUIRED value repeated from the first row is written into the INSERT
// as a literal, NUL bytes included.
func TestLoadKeepsNULBytes(t *testing.T) {
	ctx := context.Background()
	w := open(t, "", Options{})
	src := newOrderLines(3, "gs://b/o\x00'.csv", 1)
	if _, err := w.Load(ctx, warehouse.Load{ID: "nul", Table: warehouse.LineasPedido, Rows: src}); err != nil {
		t.Fatal(err)
	}
	checkQuery(t, w, "SELECT source_object, COUNT(*) FROM lineas_pedido GROUP BY source_object", [][]string{{"gs://b/o\x00'.csv", "3"}})
}

// insertRow refuses a column type it has no literal for.
func TestInsertRowRefusesUnknownType(t *testing.T) {
	tbl := warehouse.Table{Name: "t", Schema: []warehouse.Field{{Name: "x", Type: "BOOL"}}}
	_, err := insertRow(tbl, []warehouse.Value{warehouse.StringValue("true")})
	if want := "column x: unsupported type BOOL"; err == nil || err.Error() != want {
		t.Errorf("insertRow: got %v, want %q", err, want)
	}
}
