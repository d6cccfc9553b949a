package stream

import (
	"errors"
	"fmt"

	"github.com/alpinashop/alpipe/internal/window"
)

// StateLayout is the layout of the stream's state (the control document,
// fold documents, window state, parked elements) that this binary reads
// and writes. Change it with
// any change to those documents that an older binary would mis-read, so
// that a binary meeting state of another layout refuses it instead (a
// rollback after a deploy, two revisions serving at once).
//
// Layout 1 is the first to carry the number. Documents written before carry
// no "layout" field and are layout 1: the fields have not changed since, so
// existing deployments keep working without a migration.
//
// Layout 2 moved the dedup records from one per order and aggregation
// (aggregations/<agg>/orders/...) to one per order (stream/dedup/orders/...).
// The window state itself is unchanged, so this binary reads layout 1 as
// well (MinStateLayout); what layout 2 is for is the other direction: the
// previous binary refuses the watermark document re-stamped with layout 2
// (its fence), so it cannot count an order whose dedup record it would not
// see.
//
// Layout 3 replaced the per-(window, key) cells, deltas and agendas by one
// document per order (its dedup record, carrying its elements, tagged
// with a generation), window state documents written by the tick's fold,
// and stream/control. Layouts 1 and 2 are read only to migrate them
// (migrate.go); the first process re-stamps the old watermark documents
// with 3 so that the binaries before refuse to count (ensureControl).
const StateLayout = 3

// MinStateLayout is the oldest layout this binary reads.
const MinStateLayout = 1

// ErrUnreadableState marks window state that retrying cannot read: a
// document that does not decode, of another layout, or whose sums do not
// add up (a measure out of range). The tick reports the (window, key) and
// goes on with the others; an order transaction that meets it fails, so
// that Pub/Sub delivers the order again rather than mis-count it.
var ErrUnreadableState = errors.New("unreadable window state")

// LayoutError is state of a layout this binary does not read.
type LayoutError struct {
	Path  string
	Found int
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("%s: state layout %d found, this binary reads layouts %d to %d", e.Path, e.Found, MinStateLayout, StateLayout)
}

// Is makes a LayoutError an ErrUnreadableState.
func (e *LayoutError) Is(target error) bool { return target == ErrUnreadableState }

// unreadableError marks err (a decode or combine failure) permanent.
type unreadableError struct{ err error }

func (u unreadableError) Error() string        { return u.err.Error() }
func (u unreadableError) Unwrap() error        { return u.err }
func (u unreadableError) Is(target error) bool { return target == ErrUnreadableState }

// unreadable marks err as state no retry can read; nil stays nil.
func unreadable(err error) error {
	if err == nil || errors.Is(err, ErrUnreadableState) {
		return err
	}
	return unreadableError{err}
}

// versioned is a window-state document: it carries the layout it was
// written in.
type versioned interface {
	layoutOf() int
	// stamped is a copy marked with StateLayout, for writing.
	stamped() any
}

// checkLayout refuses a layout outside MinStateLayout..StateLayout; 0 (no
// field) is the layout 1 of the documents written before the field existed.
func checkLayout(path string, found int) error {
	if found == 0 {
		found = 1
	}
	if found < MinStateLayout || found > StateLayout {
		return &LayoutError{Path: path, Found: found}
	}
	return nil
}

// watermarkDoc is the watermark document: window.WatermarkState, whose
// fields it inlines, and the layout.
type watermarkDoc struct {
	Layout int `json:"layout"`
	window.WatermarkState
}

func (d cellDoc) layoutOf() int      { return d.Layout }
func (d deltaDoc) layoutOf() int     { return d.Layout }
func (d agendaDoc) layoutOf() int    { return d.Layout }
func (d watermarkDoc) layoutOf() int { return d.Layout }

func (d cellDoc) stamped() any      { d.Layout = StateLayout; return d }
func (d deltaDoc) stamped() any     { d.Layout = StateLayout; return d }
func (d agendaDoc) stamped() any    { d.Layout = StateLayout; return d }
func (d watermarkDoc) stamped() any { d.Layout = StateLayout; return d }

var (
	_ versioned = controlDoc{}
	_ versioned = foldDoc{}
	_ versioned = partDoc{}
	_ versioned = parkedDoc{}
	_ versioned = cellDoc{}
	_ versioned = deltaDoc{}
	_ versioned = agendaDoc{}
	_ versioned = watermarkDoc{}
)
