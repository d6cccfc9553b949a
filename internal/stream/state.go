package stream

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// The documents of the stream (see the package comment).
const (
	controlPath = "stream/control" // controlDoc: every order transaction reads it
	// splitBytes is the size past which a window's state document is split
	// in two by key hash: well under Firestore's 1 MiB, so that one fold
	// of many new keys cannot take a part past it.
	splitBytes = 256 << 10
	// outboxRowsPerDoc bounds the panes of one outbox document (a SKU
	// window's ON_TIME round can have thousands).
	outboxRowsPerDoc = 400
)

// controlDoc is the one document every order transaction reads: the open
// generation its dedup record is tagged with, and every aggregation's
// watermark. Ticks write it: once to close a generation, once per
// aggregation to advance its watermark (which closes one more).
type controlDoc struct {
	Layout int   `json:"layout"`
	Gen    int64 `json:"gen"` // the open generation: records written now carry it
	// Aggs: per aggregation its watermark state, the generation its last
	// advance closed (Advanced) and the first generation whose records may
	// hold its elements (Since).
	Aggs map[string]aggControl `json:"aggs"`
}

type aggControl struct {
	window.WatermarkState
	Advanced int64 `json:"advanced"`
	Since    int64 `json:"since"`
}

func (d controlDoc) layoutOf() int { return d.Layout }
func (d controlDoc) stamped() any  { d.Layout = StateLayout; return d }

// foldDoc is an aggregation's fold state, written by its fold transaction
// only: the last generation folded in, and the agenda of its open windows.
type foldDoc struct {
	Layout int   `json:"layout"`
	Folded int64 `json:"folded"`
	// Unseen: the newest event and acceptance times of elements folded
	// that no advance observed (those of the generation the advance itself
	// closed, and of catch-up folds); the next advance observes them.
	UnseenEvent    time.Time              `json:"unseen_event,omitzero"`
	UnseenAccepted time.Time              `json:"unseen_accepted,omitzero"`
	Windows        map[string]windowEntry `json:"windows,omitempty"` // by windowID
	// SessionParts is how many part documents a session aggregation's
	// keys are split into (never fewer than before), and Agenda its parts
	// with open sessions or failing, by part number.
	SessionParts int               `json:"session_parts,omitempty"`
	Agenda       map[int]partEntry `json:"agenda,omitempty"`
}

func (d foldDoc) layoutOf() int { return d.Layout }
func (d foldDoc) stamped() any  { d.Layout = StateLayout; return d }

// windowEntry is one open window in the agenda: its extent, how many state
// documents it is split into, its next processing-time timer, whether its
// ON_TIME round is done, and, while its state cannot be read, since when
// and why (its elements then wait in parked documents).
type windowEntry struct {
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	Parts        int       `json:"parts"`
	Due          time.Time `json:"due,omitzero"`
	OnTimeDone   bool      `json:"on_time_done,omitempty"`
	FailingSince time.Time `json:"failing_since,omitzero"`
	Error        string    `json:"error,omitempty"`
	Parked       bool      `json:"parked,omitempty"`
}

func (e windowEntry) window() window.Window {
	return window.Window{Start: e.Start.UTC(), End: e.End.UTC()}
}

// partDoc is one state document of a window: the keys that hash to it,
// each with its pane state and the sum of every element folded in.
type partDoc struct {
	Layout int                 `json:"layout"`
	Start  time.Time           `json:"start"`
	End    time.Time           `json:"end"`
	Keys   map[string]keyState `json:"keys"`
}

func (d partDoc) layoutOf() int { return d.Layout }
func (d partDoc) stamped() any  { d.Layout = StateLayout; return d }

type keyState struct {
	State window.PaneState `json:"st"`
	Sum   window.Partial   `json:"sum"`
}

// parkedDoc holds elements folded while their window's state could not be
// read, tagged with the window's ID so that the repairing fold finds them.
type parkedDoc struct {
	Layout   int        `json:"layout"`
	Elements []foldElem `json:"elements"`
}

func (d parkedDoc) layoutOf() int { return d.Layout }
func (d parkedDoc) stamped() any  { d.Layout = StateLayout; return d }

// foldElem is one element ready to fold: the record's element with its
// order's identity and times.
type foldElem struct {
	Window   window.Window   `json:"window"`
	Key      string          `json:"key"`
	M        window.Measures `json:"m"`
	Wm       time.Time       `json:"wm,omitzero"`
	PedidoID string          `json:"pedido_id"`
	Event    time.Time       `json:"event"`
	At       time.Time       `json:"at"`
	Message  string          `json:"message_id,omitempty"`
	Gen      int64           `json:"gen,omitempty"` // its record's generation
}

func (e foldElem) order() window.Order {
	return window.Order{ID: e.PedidoID, Key: e.Key, EventTime: e.Event, Measures: e.M, Window: e.Window}
}

func (p paths) statePart(start time.Time, part int) string {
	return p.state + "/" + windowID(start) + "_" + strconv.Itoa(part)
}

