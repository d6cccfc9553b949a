// Package window is the pure core of the event-time aggregation specified in
// docs/event-time.md: fixed, sliding and session windows, the watermark rule, lateness,
// and the trigger that turns a (window, key)'s running totals into EARLY,
// ON_TIME and LATE panes, in ACCUMULATING or DISCARDING mode.
//
// Nothing here reads a clock, does I/O or starts a goroutine. Every decision
// is a function of explicit inputs (spec, persisted state, order, watermark,
// processing time), so a processor can call it inside a document-store
// transaction that may run more than once, and tests can replay any history.
//
// The state is split the way a store with about one write per second per
// document needs it:
//
//   - WatermarkState, one per aggregation, written only by the timer tick.
//   - Partial, a partial sum of a (window, key)'s orders plus the
//     bookkeeping a tick needs (first un-emitted change, on-time flag, and the
//     event and processing times that feed the watermark); Combine adds
//     several up.
//   - PaneState, one per (window, key), written by the tick.
//
// With sliding windows an element is in several windows (Spec.WindowsOf):
// the caller accepts it once per window, each with Order.Window set, and
// everything below works per (window, key) unchanged.
//
// Session windows (Spec.Gap) are data too: an order's window is its
// proto-window [t, t+G), which Classify judges before any merge; the
// caller keeps a key's open sessions together and hands them to
// AcceptSession, which merges the sessions the proto-window overlaps
// (moving the pane identity when the start moves, and keeping the
// identities that stopped existing for their MERGED pane), and runs
// OnTickSession per session at a tick: the same trigger on the session's
// current extent, with ON_TIME at most once per session.
//
// Combine folds a (window, key)'s partial sums into a Content; OnTick turns
// a PaneState and a Content into the next PaneState and at most one Pane.
// Pane semantics follow Apache Beam's PaneInfoTracker.
package window
