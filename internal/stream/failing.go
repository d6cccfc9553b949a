package stream

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// A failing cell does not poison the tick.
//
// A (window, key) whose state cannot be read or added up (a document that
// does not decode, state of another layout, a sum out of range) fails for
// good: retrying the same bytes gives the same error. The tick reports it
// (AggregationTick.Failing, AggregationStatus.Failing, a "cell failing" log
// line with the field failing_cell), processes every other cell, and does
// not count it as an error of the tick, so the timer's answer is 2xx and
// the scheduler does not retry what cannot succeed. A failure of the store
// itself (unreachable, contention, a deadline) is still an error: the tick
// answers non-2xx and the scheduler retries.
//
// In event-time terms the watermark is not held back: it is one per
// aggregation, and holding it would stop the ON_TIME panes and expiry of
// every window, which is the poison this avoids. Instead the failing cell
// keeps everything it owes:
//   - It stays on its window's agenda with its error, and every tick visits
//     it again (its ON_TIME round, expiry or due timer stays unfinished).
//   - Its window's ON_TIME round is not complete while it fails, so the
//     first tick that can process it emits the ON_TIME pane it owes (Beam's
//     FIRE_ALWAYS), covering every order accepted before it, even if W has
//     passed the window's end or its expiry by then; that pane's watermark
//     column shows how late it came. Then, if W >= end + L, the window
//     expires as usual, in the same visit.
//   - Expiry never deletes a cell that failed: only a successful visit
//     deletes state, after writing the final pane, and cells and deltas
//     carry no TTL. Nothing is dropped silently: orders for the window that
//     arrive once W >= end + L are too late as for any window (counted and
//     recorded in pedidos_descartados).
//
// The other windows get their panes and expire on time.

// maxCellError bounds the error text kept in the agenda and reported.
const maxCellError = 1024

// MaxReportedFailing bounds the failing cells a tick answers and logs, so
// that state broken everywhere (a binary of another layout) does not make
// every answer and tick log as large as the state.
const MaxReportedFailing = 100

// FailingCell is a (window, key) a tick could not process, or a document of
// one it could not read, and why.
type FailingCell struct {
	Aggregation string
	// Path is the document that failed: the cell, or one of its deltas, or
	// its window's agenda document.
	Path string
	// WindowStart, WindowEnd and Key name the cell, when the path tells.
	WindowStart time.Time
	WindowEnd   time.Time
	Key         string
	Error       string
	// Since is the first tick the cell failed at, when the agenda records
	// it (not for a document the tick could not list).
	Since time.Time
}

func (f FailingCell) String() string {
	if f.WindowStart.IsZero() {
		return fmt.Sprintf("%s: %s", f.Path, f.Error)
	}
	return fmt.Sprintf("window %s key %q (%s): %s", f.WindowStart.UTC().Format(time.RFC3339), f.Key, f.Path, f.Error)
}

// failingOf reports the cell wk of aggregation a as failing with err.
func failingOf(a aggregation, wk window.WindowKey, err error, since time.Time) FailingCell {
	return FailingCell{Aggregation: a.spec.Name, Path: a.paths.cell(wk), WindowStart: wk.Window.Start.UTC(),
		WindowEnd: wk.Window.End.UTC(), Key: wk.Key, Error: clip(err.Error(), maxCellError), Since: since}
}

// failingDoc reports a document that does not decode, naming its window
// (and key) when its path does: a cell's, a delta's and an agenda
// document's do.
func failingDoc(a aggregation, path string, err error) FailingCell {
	f := FailingCell{Aggregation: a.spec.Name, Path: path, Error: clip(err.Error(), maxCellError)}
	if wk, ok := docCell(a.spec, path); ok {
		f.WindowStart, f.WindowEnd, f.Key = wk.Window.Start, wk.Window.End, wk.Key
	}
	return f
}

// docCell reads the cell a state document belongs to from its path (see
// the package comment): deltas/<start>_<key>_<n>, windows/<start>_<key>,
// agenda/<start> (no key), with <key> escaped by docstore.ID.
func docCell(s window.Spec, path string) (window.WindowKey, bool) {
	const stamp = "20060102T150405Z"
	dir, id := path[:max(strings.LastIndexByte(path, '/'), 0)], path[strings.LastIndexByte(path, '/')+1:]
	coll := dir[strings.LastIndexByte(dir, '/')+1:]
	if len(id) < len(stamp) {
		return window.WindowKey{}, false
	}
	start, err := time.Parse(stamp, id[:len(stamp)])
	if err != nil {
		return window.WindowKey{}, false
	}
	w := window.Window{Start: start.UTC(), End: start.UTC().Add(s.WindowSize)}
	rest := id[len(stamp):]
	switch coll {
	case "agenda":
		return window.WindowKey{Window: w}, rest == ""
	case "deltas":
		cut := strings.LastIndexByte(rest, '_')
		if cut < 1 {
			return window.WindowKey{}, false
		}
		if _, err := strconv.Atoi(rest[cut+1:]); err != nil {
			return window.WindowKey{}, false
		}
		rest = rest[:cut]
	case "windows":
	default:
		return window.WindowKey{}, false
	}
	if len(rest) < 2 || rest[0] != '_' {
		return window.WindowKey{}, false
	}
	key, err := url.PathUnescape(rest[1:])
	if err != nil {
		return window.WindowKey{}, false
	}
	if key == "\x00" {
		key = "" // docstore.ID's escape of the empty key
	}
	return window.WindowKey{Window: w, Key: key}, true
}

func sortFailing(fs []FailingCell) {
	slices.SortFunc(fs, func(x, y FailingCell) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Path, y.Path))
	})
}

// dedupFailing keeps one report per path, the one that names its cell and
// since when it fails (the agenda's) over a bare decode error, sorted.
func dedupFailing(fs []FailingCell) []FailingCell {
	best := map[string]FailingCell{}
	for _, f := range fs {
		if b, ok := best[f.Path]; !ok || (b.Since.IsZero() && !f.Since.IsZero()) {
			best[f.Path] = f
		}
	}
	out := slices.Collect(maps.Values(best))
	sortFailing(out)
	return out
}
