// Package window is the pure core of the event-time aggregation of
// docs/event-time.md: windows (fixed, sliding, session), the watermark,
// lateness, and the trigger that turns a (window, key)'s totals into EARLY,
// ON_TIME, LATE and MERGED panes, accumulating or discarding, as Apache
// Beam's PaneInfoTracker does.
//
// Nothing here reads a clock, does I/O or starts a goroutine: every decision
// is a function of explicit inputs, so a processor can call it inside a
// document-store transaction that may run more than once, and tests can
// replay any history. The state is split for a store with about one write
// per second per document: WatermarkState is written only by the tick;
// Partial (one of several partial sums of a cell), PaneState and Session by
// the writer that folds orders in; in package stream, the tick.
package window
