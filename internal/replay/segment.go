package replay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// segment is one bounded stream: a processor over its own temporary store,
// fed by workers, closed by one final tick.
type segment struct {
	dir    string
	store  *boltstore.Store
	proc   *stream.Processor
	specs  []window.Spec
	handle time.Time // processing time of every Handle

	ctx    context.Context
	cancel context.CancelFunc
	jobs   []chan order.Delivery
	wg     sync.WaitGroup
	closed bool

	maxEvent time.Time // only the feeding goroutine touches it

	mu  sync.Mutex
	res segmentResult
	err error
}

type segmentResult struct {
	accepted, duplicates int64
	invalidCount         int64
	invalid              []Sample
	windows              int64
	maxEvent             time.Time
	watermark, emittedAt time.Time
}

func openSegment(ctx context.Context, g *guard, opts Options, handle time.Time) (*segment, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "alpipe-replay-")
	if err != nil {
		return nil, fmt.Errorf("replay: state directory: %w", err)
	}
	store, err := boltstore.Open(filepath.Join(dir, "state.bolt"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("replay: %w", err)
	}
	proc, err := stream.New(store, g, opts.Specs, opts.IsCountry, opts.Log)
	if err != nil {
		_ = store.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("replay: %w", err)
	}
	s := &segment{dir: dir, store: store, proc: proc, specs: opts.Specs, handle: handle}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.jobs = make([]chan order.Delivery, segmentWorkers)
	for i := range s.jobs {
		s.jobs[i] = make(chan order.Delivery, 64)
		s.wg.Add(1)
		go s.work(s.jobs[i])
	}
	return s, nil
}

// closable reports whether an order at event time t, at a Cut, may start a
// new segment: in every aggregation its window is not the segment's newest.
func (s *segment) closable(t time.Time) bool {
	if s.maxEvent.IsZero() {
		return false
	}
	for _, sp := range s.specs {
		if sp.WindowOf(t) == sp.WindowOf(s.maxEvent) {
			return false
		}
	}
	return true
}

// feed hands a valid order to its worker: one worker per pedido_id, in
// input order, so which duplicate counts does not depend on scheduling.
func (s *segment) feed(ctx context.Context, m Message, o order.Order) error {
	if o.EventTime.After(s.maxEvent) {
		s.maxEvent = o.EventTime
	}
	d := order.Delivery{Message: order.Message{Data: m.Data, Attributes: m.Attributes, MessageID: m.ID, PublishTime: s.handle}}
	h := fnv.New32a()
	h.Write([]byte(o.PedidoID))
	select {
	case s.jobs[h.Sum32()%uint32(len(s.jobs))] <- d:
		return nil
	case <-s.ctx.Done():
		return s.failure(ctx)
	}
}

func (s *segment) work(jobs <-chan order.Delivery) {
	defer s.wg.Done()
	for d := range jobs {
		if s.ctx.Err() != nil {
			continue // drain: the segment failed
		}
		res, err := s.proc.Handle(s.ctx, d, s.handle)
		s.mu.Lock()
		switch {
		case err != nil:
			s.fail(fmt.Errorf("handle %s: %w", d.Message.ID(), err))
		case res.Invalid != "":
			// Valid JSON the processor still refuses: an id too long, totals
			// beyond NUMERIC.
			s.res.invalidCount++
			s.res.invalid = addSamples(s.res.invalid, Sample{ID: d.Message.ID(), Reason: res.Invalid})
		case res.Fate() == stream.Accepted:
			s.res.accepted++
		case res.Fate() == stream.Duplicate:
			s.res.duplicates++
		default:
			s.fail(fmt.Errorf("handle %s: fate %s in a bounded replay, where no watermark has moved yet", d.Message.ID(), res.Fate()))
		}
		s.mu.Unlock()
	}
}

// fail records the first error and stops the segment; s.mu is held.
func (s *segment) fail(err error) {
	if s.err == nil {
		s.err = err
		s.cancel()
	}
}

