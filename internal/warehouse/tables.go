// Package warehouse is the analytics warehouse's port: its tables (the
// fixed ones of package schema and the panes table of every declared
// aggregation), their views, the aggregates and the named reads. Adapters
// live in sub-packages: duckdb (embedded, local default) and bigquery
// (production).
package warehouse

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
	"github.com/alpinashop/alpipe/internal/window"
)

const (
	LineasPedido          = schema.LineasPedido
	Opiniones             = schema.Opiniones
	VentasDiariasSKU      = schema.VentasDiariasSKU
	PedidosDescartados    = schema.PedidosDescartados
	VentasHoraPaisPaneles = schema.VentasHoraPaisPaneles
	// VentasHoraPais is the dashboard view over VentasHoraPaisPaneles.
	VentasHoraPais = "ventas_hora_pais"
)

// Every declared aggregation's panes table is panesTemplate with the key
// column panesTemplateKey named after its key (see PanesTable),
// partitioned by day of window_start, clustered by the key.
const (
	panesTemplate    = VentasHoraPaisPaneles
	panesTemplateKey = "pais"
	panesPartition   = "window_start"
)

// mergedInto, last, is in session aggregations' panes tables alone
// (docs/event-time.md, "Session windows").
var mergedInto = Field{Name: "merged_into", Type: Timestamp, Mode: "NULLABLE",
	Description: "For a MERGED pane, the window_start of the session this one merged into; null otherwise."}

// View is the dashboard view of one aggregation over its panes table.
type View struct {
	Name         string // the aggregation's name
	Panes        string // its panes table
	Key          string // its key column
	Accumulation string // Accumulating or Discarding: what its panes carry
	Session      bool   // its windows are sessions (a MERGED one is gone)
}

// Tables returns every table, sorted by name: the fixed ones and the panes
// table of every declared aggregation. It panics on a malformed schema
// file or declaration, a build defect the package tests catch.
func Tables() []Table {
	c := mustParse()
	names := slices.Sorted(maps.Keys(c.panes))
	names = slices.Compact(slices.Sorted(slices.Values(append(names, schema.Names()...))))
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

// Views returns the view of every declared aggregation, sorted by name,
// and panics as Tables does.
func Views() []View { return slices.Clone(mustParse().views) }

func mustParse() catalogue {
	c := parsed()
	if c.err != nil {
		panic(c.err)
	}
	return c
}

// PanesTable builds the panes table of aggregation s from the template:
// the key column named after s's key, the descriptions that depend on the
// key from internal/aggregation, and merged_into for sessions.
func PanesTable(s window.Spec) (Table, error) {
	name, key := s.Name, s.KeyField
	template, err := schema.Lookup(panesTemplate)
	if err != nil {
		return Table{}, err
	}
	cols := template.Schema
	desc, err := aggregation.ColumnDescriptions(key)
	if err != nil {
		return Table{}, fmt.Errorf("warehouse: panes table of %s: %w", name, err)
	}
	for i := range cols {
		f := &cols[i]
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
		cols = append(cols, mergedInto)
	}
	return Table{Name: aggregation.PanesTable(name), Schema: cols, PartitionField: panesPartition, Clustering: []string{key}}, nil
}

// parsed holds the panes tables and views, built once: adapters look
// tables up per request.
var parsed = sync.OnceValue(func() catalogue {
	c := catalogue{panes: map[string]Table{}}
	decls, err := aggregation.Default()
	if err != nil {
		c.err = fmt.Errorf("warehouse: %w", err)
		return c
	}
	for _, d := range decls {
		spec := d.Spec
		t, err := PanesTable(spec)
		for _, n := range []string{t.Name, d.View()} {
			_, dup := c.panes[n]
			// The template is a fixed table and ventas_hora_pais's panes.
			_, notFixed := schema.Lookup(n)
			if (dup || notFixed == nil && n != panesTemplate) && err == nil {
				err = fmt.Errorf("warehouse: aggregation %s: %s is already a table", d.Name, n)
			}
		}
		if err != nil {
			c.err = err
			return c
		}
		c.panes[t.Name] = t
		c.views = append(c.views, View{Name: d.View(), Panes: t.Name, Key: d.KeyField, Accumulation: string(d.Accumulation), Session: spec.Session()})
	}
	return c
})

type catalogue struct {
	panes map[string]Table
	views []View // sorted by name, as the declarations are
	err   error  // the declarations could not be read
}

// Lookup returns the named table. The caller owns the returned slices.
func Lookup(name string) (Table, error) {
	c := parsed()
	t, ok := c.panes[name]
	if !ok {
		t, err := schema.Lookup(name)
		if err != nil && c.err != nil {
			return Table{}, c.err
		}
		return t, err
	}
	t.Schema, t.Clustering = slices.Clone(t.Schema), slices.Clone(t.Clustering)
	return t, nil
}