func (p paths) parkedOf(start time.Time, gen int64) string {
	return p.parked + "/" + windowID(start) + "_" + strconv.FormatInt(gen, 10)
}

func windowID(start time.Time) string { return start.UTC().Format("20060102T150405Z") }

// partOf is the state document of key among parts.
func partOf(key string, parts int) int {
	if parts <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(parts))
}

// genTag is the dedup record's docstore tag: its generation.
func genTag(gen int64) string { return "g" + strconv.FormatInt(gen, 10) }

// windowState is a window's keys as a fold reads them.
type windowState struct {
	entry windowEntry
	keys  map[string]keyState
	read  []docstore.Doc // the part documents as read, to skip unchanged writes
}

// readParts decodes a window's part documents into one key map.
func readParts(docs []docstore.Doc) (map[string]keyState, error) {
	keys := map[string]keyState{}
	for _, d := range docs {
		var pd partDoc
		if err := decodeDoc(d, &pd); err != nil {
			return nil, err
		}
		maps.Copy(keys, pd.Keys)
	}
	return keys, nil
}

// readWindows reads the state documents of the windows ws, as many parts
// as each entry says (the fold that splits a window records its parts in
// the same transaction), in one call, and fills read and keys. A window
// whose state cannot be read (ErrUnreadableState) gets keys nil and its
// error in the map; any other error ends the transaction.
func readWindows(tx docstore.Tx, a aggregation, ws []*windowState) (map[*windowState]error, error) {
	var paths []string
	for _, w := range ws {
		paths = append(paths, partPaths(a, w.entry)...)
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return nil, err
	}
	bad := map[*windowState]error{}
	for _, w := range ws {
		w.entry.Parts = max(1, w.entry.Parts)
		w.read, docs = docs[:w.entry.Parts], docs[w.entry.Parts:]
		keys, err := readParts(w.read)
		if err != nil {
			if !errors.Is(err, ErrUnreadableState) {
				return nil, err
			}
			bad[w] = err
			continue
		}
		w.keys = keys
	}
	return bad, nil
}

// inOrder returns the windows of ws by window ID, for reading them in one
// call (readWindows) and writing them in a stable order.
func inOrder(ws map[string]*windowState) []*windowState {
	out := make([]*windowState, 0, len(ws))
	for _, id := range slices.Sorted(maps.Keys(ws)) {
		out = append(out, ws[id])
	}
	return out
}

// encodeParts splits a window's keys over parts documents (splitParts).
func encodeParts(a aggregation, e windowEntry, keys map[string]keyState) ([]docstore.Doc, int, error) {
	return splitParts(e.Parts, splitBytes, keys, func(i int, ks map[string]keyState) (docstore.Doc, error) {
		return encodeDoc(a.paths.statePart(e.Start, i), partDoc{Start: e.Start, End: e.End, Keys: ks}, time.Time{})
	})
}

// splitParts spreads keys over part documents by key hash (partOf),
// doubling parts while one would pass bound; a part of one key stays whole.
// doc encodes part i. A window's state and a session aggregation's keys are
// split this way.
func splitParts[V any](parts, bound int, keys map[string]V, doc func(i int, keys map[string]V) (docstore.Doc, error)) ([]docstore.Doc, int, error) {
	parts = max(1, parts)
	for {
		byPart := make([]map[string]V, parts)
		for i := range byPart {
			byPart[i] = map[string]V{}
		}
		for k, v := range keys {
			byPart[partOf(k, parts)][k] = v
		}
		docs := make([]docstore.Doc, parts)
		split := false
		for i, ks := range byPart {
			d, err := doc(i, ks)
			if err != nil {
				return nil, 0, err
			}
			if len(d.Data) > bound && len(ks) > 1 {
				split = true
			}
			docs[i] = d
		}
		if !split {
			return docs, parts, nil
		}
		parts *= 2
	}
}

// partPaths are the state documents of a window of entry e.
func partPaths(a aggregation, e windowEntry) []string {
	out := make([]string, max(1, e.Parts))
	for i := range out {
		out[i] = a.paths.statePart(e.Start, i)
	}
	return out
}

// recordElements turns the elements of a record for one aggregation into
// elements to fold.
func recordElements(s window.Spec, pedidoID string, rec dedupDoc) ([]foldElem, error) {
	r := rec.Aggregations[s.Name]
	var out []foldElem
	for _, k := range r.Keys {
		m := rec.M
		if k.M != nil {
			m = *k.M
		}
		for _, start := range r.Accepted {
			w := window.Window{Start: start.UTC(), End: start.UTC().Add(s.Size())}
			if !s.IsWindowOf(w, rec.EventTime) {
				return nil, fmt.Errorf("record of %s: window %s is not one of %s at %s", pedidoID, w.Start, s.Name, rec.EventTime)
			}
			out = append(out, foldElem{Window: w, Key: k.Key, M: m, Wm: r.Watermark, PedidoID: pedidoID,
				Event: rec.EventTime.UTC(), At: rec.ReceivedAt.UTC(), Message: rec.MessageID, Gen: rec.Gen})
		}
	}
	return out, nil
}