func (s *segment) failure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return fmt.Errorf("replay: %w", s.err)
	}
	return fmt.Errorf("replay: %w", ctx.Err())
}

func (s *segment) drain() {
	if s.closed {
		return
	}
	s.closed = true
	for _, c := range s.jobs {
		close(c)
	}
	s.wg.Wait()
}

// close waits for the handled orders, runs the final tick at the later of
// start and the end of the newest window's lateness, and removes the state.
func (s *segment) close(ctx context.Context, start time.Time) (res segmentResult, err error) {
	defer func() { err = errors.Join(err, s.abort()) }()
	s.drain()
	res, err = s.res, s.err // the workers are done: no lock needed
	res.maxEvent = s.maxEvent
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	if s.maxEvent.IsZero() {
		return res, nil
	}
	end := start
	for _, sp := range s.specs {
		// W = now - D once idle, and W >= end + L expires the window.
		if t := sp.WindowOf(s.maxEvent).End.Add(sp.AllowedLateness + sp.OutOfOrderness); t.After(end) {
			end = t
		}
	}
	tr, err := s.proc.Tick(ctx, end)
	if err != nil {
		return res, fmt.Errorf("replay: final tick at %s: %w", end.Format(time.RFC3339), err)
	}
	for _, at := range tr.Aggregations {
		switch {
		case at.Busy:
			return res, fmt.Errorf("replay: final tick of %s found its lease taken", at.Aggregation)
		case at.Pending > 0:
			return res, fmt.Errorf("replay: %d rows of %s were not written; run the replay again", at.Pending, at.Aggregation)
		case len(at.Panes) != at.Visited || at.Expired != at.Visited:
			// The only tick: each (window, key) must emit its one pane and close.
			return res, fmt.Errorf("replay: the final tick of %s closed %d and emitted %d panes for %d (window, key)s, want all",
				at.Aggregation, at.Expired, len(at.Panes), at.Visited)
		}
		for _, p := range at.Panes {
			if p.Timing != window.TimingOnTime || p.Index != 0 {
				return res, fmt.Errorf("replay: pane %s is %s, want the one ON_TIME pane", p.ID(), p.Timing)
			}
		}
		res.windows += int64(len(at.Panes))
		res.watermark, res.emittedAt = at.Watermark, end
	}
	return res, nil
}

func (s *segment) abort() error {
	s.cancel()
	s.drain()
	err := s.store.Close()
	if rerr := os.RemoveAll(s.dir); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("replay: remove segment state %s: %w", s.dir, err)
	}
	return nil
}

// guard is the segments' stream.Sink: it writes a replayed pane only to a
// window with no pane yet (see the package comment), and drops the dead
// letters, which the Report counts instead.
type guard struct {
	wh Warehouse
	// cols are the positions of ventas_hora_pais_paneles' columns by name:
	// every panes table is it with the key column renamed.
	cols map[string]int
	keys map[string]keyColumn // by aggregation

	mu              sync.Mutex
	written         int64
	unchanged       int64
	conflicts       int64
	conflictSamples []Conflict
}

var _ stream.Sink = (*guard)(nil)

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
	g := &guard{wh: wh, cols: map[string]int{}, keys: map[string]keyColumn{}}
	for i, f := range t.Schema {
		g.cols[f.Name] = i
	}
	for _, s := range specs {
		k := keyColumn{table: stream.PanesTable(s.Name), name: s.KeyField, pos: -1}
		if pt, err := stream.PanesTableOf(s); err == nil {
			k.table, k.pos = pt.Name, pt.Column(s.KeyField)
		}
		g.keys[s.Name] = k
	}
	return g
}

// panesTable reports whether table is the panes table of one of the aggregations.
func (g *guard) panesTable(table string) bool {
	for _, k := range g.keys {
		if k.table == table {
			return true
		}
	}
	return false
}

func (g *guard) counts() (written, unchanged, conflicts int64, samples []Conflict) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.written, g.unchanged, g.conflicts, slices.Clone(g.conflictSamples)
}

