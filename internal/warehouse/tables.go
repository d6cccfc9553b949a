// Package warehouse declares the analytical tables (the single source of truth
// for their schemas, shared with Terraform and checked against the feed
// contracts) and the typed values that rows are made of. Adapters live in
// sub-packages: duckdb (embedded, local default) and bigquery (production).
package warehouse

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/window"
)

// Field is one column in BigQuery's schema JSON form, so the very same files
// feed Terraform's google_bigquery_table.schema.
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
	for i, f := range t.Schema {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// The tables of dataset alpinashop_analitica.
const (
	LineasPedido       = "lineas_pedido"
	Opiniones          = "opiniones"
	VentasDiariasSKU   = "ventas_diarias_sku"
	PedidosDescartados = "pedidos_descartados"
	// VentasHoraPaisPaneles is the panes table of the aggregation
	// ventas_hora_pais, declared in internal/aggregation like every other,
	// and the template of every panes table.
	VentasHoraPaisPaneles = "ventas_hora_pais_paneles"
	// VentasHoraPais is the dashboard view over VentasHoraPaisPaneles.
	VentasHoraPais = "ventas_hora_pais"
)

//go:embed schema/*.json
var schemaFS embed.FS

var layout = map[string]struct {
	partition  string
	clustering []string
}{
	LineasPedido:       {"fecha", []string{"sku"}},
	Opiniones:          {"fecha", []string{"sku"}},
	VentasDiariasSKU:   {"fecha", []string{"sku"}},
	PedidosDescartados: {"received_at", []string{"reason"}},
}

// Every declared aggregation (internal/aggregation) has a panes table built
// from panesTemplate, the panes table of ventas_hora_pais, whose key column
// is panesTemplateKey: same columns, with the key column named after the
// aggregation's key; partitioned by day of window_start, clustered by the
// key. A session aggregation's table has mergedInto besides, last.
const (
	panesTemplate    = VentasHoraPaisPaneles
	panesTemplateKey = "pais"
	panesPartition   = "window_start"
)

// mergedInto says which session a MERGED pane's session became
// (docs/event-time.md, "Session windows"); fixed and sliding windows never
// merge, so their tables do without it.
var mergedInto = Field{Name: "merged_into", Type: Timestamp, Mode: "NULLABLE",
	Description: "For a MERGED pane, the window_start of the session this one merged into; null otherwise."}

// View is the dashboard view of one aggregation over its panes table.
type View struct {
	Name         string // the aggregation's name
	Panes        string // its panes table
	Key          string // its key column
	Accumulation string // Accumulating or Discarding: what its panes carry
	// Session: its windows are sessions, and a session whose latest pane
	// is MERGED no longer exists.
	Session bool
}

// Tables returns every table, sorted by name: the fixed ones and the panes
// table of every declared aggregation. The schemas are read from the
// embedded schema/*.json files and the declarations; a malformed file is a
// build defect, caught by the package tests, so it panics here.
func Tables() []Table {
	c := parsed()
	if c.err != nil {
		panic(c.err)
	}
	names := make([]string, 0, len(c.tables))
	for n := range c.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Table, 0, len(names))
	for _, n := range names {
		t, err := Lookup(n)
		if err != nil {
			panic(err)
		}
		out = append(out, t)
	}
	return out
}

// Views returns the view of every declared aggregation, sorted by name. It
// panics on malformed declarations, as Tables does.
func Views() []View {
	c := parsed()
	if c.err != nil {
		panic(c.err)
	}
	return slices.Clone(c.views)
}

// PanesTable builds the panes table of aggregation s from the template,
// ventas_hora_pais_paneles.json: the key column takes the name of s's key,
// the columns whose meaning depends on the key take the descriptions
// internal/aggregation gives them, and session windows add merged_into.
func PanesTable(s window.Spec) (Table, error) {
	name, key := s.Name, s.KeyField
	var schema []Field
	b, err := schemaFS.ReadFile("schema/" + panesTemplate + ".json")
	if err == nil {
		err = json.Unmarshal(b, &schema)
	}
	if err != nil {
		return Table{}, fmt.Errorf("warehouse: schema of %s: %w", panesTemplate, err)
	}
	desc, err := aggregation.ColumnDescriptions(key)
	if err != nil {
		return Table{}, fmt.Errorf("warehouse: panes table of %s: %w", name, err)
	}
	for i := range schema {
		f := &schema[i]
		if f.Name == panesTemplateKey {
			f.Name = key
		} else if f.Name == key {
			return Table{}, fmt.Errorf("warehouse: panes table of %s: key %q is a column of the panes table already", name, key)
		}
		if d, ok := desc[f.Name]; ok {
			f.Description = d
		}
	}
	if s.Session() {
		schema = append(schema, mergedInto)
	}
	return Table{Name: aggregation.PanesTable(name), Schema: schema, PartitionField: panesPartition, Clustering: []string{key}}, nil
}

// parsed holds every table's schema and every view, decoded once: adapters
// look tables up per request (a load, an append), and neither the
// files nor the declarations change.
var parsed = sync.OnceValue(func() catalogue {
	c := catalogue{tables: make(map[string]parsedTable, len(layout)+2)}
	for name, l := range layout {
		var pt parsedTable
		b, err := schemaFS.ReadFile("schema/" + name + ".json")
		if err == nil {
			err = json.Unmarshal(b, &pt.table.Schema)
		}
		if err != nil {
			pt.err = fmt.Errorf("warehouse: schema of %s: %w", name, err)
		}
		pt.table.Name, pt.table.PartitionField, pt.table.Clustering = name, l.partition, l.clustering
		c.tables[name] = pt
	}
	decls, err := aggregation.Default()
	if err != nil {
		c.err = fmt.Errorf("warehouse: %w", err)
		return c
	}
	for _, d := range decls {
		spec := d.Spec()
		t, err := PanesTable(spec)
		for _, n := range []string{t.Name, d.View()} {
			if _, dup := c.tables[n]; dup && err == nil {
				err = fmt.Errorf("warehouse: aggregation %s: %s is already a table", d.Name, n)
			}
		}
		if err != nil {
			c.err = err
			return c
		}
		c.tables[t.Name] = parsedTable{table: t}
		c.views = append(c.views, View{Name: d.View(), Panes: t.Name, Key: d.Key, Accumulation: string(d.Accumulation), Session: spec.Session()})
	}
	return c
})

type catalogue struct {
	tables map[string]parsedTable
	views  []View // sorted by name, as the declarations are
	err    error  // the declarations could not be read: no panes table is known
}

type parsedTable struct {
	table Table
	err   error
}

// Lookup returns the named table. The caller owns the returned slices.
func Lookup(name string) (Table, error) {
	c := parsed()
	pt, ok := c.tables[name]
	switch {
	case !ok && c.err != nil:
		return Table{}, c.err
	case !ok:
		return Table{}, fmt.Errorf("warehouse: unknown table %q", name)
	case pt.err != nil:
		return Table{}, pt.err
	}
	t := pt.table
	t.Schema = slices.Clone(t.Schema)
	t.Clustering = slices.Clone(t.Clustering)
	return t, nil
}
