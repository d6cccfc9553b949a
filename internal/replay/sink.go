package replay

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// guard is the segments' stream.Sink: it writes a replayed pane only to a
// window that has no pane yet (see the package comment), and drops the
// dead-letter rows of invalid orders, which the Report counts instead.
type guard struct {
	wh   Warehouse
	keys map[string]keyColumn // by aggregation
	cols columns

	mu              sync.Mutex
	written         int64
	unchanged       int64
	conflicts       int64
	conflictSamples []Conflict
}

var _ stream.Sink = (*guard)(nil)

// columns are the panes table's column positions the guard reads.
type columns struct {
	agg, start, index, timing, importe, pedidos, unidades int
}

// keyColumn is an aggregation's panes table and its key column there.
type keyColumn struct {
	table string
	name  string
	pos   int
}

func newGuard(wh Warehouse, specs []window.Spec) *guard {
	t, err := warehouse.Lookup(warehouse.VentasHoraPaisPaneles)
	if err != nil {
		panic(err) // the embedded schemas are part of the build
	}
	// Every panes table is the template's columns, in its order, with the
	// key column renamed (warehouse.PanesTable): positions are the same.
	g := &guard{wh: wh, keys: map[string]keyColumn{}, cols: columns{
		agg: t.Column("aggregation"), start: t.Column("window_start"),
		index: t.Column("pane_index"), timing: t.Column("timing"), importe: t.Column("importe"),
		pedidos: t.Column("pedidos"), unidades: t.Column("unidades"),
	}}
	for _, s := range specs {
		k := keyColumn{table: stream.PanesTable(s.Name), name: s.KeyField, pos: -1}
		if pt, err := stream.PanesTableOf(s); err == nil {
			k.table, k.pos = pt.Name, pt.Column(s.KeyField)
		}
		g.keys[s.Name] = k
	}
	return g
}

// aggregationOf returns the aggregation whose panes table is table.
func (g *guard) aggregationOf(table string) (string, bool) {
	for name, k := range g.keys {
		if k.table == table {
			return name, true
		}
	}
	return "", false
}

func (g *guard) counts() (written, unchanged, conflicts int64, samples []Conflict) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.written, g.unchanged, g.conflicts, slices.Clone(g.conflictSamples)
}

// Append implements stream.Sink.
func (g *guard) Append(ctx context.Context, table string, rows []warehouse.Row) error {
	if table == warehouse.PedidosDescartados {
		return nil
	}
	if _, ok := g.aggregationOf(table); !ok {
		return fmt.Errorf("replay: unexpected rows for table %s", table)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	byAgg := map[string][]replayed{}
	var aggs []string
	for _, r := range rows {
		p, err := g.decode(r)
		if err != nil {
			return err
		}
		if _, ok := byAgg[p.agg]; !ok {
			aggs = append(aggs, p.agg)
		}
		byAgg[p.agg] = append(byAgg[p.agg], p)
	}
	var write []warehouse.Row
	var refused []Conflict
	unchanged := int64(0)
	for _, agg := range aggs {
		ps := byAgg[agg]
		existing, err := g.existing(ctx, agg, ps)
		if err != nil {
			return err
		}
		for _, p := range ps {
			have := existing[cellKey{p.start, p.key}]
			switch {
			case len(have) == 0:
				write = append(write, p.row)
			case len(have) == 1 && have[0].same(p):
				unchanged++
			default:
				latest := have[len(have)-1]
				refused = append(refused, Conflict{
					Aggregation: agg, WindowStart: p.start, Key: p.key, Replay: p.measures, Existing: len(have),
					Latest: fmt.Sprintf("%s #%d %s/%d/%d", latest.timing, latest.index,
						render.Money(latest.measures.Importe), latest.measures.Pedidos, latest.measures.Unidades),
				})
			}
		}
	}
	if len(write) > 0 {
		if err := g.wh.Append(ctx, table, write); err != nil {
			return err
		}
	}
	g.written += int64(len(write))
	g.unchanged += unchanged
	g.conflicts += int64(len(refused))
	for _, c := range refused {
		if len(g.conflictSamples) < maxSamples {
			g.conflictSamples = append(g.conflictSamples, c)
		}
	}
	return nil
}

// replayed is a pane row as the guard compares it.
type replayed struct {
	row      warehouse.Row
	agg, key string
	start    time.Time
	index    int64
	timing   string
	measures window.Measures
}

type cellKey struct {
	start time.Time
	key   string
}

func (p replayed) same(o replayed) bool {
	return p.index == o.index && p.timing == o.timing && p.measures == o.measures
}

func (g *guard) decode(r warehouse.Row) (replayed, error) {
	v := r.Values
	c := g.cols
	if len(v) <= max(c.agg, c.start, c.index, c.timing, c.importe, c.pedidos, c.unidades) {
		return replayed{}, fmt.Errorf("replay: pane row %s has %d values", r.ID, len(v))
	}
	p := replayed{row: r, agg: v[c.agg].Str, start: v[c.start].Time.UTC(), index: v[c.index].Int, timing: v[c.timing].Str,
		measures: window.Measures{Importe: v[c.importe].Dec, Pedidos: v[c.pedidos].Int, Unidades: v[c.unidades].Int}}
	k, ok := g.keys[p.agg]
	if !ok {
		return replayed{}, fmt.Errorf("replay: pane row %s of unknown aggregation %q", r.ID, p.agg)
	}
	if k.pos < 0 || k.pos >= len(v) {
		return replayed{}, fmt.Errorf("replay: pane row %s: no key column %s", r.ID, k.name)
	}
	p.key = v[k.pos].Str
	return p, nil
}

// existing reads the panes already in the table for the windows of ps, by
// (window_start, key), in pane_index order.
func (g *guard) existing(ctx context.Context, agg string, ps []replayed) (map[cellKey][]replayed, error) {
	var starts []time.Time
	seen := map[time.Time]bool{}
	for _, p := range ps {
		if !seen[p.start] {
			seen[p.start] = true
			starts = append(starts, p.start)
		}
	}
	panes, err := warehouse.ReadPanes(ctx, g.wh, agg, agg, starts)
	if err != nil {
		return nil, fmt.Errorf("replay: read existing panes of %s: %w", agg, err)
	}
	out := map[cellKey][]replayed{}
	for _, pn := range panes {
		p := replayed{start: pn.WindowStart, key: pn.Key, index: pn.PaneIndex, timing: pn.Timing,
			measures: window.Measures{Importe: pn.Importe, Pedidos: pn.Pedidos, Unidades: pn.Unidades}}
		k := cellKey{p.start, p.key}
		out[k] = append(out[k], p)
	}
	return out, nil
}
