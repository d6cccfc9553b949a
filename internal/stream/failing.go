package stream

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// A window whose state cannot be read or added up (a document that does
// not decode, another layout, a sum out of range) fails for good: retrying
// the same bytes gives the same error. The tick reports it (a "window
// failing" log line with failing_cell), processes every other window and
// answers 2xx, so the scheduler does not retry what cannot succeed; a
// failure of the store itself is still an error of the tick. The watermark
// is not held back (that would stop every window's panes); instead the
// window stays on the agenda with its error, its new elements are parked,
// and it is never expired while it fails. The first tick that reads it
// again adds the parked elements first and emits the ON_TIME pane it owes
// (its watermark column shows how late), then expires it as usual.

// maxCellError bounds the error text kept in the fold's agenda and reported.
const maxCellError = 1024

// MaxReportedFailing bounds the failing windows a tick answers and logs,
// so that state broken everywhere (a binary of another layout) does not
// make every answer and tick log as large as the state.
const MaxReportedFailing = 100

// FailingWindow is a window a tick could not process, or a document Status
// could not read, and why. Its log field and metric keep the older word
// "cell" (failing_cell, alpipe/tick_failing_cells): Terraform filters on
// them.
type FailingWindow struct {
	Aggregation string
	// Path is the document that failed: the window's state document 0 for
	// a window the fold could not read (any of its parts may be the bad
	// one), else the document itself (a state part, the fold or control
	// document).
	Path string
	// WindowStart and WindowEnd name the window, when the path tells.
	WindowStart time.Time
	WindowEnd   time.Time
	// Key is empty: window state is per window, not per (window, key).
	Key   string
	Error string
	// Since is the first tick the window failed at, when the fold's agenda
	// records it (not for a document only Status could not read).
	Since time.Time
}

func (f FailingWindow) String() string {
	if f.WindowStart.IsZero() {
		return fmt.Sprintf("%s: %s", f.Path, f.Error)
	}
	if f.Key == "" {
		return fmt.Sprintf("window %s (%s): %s", f.WindowStart.UTC().Format(time.RFC3339), f.Path, f.Error)
	}
	return fmt.Sprintf("window %s key %q (%s): %s", f.WindowStart.UTC().Format(time.RFC3339), f.Key, f.Path, f.Error)
}

// failingDoc reports a document that does not decode, naming its window
// when its path does (a state part, a parked document).
func failingDoc(a aggregation, path string, err error) FailingWindow {
	f := FailingWindow{Aggregation: a.spec.Name, Path: path, Error: clip(err.Error(), maxCellError)}
	if w, ok := docWindow(a.spec, path); ok {
		f.WindowStart, f.WindowEnd = w.Start, w.End
	}
	return f
}

// docWindow reads the window of a document from its path:
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
	return window.Window{Start: start.UTC(), End: start.UTC().Add(s.Size())}, true
}

func sortFailing(fs []FailingWindow) {
	slices.SortFunc(fs, func(x, y FailingWindow) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Key, y.Key), cmp.Compare(x.Path, y.Path))
	})
}

// dedupFailing keeps one report per window and key (per path for a
// document that names none): the one that says since when it fails (the
// fold's agenda) over a bare decode error of
// the same window, which may be another of its parts. Sorted.
func dedupFailing(fs []FailingWindow) []FailingWindow {
	type id struct {
		start time.Time
		key   string
		path  string
	}
	best := map[id]FailingWindow{}
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
