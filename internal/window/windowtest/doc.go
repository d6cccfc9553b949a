// Package windowtest holds what every implementation of the event-time
// aggregation is tested against: reference models of docs/event-time.md,
// random streams of deliveries and ticks, and checks of the specification's
// invariants.
//
// Model is one aggregation with fixed windows fed window.Orders (one key and
// one measure set per order), with Stream and Seeds. Multi is several
// aggregations fed whole orders (order.Order, with lines) through
// MultiEvents, with MultiStream, ShippedSpecs and RandomSpecs: sliding
// windows, keys from order fields or from the lines' SKUs, sku_missing
// records, one dedup record per order for all aggregations, and per
// aggregation its own watermark, panes, fates and too-late (order, window)
// drops. Multi's doc comment is the contract a processor is held to.
//
// The models are written independently of package window's trigger: they
// keep every accepted element in a list per (window, key), compute windows
// and sums with big integers, and decide panes from those lists, while
// package window works with sharded running sums, epochs and pane
// bookkeeping. They share only the vocabulary (Spec, Order, Measures, Pane).
// Feed a model and the system under test the same events, then compare
// panes, drops, fates and watermarks exactly, or run the Check methods when
// the system's timing may legitimately differ.
package windowtest
