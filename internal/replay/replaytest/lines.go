package replaytest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Line is one lineas_pedido row of a fixture; the other columns are derived
// from it (importe = precio × cantidad, cliente_id from the order). It is an
// unnamed struct so that a test package can declare `type line
// replaytest.Line` and keep its fixtures as unkeyed literals of its own type.
type Line = struct {
	Pedido, Pais, Fecha string // Fecha as YYYY-MM-DD
	Cantidad            int64
	Precio              string // a decimal
}

// Loader is the part of a warehouse LoadLines needs.
type Loader interface {
	Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error)
}

// LoadLines loads lines as generation gen of the source object, numbered
// from 1 in the order given.
func LoadLines[L ~Line](t testing.TB, w Loader, object string, gen int64, lines ...L) {
	t.Helper()
	tb, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		t.Fatal(err)
	}
	id := "test-" + strings.NewReplacer(".", "_", "/", "_", ":", "_").Replace(object) + "-" + strconv.FormatInt(gen, 10)
	src := &lineRows{t: t, table: tb, object: object, gen: gen}
	for _, l := range lines {
		src.lines = append(src.lines, Line(l))
	}
	if _, err := w.Load(context.Background(), warehouse.Load{ID: id, Table: warehouse.LineasPedido, Rows: src}); err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
}

// lineRows is a warehouse.RowSource over fixture lines of one source object
// generation.
type lineRows struct {
	t      testing.TB
	table  warehouse.Table
	object string
	gen    int64
	lines  []Line
	i      int
	row    []warehouse.Value
}

func (r *lineRows) Next() bool {
	if r.i >= len(r.lines) {
		return false
	}
	l := r.lines[r.i]
	r.i++
	fecha, err := time.Parse(time.DateOnly, l.Fecha)
	if err != nil {
		r.t.Fatalf("fecha %q: %v", l.Fecha, err)
	}
	precio := Dec(r.t, l.Precio)
	importe, err := precio.MulInt(l.Cantidad)
	if err != nil {
		r.t.Fatal(err)
	}
	named := map[string]warehouse.Value{
		"pedido_id": warehouse.StringValue(l.Pedido), "linea": warehouse.IntValue(int64(r.i)),
		"fecha": warehouse.DateValue(warehouse.DateOf(fecha)), "sku": warehouse.StringValue("MOCH-40L-AZ"),
		"cantidad": warehouse.IntValue(l.Cantidad), "precio_unitario": warehouse.DecValue(precio),
		"cliente_id": warehouse.StringValue("C-" + l.Pedido), "pais": warehouse.StringValue(l.Pais),
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

// Dec parses a decimal of a fixture.
func Dec(t testing.TB, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}
