// Package windowtest holds what every implementation of the event-time
// aggregation is tested against: a reference Model of docs/event-time.md, a
// random Stream of deliveries and ticks, and checks of the specification's
// invariants.
//
// The model is written independently of package window's trigger: it keeps
// every accepted order in a list per (window, key) and decides panes from
// those lists, while package window works with sharded running sums, epochs
// and pane bookkeeping. It shares only the vocabulary (Spec, Order, Measures,
// Pane). Feed a model and the system under test the same events, then compare
// Panes, Drops, Fates and Watermark exactly, or run the Check methods when
// the system's timing may legitimately differ.
package windowtest
