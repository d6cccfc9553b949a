// Package windowtest holds what every implementation of the event-time
// aggregation is tested against: reference models of docs/event-time.md
// (Model, one fixed aggregation fed window.Orders; Multi, several fed whole
// orders, whose doc comment is the contract a processor is held to), random
// streams, the seed stories, and checks of the specification's invariants.
//
// The models are written independently of package window's trigger: they
// keep every accepted element in a list per (window, key), compute windows
// and sums with big integers and decide panes from those lists, sharing
// only the vocabulary (Spec, Order, Measures, Pane). Feed a model and the
// system under test the same events, then compare exactly, or run the Check
// methods when the system's timing may legitimately differ.
package windowtest
