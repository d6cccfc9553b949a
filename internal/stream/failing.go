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

// A failing window does not poison the tick.
//
// A window whose state cannot be read or added up (a state document that
// does not decode, state of another layout, a sum out of range) fails for
// good: retrying the same bytes gives the same error. The tick reports it
// (AggregationTick.Failing, AggregationStatus.Failing, a "window failing"
// log line with the field failing_cell naming its state document), folds
// and triggers every other window, and does not count it as an error of
// the tick, so the timer's answer is 2xx and the scheduler does not retry
// what cannot succeed. A failure of the store itself (unreachable,
// contention, a deadline) is still an error: the tick answers non-2xx and
// the scheduler retries. So is a dedup record that does not decode: its
// generation cannot be folded without it, in any window.
//
// The report is a FailingCell: the type and its name predate layout 3,
// whose state is per window, not per (window, key). A window failing in
// the fold names its window, Key empty, and Path its state document 0
// (whichever of its parts failed); a document Status cannot read names
// itself, and its window when its path tells.
//
// In event-time terms the watermark is not held back: it is one per
// aggregation, and holding it would stop the ON_TIME panes and expiry of
// every window, which is the poison this avoids. Instead the failing
// window keeps everything it owes:
//   - It stays on the fold's agenda with its error and since when, and
//     every tick visits it again (its ON_TIME round, expiry or due timer
//     stays unfinished).
//   - Its elements folded meanwhile (and late ones, which the order
//     transaction leaves to the fold when it sees the window failing) are
//     parked in aggregations/<agg>/parked/<window>_<generation>, not lost;
//     the first fold that reads the window again adds them first.
//   - Its ON_TIME round is not complete while it fails, so the first tick
//     that can process it emits the ON_TIME pane it owes (Beam's
//     FIRE_ALWAYS), covering every order accepted before it, even if W has
//     passed the window's end or its expiry by then; that pane's watermark
//     column shows how late it came. Then, if W >= end + L, the window
//     expires as usual, in the same visit.
//   - Expiry never deletes a window that failed: only a successful visit
//     deletes state, after writing the final panes, and state documents
//     carry no TTL. Nothing is dropped silently: orders for the window that
//     arrive once W >= end + L are too late as for any window (counted and
//     recorded in pedidos_descartados).
//
// The other windows get their panes and expire on time.

// maxCellError bounds the error text kept in the fold's agenda and reported.
const maxCellError = 1024

// MaxReportedFailing bounds the failing windows a tick answers and logs,
// so that state broken everywhere (a binary of another layout) does not
// make every answer and tick log as large as the state.
const MaxReportedFailing = 100

// FailingCell is a window a tick could not process, or a document Status
// could not read, and why. In layout 3 a tick reports whole windows (Key
// empty); one with a key is a previous layout's cell, which only Status
// reports, while the cells await their migration (the first tick).
type FailingCell struct {
	Aggregation string
	// Path is the document that failed: the window's state document 0 for
	// a window the fold could not read (any of its parts may be the bad
	// one), else the document itself (a state part, the fold or control
	// document, a previous layout's cell, delta or agenda document).
	Path string
	// WindowStart and WindowEnd name the window, and Key the key of a
	// previous layout's cell, when the path tells.
	WindowStart time.Time
	WindowEnd   time.Time
	Key         string
	Error       string
	// Since is the first tick the window failed at, when the fold's agenda
	// records it (not for a document only Status could not read).
	Since time.Time
}

func (f FailingCell) String() string {
	if f.WindowStart.IsZero() {
		return fmt.Sprintf("%s: %s", f.Path, f.Error)
	}
	if f.Key == "" && !isCellPath(f.Path) {
		return fmt.Sprintf("window %s (%s): %s", f.WindowStart.UTC().Format(time.RFC3339), f.Path, f.Error)
	}
	return fmt.Sprintf("window %s key %q (%s): %s", f.WindowStart.UTC().Format(time.RFC3339), f.Key, f.Path, f.Error)
}

// failingOf reports the previous layout's cell wk of aggregation a as
// failing with err (its agenda recorded it).
func failingOf(a aggregation, wk window.WindowKey, err error, since time.Time) FailingCell {
	return FailingCell{Aggregation: a.spec.Name, Path: a.paths.cell(wk), WindowStart: wk.Window.Start.UTC(),
		WindowEnd: wk.Window.End.UTC(), Key: wk.Key, Error: clip(err.Error(), maxCellError), Since: since}
}

// failingDoc reports a document that does not decode, naming its window
// when its path does: a state part's and a parked document's (layout 3,
// no key), a cell's and a delta's (with their key) and an agenda
// document's.
func failingDoc(a aggregation, path string, err error) FailingCell {
	f := FailingCell{Aggregation: a.spec.Name, Path: path, Error: clip(err.Error(), maxCellError)}
	if wk, ok := docCell(a.spec, path); ok {
		f.WindowStart, f.WindowEnd, f.Key = wk.Window.Start, wk.Window.End, wk.Key
	} else if w, ok := docWindow(a.spec, path); ok {
		f.WindowStart, f.WindowEnd = w.Start, w.End
	}
	return f
}

// docWindow reads the window of a layout-3 document from its path:
// state/<start>_<part> and parked/<start>_<generation>. It names no key:
// a window's keys share its documents.
func docWindow(s window.Spec, path string) (window.Window, bool) {
	const stamp = "20060102T150405Z"
	dir, id := path[:max(strings.LastIndexByte(path, '/'), 0)], path[strings.LastIndexByte(path, '/')+1:]
	switch dir[strings.LastIndexByte(dir, '/')+1:] {
	case "state", "parked":
	default:
		return window.Window{}, false
	}
	if len(id) < len(stamp)+2 || id[len(stamp)] != '_' {
		return window.Window{}, false
	}
	if _, err := strconv.ParseUint(id[len(stamp)+1:], 10, 63); err != nil {
		return window.Window{}, false
	}
	start, err := time.Parse(stamp, id[:len(stamp)])
	if err != nil {
		return window.Window{}, false
	}
	return window.Window{Start: start.UTC(), End: start.UTC().Add(s.WindowSize)}, true
}

// isCellPath reports whether path is a previous layout's cell or delta,
// whose report names a key even when it is the empty key.
func isCellPath(path string) bool {
	dir := path[:max(strings.LastIndexByte(path, '/'), 0)]
	switch dir[strings.LastIndexByte(dir, '/')+1:] {
	case "windows", "deltas":
		return true
	}
	return false
}

// docCell reads the cell a previous layout's state document belongs to
// from its path: deltas/<start>_<key>_<n>, windows/<start>_<key>,
// agenda/<start> (no key), with <key> escaped by docstore.ID. Layout 3's
// documents name a window, not a cell: see docWindow.
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

// dedupFailing keeps one report per window and key (per path for a
// document that names none): the one that says since when it fails (the
// fold's agenda, or the previous layout's) over a bare decode error of
// the same window, which may be another of its parts. Sorted.
func dedupFailing(fs []FailingCell) []FailingCell {
	type id struct {
		start time.Time
		key   string
		path  string
	}
	best := map[id]FailingCell{}
	for _, f := range fs {
		k := id{start: f.WindowStart.UTC(), key: f.Key}
		if f.WindowStart.IsZero() {
			k.path = f.Path
		}
		if b, ok := best[k]; !ok || (b.Since.IsZero() && !f.Since.IsZero()) {
			best[k] = f
		}
	}
	out := slices.Collect(maps.Values(best))
	sortFailing(out)
	return out
}
