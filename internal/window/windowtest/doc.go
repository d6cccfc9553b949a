// Package windowtest holds what every implementation of the event-time
// aggregation is tested against: the reference model of docs/event-time.md
// (Multi, one or several aggregations fed whole orders, whose doc comment is
// the contract a processor is held to), random streams, the seed stories,
// and checks of the specification's invariants.
//
// The model is written independently of package window's trigger: it
// keeps every accepted element in a list per (window, key), computes windows
// and sums with big integers and decides panes from those lists, sharing
// only the vocabulary (Spec, Order, Measures, Pane). Feed the model and the
// system under test the same events, then compare exactly, or run the Check
// methods when the system's timing may legitimately differ.
package windowtest
