package stream

import (
	"cmp"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// A window whose state cannot be read or added up fails for good: retrying
// the same bytes gives the same error. So the tick reports it and answers
// 2xx rather than hold W back for every window (docs/stream.md, "Failing
// windows"); a failure of the store itself is still an error of the tick.

const maxCellError = 1024 // bytes of error text kept in the agenda and reported

// MaxReportedFailing bounds the failing windows a tick answers and logs,
// so that state broken everywhere does not make them as large as the state.
const MaxReportedFailing = 100

// FailingWindow is a window a tick could not process, or a document Status
// could not read, and why. The log field and metric say "cell"
// (failing_cell, alpipe/tick_failing_cells): Terraform filters on them.
type FailingWindow struct {
	Aggregation string
	// Path is the document that failed: state document 0 for a window the
	// fold could not read (any of its parts may be the bad one).
	Path        string
	WindowStart time.Time // WindowStart and WindowEnd: when the path tells
	WindowEnd   time.Time
	Error       string
	Since       time.Time // the first tick it failed at, when the agenda records it
}

// failingWindow reports a window whose state the fold could not read.
func (a aggregation) failingWindow(e windowEntry) FailingWindow {
	w := e.window()
	return FailingWindow{Aggregation: a.spec.Name, Path: a.paths.statePart(e.Start, 0),
		WindowStart: w.Start, WindowEnd: w.End, Error: e.Error, Since: e.FailingSince}
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

// docWindow reads the window of state/<start>_<part> and
// parked/<start>_<generation>.
func docWindow(s window.Spec, p string) (window.Window, bool) {
	dir, id := path.Split(p)
	if !strings.HasSuffix(dir, "/state/") && !strings.HasSuffix(dir, "/parked/") {
		return window.Window{}, false
	}
	stamp, n, ok := strings.Cut(id, "_")
	if _, err := strconv.ParseUint(n, 10, 63); !ok || err != nil {
		return window.Window{}, false
	}
	start, err := time.Parse(windowIDLayout, stamp)
	if err != nil {
		return window.Window{}, false
	}
	return window.Window{Start: start.UTC(), End: start.UTC().Add(s.Size())}, true
}

func sortFailing(fs []FailingWindow) {
	slices.SortFunc(fs, func(x, y FailingWindow) int {
		return cmp.Or(x.WindowStart.Compare(y.WindowStart), cmp.Compare(x.Path, y.Path))
	})
}

// dedupFailing keeps one report per window (per path for a document that
// names none): the agenda's, which says since when, over a bare decode
// error of another of its parts. Sorted.
func dedupFailing(fs []FailingWindow) []FailingWindow {
	type id struct {
		start time.Time
		path  string
	}
	best := map[id]FailingWindow{}
	for _, f := range fs {
		k := id{start: f.WindowStart.UTC()}
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
