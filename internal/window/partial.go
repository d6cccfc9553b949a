package window

import (
	"fmt"
	"time"
)

// Order is one element: a valid order, or the part of one that counts in
// one cell (the lines of one SKU), in one window.
type Order struct {
	ID        string    // pedido_id: identity for dedup
	Key       string    // the value of Spec.KeyField
	EventTime time.Time // momento_evento
	Measures  Measures  // OrderMeasures of the order, or of its lines of Key
	Window    Window    // one of Spec.WindowsOf(EventTime); zero: Spec.WindowOf(EventTime)
}

// Partial is a partial sum of the orders of a (window, key) with the marks
// the trigger needs. Zero value: empty.
type Partial struct {
	Measures Measures `json:"measures"`
	// OnTime: an order was accepted here while W < end, so the window held
	// orders when the watermark reached its end and owes an ON_TIME pane.
	OnTime bool `json:"on_time,omitempty"`
	// Epoch is the PaneState.NextIndex that was current when PendingSince
	// was set. Once a pane with that index exists, the change is emitted.
	Epoch        int64     `json:"epoch"`
	PendingSince time.Time `json:"pending_since,omitzero"`
	MaxEventTime time.Time `json:"max_event_time,omitzero"`
	LastAccepted time.Time `json:"last_accepted,omitzero"`
}

// Accept adds order o to sh, its partial sum of the cell (o.Window, o.Key).
// st is that cell's PaneState as read in the same transaction (zero if none
// yet): reading it, a small document only ticks write, lets the partial sum
// know when its first un-emitted change arrived without the order writing
// any shared document. wm is the watermark o was classified against, now the
// processing time. Accept refuses a too-late order (dropping it is the
// caller's job) and a Window that is not one of WindowsOf(o.EventTime).
func (s Spec) Accept(sh Partial, st PaneState, o Order, wm, now time.Time) (Partial, error) {
	if s.Session() {
		return sh, fmt.Errorf("accept order %s: %s has session windows: use AcceptSession", o.ID, s.Name)
	}
	w := o.Window
	if w.Start.IsZero() && w.End.IsZero() {
		w = s.WindowOf(o.EventTime)
	}
	if !s.IsWindowOf(w, o.EventTime) {
		return sh, fmt.Errorf("accept order %s: window [%s, %s) is not a window of %s event time %s",
			o.ID, w.Start.Format(time.RFC3339Nano), w.End.Format(time.RFC3339Nano), s.Name, o.EventTime.Format(time.RFC3339Nano))
	}
	if s.Classify(w, wm) == TooLate {
		return sh, fmt.Errorf("accept order %s: window %s is too late at watermark %s",
			o.ID, w.Start.Format(time.RFC3339), wm.Format(time.RFC3339))
	}
	return sh.add(st, o, !reached(wm, w.End), now)
}

// add adds o to sh; onTime: o was accepted while W < end.
func (sh Partial) add(st PaneState, o Order, onTime bool, now time.Time) (Partial, error) {
	m, err := sh.Measures.Add(o.Measures)
	if err != nil {
		return sh, fmt.Errorf("accept order %s: %w", o.ID, err)
	}
	sh.Measures = m
	sh.OnTime = sh.OnTime || onTime
	now = now.UTC()
	if sh.PendingSince.IsZero() || sh.Epoch < st.NextIndex {
		// A pane covered everything before: a new run of un-emitted changes.
		sh.Epoch, sh.PendingSince = st.NextIndex, now
	} else if now.Before(sh.PendingSince) {
		sh.PendingSince = now // instances' clocks disagree: keep the earliest
	}
	sh.MaxEventTime = later(sh.MaxEventTime, o.EventTime)
	sh.LastAccepted = later(sh.LastAccepted, now)
	return sh, nil
}

// Combine adds up the partial sums of a (window, key) into one as of its
// PaneState st: measures add up, flags and times keep their extremes, and
// the earliest pending mark still pending against st survives.
func Combine(st PaneState, parts []Partial) (Partial, error) {
	c := Partial{Epoch: st.NextIndex}
	for i, sh := range parts {
		t, err := c.Measures.Add(sh.Measures)
		if err != nil {
			return Partial{}, fmt.Errorf("combine partial sum %d: %w", i, err)
		}
		c.Measures = t
		if !sh.PendingSince.IsZero() && sh.Epoch >= st.NextIndex &&
			(c.PendingSince.IsZero() || sh.PendingSince.Before(c.PendingSince)) {
			c.PendingSince = sh.PendingSince
		}
		c.OnTime = c.OnTime || sh.OnTime
		c.MaxEventTime = later(c.MaxEventTime, sh.MaxEventTime)
		c.LastAccepted = later(c.LastAccepted, sh.LastAccepted)
	}
	return c, nil
}