func (g *guard) Append(ctx context.Context, table string, rows []warehouse.Row) error {
	if table == warehouse.PedidosDescartados {
		return nil
	}
	if !g.panesTable(table) {
		return fmt.Errorf("replay: unexpected rows for table %s", table)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	byAgg := map[string][]replayed{}
	for _, r := range rows {
		p, err := g.decode(r)
		if err != nil {
			return err
		}
		byAgg[p.agg] = append(byAgg[p.agg], p)
	}
	var write []warehouse.Row
	var refused []Conflict
	unchanged := int64(0)
	for _, agg := range slices.Sorted(maps.Keys(byAgg)) {
		ps := byAgg[agg]
		existing, err := g.existing(ctx, agg, ps)
		if err != nil {
			return err
		}
		for _, p := range ps {
			have := existing[cellKey{p.WindowStart, p.Key}]
			switch {
			case len(have) == 0:
				write = append(write, p.row)
			case len(have) == 1 && same(have[0], p.Pane):
				unchanged++
			default:
				latest := have[len(have)-1]
				refused = append(refused, Conflict{
					Aggregation: agg, WindowStart: p.WindowStart, Key: p.Key, Existing: len(have),
					Replay: window.Measures{Importe: p.Importe, Pedidos: p.Pedidos, Unidades: p.Unidades},
					Latest: fmt.Sprintf("%s #%d %s/%d/%d", latest.Timing, latest.PaneIndex,
						render.Money(latest.Importe), latest.Pedidos, latest.Unidades),
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
	g.conflictSamples = addSamples(g.conflictSamples, refused...)
	return nil
}

// replayed is a pane row the segments wrote, as the panes read decodes one.
type replayed struct {
	warehouse.Pane
	row warehouse.Row
	agg string
}

type cellKey struct {
	start time.Time
	key   string
}

func same(a, b warehouse.Pane) bool {
	return a.PaneIndex == b.PaneIndex && a.Timing == b.Timing &&
		a.Importe == b.Importe && a.Pedidos == b.Pedidos && a.Unidades == b.Unidades
}

func (g *guard) decode(r warehouse.Row) (replayed, error) {
	v := r.Values
	if len(v) < len(g.cols) {
		return replayed{}, fmt.Errorf("replay: pane row %s has %d values", r.ID, len(v))
	}
	col := func(name string) warehouse.Value {
		i, ok := g.cols[name]
		if !ok {
			panic("replay: no column " + name)
		}
		return v[i]
	}
	p := replayed{row: r, agg: col("aggregation").Str, Pane: warehouse.Pane{
		WindowStart: col("window_start").Time.UTC(), PaneIndex: col("pane_index").Int,
		Timing: col("timing").Str, Importe: col("importe").Dec, Pedidos: col("pedidos").Int,
		Unidades: col("unidades").Int,
	}}
	k, ok := g.keys[p.agg]
	if !ok {
		return replayed{}, fmt.Errorf("replay: pane row %s of unknown aggregation %q", r.ID, p.agg)
	}
	if k.pos < 0 || k.pos >= len(v) {
		return replayed{}, fmt.Errorf("replay: pane row %s: no key column %s", r.ID, k.name)
	}
	p.Key = v[k.pos].Str
	return p, nil
}

// existing reads the panes already there for the windows of ps, by
// (window_start, key), in pane_index order.
func (g *guard) existing(ctx context.Context, agg string, ps []replayed) (
	map[cellKey][]warehouse.Pane, error,
) {
	starts := map[time.Time]bool{}
	for _, p := range ps {
		starts[p.WindowStart] = true
	}
	panes, err := warehouse.ReadPanes(ctx, g.wh, agg, agg, slices.SortedFunc(maps.Keys(starts), time.Time.Compare))
	if err != nil {
		return nil, fmt.Errorf("replay: read existing panes of %s: %w", agg, err)
	}
	out := map[cellKey][]warehouse.Pane{}
	for _, pn := range panes {
		k := cellKey{pn.WindowStart, pn.Key}
		out[k] = append(out[k], pn)
	}
	return out, nil
}
