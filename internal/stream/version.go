package stream

import (
	"errors"
	"fmt"
)

// StateLayout is the layout of the stream's state documents this binary
// reads and writes. Change it with any change to them that this binary would
// mis-read, so that a binary meeting state of another layout (a rollback
// after a deploy, two revisions serving at once) refuses it by name; a
// change of layout ships its own one-shot migration.
const StateLayout = 3

// ErrUnreadableState marks window state that retrying cannot read: a
// document that does not decode, of another layout, or whose sums do not
// add up. The tick reports the window and goes on with the others; an
// order transaction that meets it fails, so that Pub/Sub delivers the order
// again rather than mis-count it.
var ErrUnreadableState = errors.New("unreadable window state")

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

// versioned is a state document: it carries the layout it was written in.
type versioned interface {
	layoutOf() int
	stamped() any // a copy marked with StateLayout, for writing
}

// checkLayout refuses any layout but StateLayout (0: no field).
func checkLayout(path string, found int) error {
	if found != StateLayout {
		return unreadable(fmt.Errorf("%s: state layout %d found, this binary reads layout %d", path, found, StateLayout))
	}
	return nil
}

var (
	_ versioned = controlDoc{}
	_ versioned = foldDoc{}
	_ versioned = partDoc{}
	_ versioned = parkedDoc{}
	_ versioned = sessionsPart{}
)
