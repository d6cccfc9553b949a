package cost

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// StreamingMinRowBytes is the size BigQuery bills a streamed (insertAll) row
// at the least: rows are billed "using a 1 KB minimum size".
const StreamingMinRowBytes = 1024

// Appends counts what a stream.Sink received for one table: the rows of
// BigQuery insertAll calls.
type Appends struct {
	Calls int64 // Append calls (insertAll requests: one per 500 rows at most)
	Rows  int64 // rows sent, repeats included
	// Repeats are rows whose ID had been sent before (insertId dedup drops
	// them on BigQuery's side, but they are still sent).
	Repeats int64
	// LogicalBytes is the rows' size by BigQuery's data size rules (see
	// LogicalBytes); BilledBytes the same with each row counted as at least
	// StreamingMinRowBytes, which is what streaming inserts are billed on.
	LogicalBytes int64
	BilledBytes  int64
}

func (a Appends) sub(b Appends) Appends {
	return Appends{
		Calls:        a.Calls - b.Calls,
		Rows:         a.Rows - b.Rows,
		Repeats:      a.Repeats - b.Repeats,
		LogicalBytes: a.LogicalBytes - b.LogicalBytes,
		BilledBytes:  a.BilledBytes - b.BilledBytes,
	}
}

// CountingSink is a stream.Sink that accepts every row and counts it per
// table, by Phase like CountingStore.
type CountingSink struct {
	mu    sync.Mutex
	phase Phase
	seen  map[string]bool
	by    map[Phase]map[string]*Appends
	// viewCols are the dashboard view's columns of each panes table; views
	// sums their logical size in the pane rows, for the bytes a dashboard
	// query scans.
	viewCols map[string][]string
	views    map[string]PaneView
}

var _ stream.Sink = (*CountingSink)(nil)

// NewCountingSink returns an empty sink for the panes tables of specs.
func NewCountingSink(specs []window.Spec) *CountingSink {
	s := &CountingSink{phase: PhaseOrder, seen: map[string]bool{}, by: map[Phase]map[string]*Appends{},
		viewCols: map[string][]string{}, views: map[string]PaneView{}}
	for _, sp := range specs {
		s.viewCols[aggregation.PanesTable(sp.Name)] = viewColumns(sp.KeyField)
	}
	return s
}

// viewColumns are the columns an aggregation's view selects: those of
// ventas_hora_pais with its key column instead of pais.
func viewColumns(key string) []string {
	out := slices.Clone(warehouse.ViewColumns)
	for i, c := range out {
		if c == "pais" {
			out[i] = key
		}
	}
	return out
}

// SetPhase charges the following appends to p.
func (s *CountingSink) SetPhase(p Phase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = p
}

// Append implements stream.Sink.
func (s *CountingSink) Append(_ context.Context, table string, rows []warehouse.Row) error {
	t, err := warehouse.Lookup(table)
	if err != nil {
		return fmt.Errorf("counting sink: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.by[s.phase]
	if !ok {
		m = map[string]*Appends{}
		s.by[s.phase] = m
	}
	a, ok := m[table]
	if !ok {
		a = &Appends{}
		m[table] = a
	}
	a.Calls += int64((len(rows) + 499) / 500)
	for _, r := range rows {
		if len(r.Values) != len(t.Schema) {
			return fmt.Errorf("counting sink: row %s has %d values, table %s has %d columns", r.ID, len(r.Values), table, len(t.Schema))
		}
		a.Rows++
		if s.seen[table+"\x00"+r.ID] {
			a.Repeats++
		}
		s.seen[table+"\x00"+r.ID] = true
		n := LogicalBytes(t, r.Values)
		a.LogicalBytes += n
		a.BilledBytes += max(n, StreamingMinRowBytes)
		if cols, ok := s.viewCols[table]; ok {
			v := s.views[table]
			v.Panes++
			v.Bytes += logicalBytesOf(t, r.Values, cols)
			s.views[table] = v
		}
	}
	return nil
}

// Appends returns what phase p appended to table.
func (s *CountingSink) Appends(p Phase, table string) Appends {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.by[p][table]; ok {
		return *a
	}
	return Appends{}
}

// PaneViews returns, per panes table, the logical size of its view's
// columns in the pane rows appended so far and their number.
func (s *CountingSink) PaneViews() map[string]PaneView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.views)
}

// LogicalBytes is a row's size by BigQuery's data size calculation: STRING
// 2 bytes + its UTF-8 length, INT64, DATE and TIMESTAMP 8 bytes, NUMERIC 16
// bytes; a NULL counts 0.
func LogicalBytes(t warehouse.Table, vals []warehouse.Value) int64 {
	var n int64
	for i, f := range t.Schema {
		if i < len(vals) {
			n += cellBytes(f.Type, vals[i])
		}
	}
	return n
}

func logicalBytesOf(t warehouse.Table, vals []warehouse.Value, cols []string) int64 {
	var n int64
	for _, c := range cols {
		if i := t.Column(c); i >= 0 && i < len(vals) {
			n += cellBytes(t.Schema[i].Type, vals[i])
		}
	}
	return n
}

func cellBytes(typ warehouse.Type, v warehouse.Value) int64 {
	if v.Null {
		return 0
	}
	switch typ {
	case warehouse.String:
		return 2 + int64(len(v.Str))
	case warehouse.Numeric:
		return 16
	}
	return 8 // INT64, DATE, TIMESTAMP
}
