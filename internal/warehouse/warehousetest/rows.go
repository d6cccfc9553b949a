package warehousetest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// ingestedAt is every loaded row's; TIMESTAMP must keep its microseconds.
var ingestedAt = time.Date(2026, 3, 15, 2, 0, 0, 123456000, time.UTC)

// line is one lineas_pedido row.
type line struct {
	pedido   string
	linea    int64
	fecha    string // YYYY-MM-DD
	sku      string
	cantidad int64
	precio   string // exact decimal text
	cliente  string // "" means NULL
	pais     string
	object   string
	gen      int64
	srcLine  int64
}

// values builds the row, importe = cantidad * precio exactly.
func (l line) values(t *testing.T) []warehouse.Value {
	t.Helper()
	precio := dec(t, l.precio)
	importe, err := precio.MulInt(l.cantidad)
	if err != nil {
		t.Fatalf("importe of %+v: %v", l, err)
	}
	cliente := warehouse.NullValue()
	if l.cliente != "" {
		cliente = warehouse.StringValue(l.cliente)
	}
	return rowOf(t, warehouse.LineasPedido, map[string]warehouse.Value{
		"pedido_id":         warehouse.StringValue(l.pedido),
		"linea":             warehouse.IntValue(l.linea),
		"fecha":             warehouse.DateValue(day(t, l.fecha)),
		"sku":               warehouse.StringValue(l.sku),
		"cantidad":          warehouse.IntValue(l.cantidad),
		"precio_unitario":   warehouse.DecValue(precio),
		"cliente_id":        cliente,
		"pais":              warehouse.StringValue(l.pais),
		"importe":           warehouse.DecValue(importe),
		"source_object":     warehouse.StringValue(l.object),
		"source_generation": warehouse.IntValue(l.gen),
		"source_line":       warehouse.IntValue(l.srcLine),
		"ingested_at":       warehouse.TimeValue(ingestedAt),
	})
}

// rowOf orders named values as the table's schema does.
func rowOf(t *testing.T, table string, byName map[string]warehouse.Value) []warehouse.Value {
	t.Helper()
	tbl, err := warehouse.Lookup(table)
	if err != nil {
		t.Fatal(err)
	}
	if len(byName) != len(tbl.Schema) {
		t.Fatalf("%d values for the %d columns of %s", len(byName), len(tbl.Schema), table)
	}
	row := make([]warehouse.Value, len(tbl.Schema))
	for i, f := range tbl.Schema {
		v, ok := byName[f.Name]
		if !ok {
			t.Fatalf("no value for column %s of %s", f.Name, table)
		}
		row[i] = v
	}
	return row
}

func lines(t *testing.T, ls ...line) [][]warehouse.Value {
	t.Helper()
	out := make([][]warehouse.Value, len(ls))
	for i, l := range ls {
		out[i] = l.values(t)
	}
	return out
}

func dec(t *testing.T, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

func day(t *testing.T, s string) int32 {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatalf("date %q: %v", s, err)
	}
	return warehouse.DateOf(d)
}

func ts(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("timestamp %q: %v", s, err)
	}
	return v
}

// Source is a RowSource over Rows handing them out as a file reader does
// (one reused buffer); with FailAfter > 0 it fails with ErrBrokenSource
// after that many rows. Nexts counts its Next calls.
type Source struct {
	Rows      [][]warehouse.Value
	FailAfter int
	Nexts     atomic.Int64
	i         int
	cur       []warehouse.Value
}

// ErrBrokenSource is the failure of a Source with FailAfter.
var ErrBrokenSource = errors.New("source broke midway")

func rowsOf(rows [][]warehouse.Value) *Source { return &Source{Rows: rows} }

func (s *Source) Next() bool {
	s.Nexts.Add(1)
	if s.i >= len(s.Rows) || s.Err() != nil {
		return false
	}
	s.cur = append(s.cur[:0], s.Rows[s.i]...)
	s.i++
	return true
}

func (s *Source) Row() []warehouse.Value { return s.cur }

func (s *Source) Err() error {
	if s.FailAfter > 0 && s.i >= s.FailAfter {
		return ErrBrokenSource
	}
	return nil
}

// add appends rows to table, failing the test on error.
func add(t *testing.T, w Warehouse, table string, rows ...warehouse.Row) {
	t.Helper()
	if err := w.Append(t.Context(), table, rows); err != nil {
		t.Fatalf("Append to %s: %v", table, err)
	}
}

func query(t *testing.T, w Warehouse, sql string) [][]string {
	t.Helper()
	res, err := w.Query(t.Context(), sql)
	if err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return res.Rows
}

func check(t *testing.T, w Warehouse, sql string, want [][]string) {
	t.Helper()
	got := query(t, w, sql)
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: (-want +got)\n%s", sql, diff)
	}
}
