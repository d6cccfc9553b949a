package stream

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// DedupRetention is how long a dedup record outlives the moment its window
// can first expire: Pub/Sub's default message retention, the longest a
// redelivery can come after the first delivery.
const DedupRetention = 7 * 24 * time.Hour

// MaxBatchOrders bounds WithBatching's batch size.
const MaxBatchOrders = 1000

// TickLease is how long a tick owns an aggregation. A tick releases it when
// it ends; a tick that dies holding it delays the next ones by at most this
// much processing time. A tick outliving its lease is still correct, only
// duplicated work.
const TickLease = 2 * time.Minute

// Paths of the documents of one aggregation (see the package comment).
type paths struct {
	watermark string
	lease     string
	windows   string // collection of cells
	deltas    string // collection of changes not yet folded into their cell
	agenda    string // collection: the tick's index of open cells, one document per window
	orders    string // collection of the previous layout's dedup records (read during the upgrade only)
	outbox    string // collection
	state     string // collection: layout 3's window state, partDoc per window and part
	parked    string // collection: elements of windows whose state could not be read
}

func pathsOf(agg string) paths {
	root := "aggregations/" + agg
	return paths{
		watermark: root + "/control/watermark",
		lease:     root + "/control/lease",
		windows:   root + "/windows",
		deltas:    root + "/deltas",
		agenda:    root + "/agenda",
		orders:    root + "/orders",
		outbox:    root + "/outbox",
		state:     root + "/state",
		parked:    root + "/parked",
	}
}

const (
	deadSeen   = "stream/deadletters/seen"
	deadOutbox = "stream/deadletters/outbox"
)

func (p paths) cell(wk window.WindowKey) string {
	return p.windows + "/" + cellID(wk)
}

// delta is the path of change document n of a cell. The cell ID ends in the
// escaped key and n is digits only, so the last '_' splits them back.
func (p paths) delta(wk window.WindowKey, n int) string {
	return p.deltas + "/" + cellID(wk) + "_" + strconv.Itoa(n)
}

func (p paths) agendaOf(w window.Window) string {
	return p.agenda + "/" + w.Start.UTC().Format("20060102T150405Z")
}

func cellID(wk window.WindowKey) string {
	return wk.Window.Start.UTC().Format("20060102T150405Z") + "_" + docstore.ID(wk.Key)
}

// cellDoc is one (window, key) as the tick last folded it: its panes'
// bookkeeping and every change folded in so far.
type cellDoc struct {
	Layout      int       `json:"layout"` // StateLayout; absent (0) in documents written before it
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	Key         string    `json:"key"`
	// Shards bounds the delta numbers in use: a transaction that must see
	// every change of the cell reads deltas 0..Shards-1.
	Shards int              `json:"shards"`
	State  window.PaneState `json:"state"`
	// Folded is the sum of the changes folded in, as one shard whose
	// pending mark is valid against State (window.Combine's rule).
	Folded window.Shard `json:"folded"`
	// Exact: an order passed the exact headroom check here (cell.go), so
	// every order of the cell sums the cell exactly before it is accepted.
	Exact bool `json:"exact,omitempty"`
}

// deltaDoc is a change of a cell not yet folded into it: the partial sums of
// the orders some batches accepted, and what the tick needs to find its
// cell and advance the watermark. A delta that exists is never covered by
// a pane: whatever emits a pane folds the deltas it read and deletes them.
type deltaDoc struct {
	Layout      int          `json:"layout"` // StateLayout; absent (0) in documents written before it
	WindowStart time.Time    `json:"window_start"`
	WindowEnd   time.Time    `json:"window_end"`
	Key         string       `json:"key"`
	N           int          `json:"n"`
	Part        window.Shard `json:"part"`
}

func (d deltaDoc) windowKey() window.WindowKey {
	return window.WindowKey{Window: window.Window{Start: d.WindowStart.UTC(), End: d.WindowEnd.UTC()}, Key: d.Key}
}

// agendaDoc is the tick's index of the open cells of one window, written by
// ticks only: which cells exist and when each next needs the tick without
// a new order (its EARLY or LATE delay).
type agendaDoc struct {
	Layout      int       `json:"layout"` // StateLayout; absent (0) in documents written before it
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// OnTimeDone: every cell listed was ticked at W >= end, so none still
	// owes its ON_TIME pane.
	OnTimeDone bool                  `json:"on_time_done,omitempty"`
	Cells      map[string]agendaCell `json:"cells"` // by cell ID
}

type agendaCell struct {
	Key string    `json:"key"`
	Due time.Time `json:"due,omitzero"` // zero: nothing waits on processing time
	// Seen is the fingerprint of the deltas the last visit read and left
	// unfolded because they emitted nothing yet (their EARLY or LATE delay
	// runs): listing them again unchanged is no reason to visit the cell.
	Seen string `json:"seen,omitempty"`
	// Error is why the cell's last visit failed for good (state this binary
	// cannot read or add up), since FailingSince; empty once a visit
	// succeeds. The cell stays on the agenda and every tick retries it.
	Error        string    `json:"error,omitempty"`
	FailingSince time.Time `json:"failing_since,omitzero"`
}

func (a agendaDoc) window() window.Window {
	return window.Window{Start: a.WindowStart.UTC(), End: a.WindowEnd.UTC()}
}

// leaseDoc is the tick lease of an aggregation.
type leaseDoc struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

// seenDoc records that an invalid message was dead-lettered.
type seenDoc struct {
	Reason     string    `json:"reason"`
	ReceivedAt time.Time `json:"received_at"`
}

func encodeDoc(path string, v any, expireAt time.Time) (docstore.Doc, error) {
	switch d := v.(type) {
	case window.WatermarkState:
		v = watermarkDoc{WatermarkState: d}.stamped()
	case versioned:
		v = d.stamped()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return docstore.Doc{}, fmt.Errorf("encode %s: %w", path, err)
	}
	return docstore.Doc{Path: path, Data: b, ExpireAt: expireAt}, nil
}

// decodeDoc fills v from d; a missing document leaves v as it is. A
// document that does not decode, or window state of another layout, is an
// ErrUnreadableState: retrying does not help.
func decodeDoc(d docstore.Doc, v any) error {
	if !d.Exists {
		return nil
	}
	if ws, ok := v.(*window.WatermarkState); ok {
		w := watermarkDoc{WatermarkState: *ws}
		if err := decodeDoc(d, &w); err != nil {
			return err
		}
		*ws = w.WatermarkState
		return nil
	}
	if err := json.Unmarshal(d.Data, v); err != nil {
		return unreadable(fmt.Errorf("decode %s: %w", d.Path, err))
	}
	if s, ok := v.(versioned); ok {
		return checkLayout(d.Path, s.layoutOf())
	}
	return nil
}

func set(tx docstore.Tx, path string, v any, expireAt time.Time) error {
	d, err := encodeDoc(path, v, expireAt)
	if err != nil {
		return err
	}
	if err := tx.Set(d); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
