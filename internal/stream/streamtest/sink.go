package streamtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// ErrSinkDown is what a Sink told to fail returns.
var ErrSinkDown = errors.New("streamtest: sink is down")

// Sink is a recording stream.Sink, idempotent per Row.ID like the real
// warehouses. It counts repeated appends of an ID, so tests can prove that
// a retry happened and that it carried the same row, and it can be told to
// fail.
type Sink struct {
	guard
	rows      map[string][]warehouse.Row          // per table, in first-append order
	byID      map[string]map[string]warehouse.Row // per table
	repeats   int
	conflicts []string
	failing   bool
	failTable map[string]bool
	failIf    func() bool // asked before every append; set before the sink is in use
}

// NewSink returns an empty, working sink.
func NewSink() *Sink {
	return &Sink{rows: map[string][]warehouse.Row{}, byID: map[string]map[string]warehouse.Row{},
		failTable: map[string]bool{}}
}

// Append implements stream.Sink.
func (s *Sink) Append(_ context.Context, table string, rows []warehouse.Row) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing || (s.failIf != nil && s.failIf()) {
		return ErrSinkDown
	}
	if s.failTable[table] {
		return fmt.Errorf("append to %s: %w", table, ErrSinkDown)
	}
	if _, err := warehouse.Lookup(table); err != nil && !strings.HasSuffix(table, "_paneles") {
		return err // undeclared panes tables come from stream.PanesTableOf
	}
	ids := s.byID[table]
	if ids == nil {
		ids = map[string]warehouse.Row{}
		s.byID[table] = ids
	}
	for _, r := range rows {
		if r.ID == "" {
			return fmt.Errorf("append to %s: row without ID", table)
		}
		if prev, ok := ids[r.ID]; ok {
			s.repeats++
			if !reflect.DeepEqual(prev.Values, r.Values) {
				s.conflicts = append(s.conflicts, fmt.Sprintf("%s row %s: %v then %v", table, r.ID, prev.Values, r.Values))
			}
			continue
		}
		ids[r.ID] = r
		s.rows[table] = append(s.rows[table], r)
	}
	return nil
}

func (s *Sink) SetFailing(on bool) { s.locked(func() { s.failing = on }) }

func (s *Sink) FailTable(table string, on bool) { s.locked(func() { s.failTable[table] = on }) }

// Rows returns the distinct rows of table, in first-append order.
func (s *Sink) Rows(table string) (rows []warehouse.Row) {
	s.locked(func() { rows = slices.Clone(s.rows[table]) })
	return rows
}

// Count returns the number of distinct rows of table.
func (s *Sink) Count(table string) (n int) {
	s.locked(func() { n = len(s.rows[table]) })
	return n
}

// Repeats is the number of rows ignored because their ID had been appended.
func (s *Sink) Repeats() (n int) {
	s.locked(func() { n = s.repeats })
	return n
}

// Conflicts lists IDs appended twice with different values, which no retry
// may produce.
func (s *Sink) Conflicts() (c []string) {
	s.locked(func() { c = slices.Clone(s.conflicts) })
	return c
}

