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

const (
	controlPath = "stream/control"
	// splitBytes: well under Firestore's 1 MiB, so that one fold of many
	// new keys cannot take a part past it.
	splitBytes = 256 << 10
	// outboxRowsPerDoc: a SKU window's ON_TIME round can have thousands.
	outboxRowsPerDoc = 400
)

// controlDoc is the one document every order transaction reads; only ticks
// write it (see the package comment).
type controlDoc struct {
	Layout int                   `json:"layout"`
	Gen    int64                 `json:"gen"` // the open generation: records written now carry it
	Aggs   map[string]aggControl `json:"aggs"`
}

type aggControl struct {
	window.WatermarkState
	Advanced int64 `json:"advanced"`
	Since    int64 `json:"since"`
}

func (d controlDoc) layoutOf() int { return d.Layout }
func (d controlDoc) stamped() any  { d.Layout = StateLayout; return d }

// foldDoc is an aggregation's fold state, written by its fold only.
type foldDoc struct {
	Layout int   `json:"layout"`
	Folded int64 `json:"folded"`
	// Unseen: the newest event and acceptance times of elements folded
	// that no advance observed (those of the generation the advance itself
	// closed, and of catch-up folds); the next advance observes them.
	UnseenEvent    time.Time              `json:"unseen_event,omitzero"`
	UnseenAccepted time.Time              `json:"unseen_accepted,omitzero"`
	Windows        map[string]windowEntry `json:"windows,omitempty"`       // by windowID
	SessionParts   int                    `json:"session_parts,omitempty"` // never fewer than before
	Agenda         map[int]partEntry      `json:"agenda,omitempty"`        // session parts with open sessions or failing
}

func (d foldDoc) layoutOf() int { return d.Layout }
func (d foldDoc) stamped() any  { d.Layout = StateLayout; return d }

// windowEntry is one open window in the agenda; while its state cannot be
// read, since when and why (its elements then wait in parked documents).
type windowEntry struct {
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	Parts        int       `json:"parts"`
	Due          time.Time `json:"due,omitzero"` // next processing-time timer
	OnTimeDone   bool      `json:"on_time_done,omitempty"`
	FailingSince time.Time `json:"failing_since,omitzero"`
	Error        string    `json:"error,omitempty"`
	Parked       bool      `json:"parked,omitempty"`
}

func (e windowEntry) window() window.Window {
	return window.Window{Start: e.Start.UTC(), End: e.End.UTC()}
}

// partDoc is one state document of a window: the keys that hash to it.
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
// read.
type parkedDoc struct {
	Layout   int        `json:"layout"`
	Elements []foldElem `json:"elements"`
}

func (d parkedDoc) layoutOf() int { return d.Layout }
func (d parkedDoc) stamped() any  { d.Layout = StateLayout; return d }

// foldElem is a record's element with its order's identity and times.
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

// windowIDLayout names a window by its start in document IDs.
const windowIDLayout = "20060102T150405Z"

func windowID(start time.Time) string { return start.UTC().Format(windowIDLayout) }

func partOf(key string, parts int) int {
	if parts <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(parts))
}

func genTag(gen int64) string { return "g" + strconv.FormatInt(gen, 10) }

// windowState is a window's keys as a fold reads them.
type windowState struct {
	entry windowEntry
	keys  map[string]keyState
	read  []docstore.Doc // the part documents as read, to skip unchanged writes
}

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

// readWindows reads the state documents of the windows ws in one call. A
// window whose state cannot be read (ErrUnreadableState) keeps keys nil and
// gets its error in its entry, failing since now unless it was before; any
// other error ends the transaction.
func readWindows(tx docstore.Tx, a aggregation, ws map[string]*windowState, now time.Time) error {
	ids := slices.Sorted(maps.Keys(ws))
	var paths []string
	for _, id := range ids {
		paths = append(paths, partPaths(a, ws[id].entry)...)
	}
	docs, err := tx.Get(paths...)
	if err != nil {
		return err
	}
	for _, id := range ids {
		w := ws[id]
		w.entry.Parts = max(1, w.entry.Parts)
		w.read, docs = docs[:w.entry.Parts], docs[w.entry.Parts:]
		keys, err := readParts(w.read)
		switch {
		case errors.Is(err, ErrUnreadableState):
			w.entry.Error = clip(err.Error(), maxCellError)
			if w.entry.FailingSince.IsZero() {
				w.entry.FailingSince = now
			}
		case err != nil:
			return err
		default:
			w.keys = keys
		}
	}
	return nil
}

func encodeParts(a aggregation, e windowEntry, keys map[string]keyState) ([]docstore.Doc, int, error) {
	return splitParts(e.Parts, splitBytes, keys, func(i int, ks map[string]keyState) (docstore.Doc, error) {
		return encodeDoc(a.paths.statePart(e.Start, i), partDoc{Start: e.Start, End: e.End, Keys: ks}, time.Time{})
	})
}

// splitParts spreads keys over part documents by key hash (partOf),
// doubling parts while one would pass bound; a part of one key stays whole.
// doc encodes part i.
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

func partPaths(a aggregation, e windowEntry) []string {
	out := make([]string, max(1, e.Parts))
	for i := range out {
		out[i] = a.paths.statePart(e.Start, i)
	}
	return out
}

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
