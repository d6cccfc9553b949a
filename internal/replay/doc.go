// Package replay runs the live window engine (package stream) over
// historical orders as a bounded stream, so that history and live data go
// through one logic into the same panes tables under the same names.
//
// Each segment runs a fresh stream.Processor over a temporary boltstore:
// every order is handled before any tick (W is at minus infinity, so every
// order is on time), then one final tick at max(Now, newest window end + L
// + D) expires every (window, key) with exactly one pane, pane_index 0,
// ON_TIME, with the exact sums. Orders are handled at Now - I (the largest
// idle timeout), so a replay of the past emits its panes at Now with W = Now
// - D. Duplicates count once per segment. Invalid orders are counted in the
// Report, not written to pedidos_descartados: that table is what the live
// stream dropped, which reconcile explains live figures with.
//
// A Source marks a message Cut when no earlier message has a later event
// time than it or any later one. At a Cut whose windows differ, in every
// aggregation, from the running segment's newest, the segment closes, so
// state stays bounded. The orders JSONL is one segment (unordered, dedup
// across the file); lineas_pedido is cut at every date.
//
// lineas_pedido has a date and no time of day: an order of fecha D gets
// event time D 12:00 UTC, still date D in every zone from UTC-12 to UTC+11,
// so the daily totals are exact (and reconcile agrees with a table replay)
// while the hourly breakdown is not real. Orders are read per date under
// the newest-generation rule (warehouse's day_orders), one summary line
// per order: an order whose lines name several countries is invalid.
//
// A replayed pane 0 shares its identity (aggregation, window_start, key,
// pane_index) with a live pane 0, so before writing the replay reads the
// panes table: no pane, it writes; exactly its own pane, Unchanged (a re-run
// adds nothing); anything else, a Conflict, refused, and the command exits
// non-zero. Replay is for history the live stream never saw. The check and
// the append are not one transaction: a live pane written meanwhile is not
// detected.
package replay