// PanesOf decodes the distinct pane rows of spec's table, in first-append
// order.
func (s *Sink) PanesOf(spec window.Spec) ([]window.Pane, error) {
	t, err := stream.PanesTableOf(spec)
	if err != nil {
		return nil, err
	}
	rows := s.Rows(t.Name)
	out := make([]window.Pane, 0, len(rows))
	for _, r := range rows {
		p, err := decodePane(t, spec.KeyField, r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func decodePane(t warehouse.Table, keyField string, r warehouse.Row) (window.Pane, error) {
	v, err := byName(t, r)
	if err != nil {
		return window.Pane{}, err
	}
	p := window.Pane{Aggregation: v["aggregation"].Str, Key: v[keyField].Str, Index: v["pane_index"].Int,
		WindowStart: v["window_start"].Time, WindowEnd: v["window_end"].Time, MergedInto: v["merged_into"].Time,
		Timing: window.Timing(v["timing"].Str), Accumulation: window.Accumulation(v["accumulation"].Str),
		Measures:  window.Measures{Importe: v["importe"].Dec, Pedidos: v["pedidos"].Int, Unidades: v["unidades"].Int},
		Watermark: v["watermark"].Time, EmittedAt: v["emitted_at"].Time}
	if want := p.ID(); r.ID != want {
		return p, fmt.Errorf("pane row ID %q, want the pane identity %q", r.ID, want)
	}
	return p, nil
}

// Discard is a decoded row of pedidos_descartados; "" and zero are NULL.
type Discard struct {
	ID, PedidoID, Aggregation, Reason, MessageID, Raw string
	EventTime, WindowStart, Watermark, ReceivedAt     time.Time
}

// Discards decodes the distinct rows of pedidos_descartados.
func (s *Sink) Discards() ([]Discard, error) {
	t, err := warehouse.Lookup(warehouse.PedidosDescartados)
	if err != nil {
		return nil, err
	}
	var out []Discard
	for _, r := range s.Rows(t.Name) {
		v, err := byName(t, r)
		if err != nil {
			return nil, err
		}
		out = append(out, Discard{
			ID: r.ID, PedidoID: v["pedido_id"].Str, Aggregation: v["aggregation"].Str, Reason: v["reason"].Str,
			EventTime: v["event_time"].Time, WindowStart: v["window_start"].Time, Watermark: v["watermark"].Time,
			ReceivedAt: v["received_at"].Time, MessageID: v["message_id"].Str, Raw: v["raw"].Str,
		})
	}
	return out, nil
}

// Drops returns the too-late rows of aggregation agg as the model records
// drops, in append order.
func (s *Sink) Drops(agg string) (out []windowtest.Drop, err error) {
	ds, err := s.Discards()
	for _, d := range ds {
		if d.Reason == "too_late" && d.Aggregation == agg {
			out = append(out, windowtest.Drop{PedidoID: d.PedidoID, WindowStart: d.WindowStart, Watermark: d.Watermark, ReceivedAt: d.ReceivedAt})
		}
	}
	return out, err
}

// SKUMissing returns the sku_missing rows as "<aggregation>|<pedido_id>|<line>",
// sorted; the line index is the "line" of the raw column.
func (s *Sink) SKUMissing() ([]string, error) {
	ds, err := s.Discards()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ds {
		if d.Reason != stream.ReasonSKUMissing {
			continue
		}
		var raw struct {
			Line *int `json:"line"`
		}
		if err := json.Unmarshal([]byte(d.Raw), &raw); err != nil || raw.Line == nil {
			return nil, fmt.Errorf("sku_missing row %s: raw %q names no line (%v)", d.ID, d.Raw, err)
		}
		out = append(out, fmt.Sprintf("%s|%s|%d", d.Aggregation, d.PedidoID, *raw.Line))
	}
	slices.Sort(out)
	return out, nil
}

// InvalidMessages returns the message IDs of the invalid-message rows.
func (s *Sink) InvalidMessages() (out []string, err error) {
	ds, err := s.Discards()
	for _, d := range ds {
		if strings.HasPrefix(d.Reason, "invalid: ") {
			out = append(out, d.MessageID)
		}
	}
	return out, err
}

func byName(t warehouse.Table, r warehouse.Row) (map[string]warehouse.Value, error) {
	if len(r.Values) != len(t.Schema) {
		return nil, fmt.Errorf("%s row %s: %d values for %d columns", t.Name, r.ID, len(r.Values), len(t.Schema))
	}
	v := make(map[string]warehouse.Value, len(t.Schema))
	for i, f := range t.Schema {
		if r.Values[i].Null && f.Required() {
			return nil, fmt.Errorf("%s row %s: NULL in required column %s", t.Name, r.ID, f.Name)
		}
		v[f.Name] = r.Values[i]
	}
	return v, nil
}
