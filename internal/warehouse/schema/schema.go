// Package schema declares the warehouse's fixed tables (in the JSON files
// here, which Terraform reads too) and the typed values rows are made of.
// It depends on no windowing, so the CSV contracts can check their feeds
// against it; package warehouse adds the panes tables.
package schema

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// Type is a column type, named as BigQuery names it.
type Type string

// The column types the warehouse tables use.
const (
	String    Type = "STRING"
	Int64     Type = "INT64"
	Numeric   Type = "NUMERIC"
	Date      Type = "DATE"
	Timestamp Type = "TIMESTAMP"
)

// Value is one typed cell: the field of the column's Type, or Null. A
// plain struct, so a row costs no allocation per cell on the ingest path.
type Value struct {
	Null bool
	Str  string      // STRING
	Int  int64       // INT64
	Dec  numeric.Dec // NUMERIC
	Days int32       // DATE: days since 1970-01-01
	Time time.Time   // TIMESTAMP (UTC)
}

// SameValue reports whether two non-NULL values of a column of type t are
// the same to a loader: both engines keep microseconds, so timestamps
// compare at that precision.
func SameValue(t Type, a, b *Value) bool {
	switch t {
	case String:
		return a.Str == b.Str
	case Int64:
		return a.Int == b.Int
	case Numeric:
		return a.Dec == b.Dec
	case Date:
		return a.Days == b.Days
	case Timestamp:
		return a.Time.UnixMicro() == b.Time.UnixMicro()
	}
	return false
}

// StringValue, IntValue, DecValue, DateValue and TimeValue build a Value.
func StringValue(s string) Value   { return Value{Str: s} }
func IntValue(n int64) Value       { return Value{Int: n} }
func DecValue(d numeric.Dec) Value { return Value{Dec: d} }
func DateValue(days int32) Value   { return Value{Days: days} }
func TimeValue(t time.Time) Value  { return Value{Time: t.UTC()} }
func NullValue() Value             { return Value{Null: true} }
func DayTime(days int32) time.Time { return time.Unix(int64(days)*86400, 0).UTC() }
func FormatDate(days int32) string { return DayTime(days).Format(time.DateOnly) }

// DateOf returns the UTC calendar day of t as days since 1970-01-01.
func DateOf(t time.Time) int32 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d-- // floor, so instants before 1970 land on their own day
	}
	return int32(d) //nolint:gosec // calendar dates fit easily
}

// The dates BigQuery's DAY partitioning can address: the contract refuses
// rows dated outside, and the BigQuery adapter such refreshes.
const (
	FirstPartitionDate = "1960-01-01"
	LastPartitionDate  = "2159-12-31"
)

// Field is one column in BigQuery's schema JSON form.
type Field struct {
	Name        string `json:"name"`
	Type        Type   `json:"type"`
	Mode        string `json:"mode"` // REQUIRED or NULLABLE
	Description string `json:"description"`
}

// Required reports whether the column is REQUIRED.
func (f Field) Required() bool { return f.Mode == "REQUIRED" }

// Table is a warehouse table: its schema and physical layout.
type Table struct {
	Name           string
	Schema         []Field
	PartitionField string // DAY partitioning column
	Clustering     []string
}

// Column returns the index of the named column, or -1.
func (t Table) Column(name string) int {
	return slices.IndexFunc(t.Schema, func(f Field) bool { return f.Name == name })
}

// The fixed tables of dataset alpinashop_analitica.
const (
	LineasPedido          = "lineas_pedido"
	Opiniones             = "opiniones"
	VentasDiariasSKU      = "ventas_diarias_sku"
	PedidosDescartados    = "pedidos_descartados"
	VentasHoraPaisPaneles = "ventas_hora_pais_paneles" // also the template of every panes table
)

//go:embed *.json
var files embed.FS

var layout = map[string]struct {
	partition  string
	clustering []string
}{
	LineasPedido:          {"fecha", []string{"sku"}},
	Opiniones:             {"fecha", []string{"sku"}},
	VentasDiariasSKU:      {"fecha", []string{"sku"}},
	PedidosDescartados:    {"received_at", []string{"reason"}},
	VentasHoraPaisPaneles: {"window_start", []string{"pais"}},
}

// parsed decodes the files once: adapters look tables up per request.
var parsed = sync.OnceValue(func() map[string]parsedTable {
	out := make(map[string]parsedTable, len(layout))
	for name, l := range layout {
		pt := parsedTable{table: Table{Name: name, PartitionField: l.partition, Clustering: l.clustering}}
		b, err := files.ReadFile(name + ".json")
		if err == nil {
			err = json.Unmarshal(b, &pt.table.Schema)
		}
		if err != nil {
			pt.err = fmt.Errorf("warehouse: schema of %s: %w", name, err)
		}
		out[name] = pt
	}
	return out
})

type parsedTable struct {
	table Table
	err   error
}

// Names lists the fixed tables, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(layout))
}

// Lookup returns the named fixed table; a malformed file is an error. The
// caller owns the returned slices.
func Lookup(name string) (Table, error) {
	pt, ok := parsed()[name]
	if !ok {
		return Table{}, fmt.Errorf("warehouse: unknown table %q", name)
	}
	t := pt.table
	t.Schema, t.Clustering = slices.Clone(t.Schema), slices.Clone(t.Clustering)
	return t, pt.err
}
