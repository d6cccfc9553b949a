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
	LineasPedido          = "lineas_pedido"
	Opiniones             = "opiniones"
	VentasDiariasSKU      = "ventas_diarias_sku"
	VentasHoraPaisPaneles = "ventas_hora_pais_paneles"
	PedidosDescartados    = "pedidos_descartados"
	// VentasHoraPais is the dashboard view over VentasHoraPaisPaneles.
	VentasHoraPais = "ventas_hora_pais"
)

//go:embed schema/*.json
var schemaFS embed.FS

var layout = map[string]struct {
	partition  string
	clustering []string
}{
	LineasPedido:          {"fecha", []string{"sku"}},
	Opiniones:             {"fecha", []string{"sku"}},
	VentasDiariasSKU:      {"fecha", []string{"sku"}},
	VentasHoraPaisPaneles: {"window_start", []string{"pais"}},
	PedidosDescartados:    {"received_at", []string{"reason"}},
}

// Tables returns every table, sorted by name. The schemas are read from the
// embedded schema/*.json files; a malformed file is a build defect, caught
// by the package tests, so it panics here.
func Tables() []Table {
	names := make([]string, 0, len(layout))
	for n := range layout {
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

// parsed holds every table's schema, decoded once: adapters look tables up
// per request (a remote load, an append), and the files never change.
var parsed = sync.OnceValue(func() map[string]parsedTable {
	out := make(map[string]parsedTable, len(layout))
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
		out[name] = pt
	}
	return out
})

type parsedTable struct {
	table Table
	err   error
}

// Lookup returns the named table. The caller owns the returned slices.
func Lookup(name string) (Table, error) {
	pt, ok := parsed()[name]
	switch {
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
