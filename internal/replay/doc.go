// Package replay runs the real-time window engine (package stream, the very
// processor behind AggregateOrders and AdvanceWatermark) over historical
// orders as a bounded stream, so that history and live data go through one
// logic and land in the same panes table under the same aggregation name.
//
// # The bounded stream
//
// A replay is cut into segments (see Cut below). Each segment runs a fresh
// stream.Processor over a temporary boltstore file, deleted afterwards:
//
//  1. every order is handled (Handle) while no tick has run, so the
//     watermark is still at minus infinity and every order is on time,
//     whatever its event time and whatever the input order;
//  2. one final tick at a processing time far enough ahead ("the end of
//     time for the input") moves the watermark past end + L of the
//     newest window: every (window, key) gets its ON_TIME pane and expires
//     in that tick. No EARLY pane is emitted (no tick runs while W < end)
//     and no LATE pane (no order arrives once W >= end), so each (window,
//     key) gets exactly one pane, pane_index 0, ON_TIME, with the exact sums.
//
// The processing clock is the caller's Now at the start of the replay: the
// orders are handled at Now - I (the largest idle timeout) and the final
// tick runs at max(Now, newest window end + L + D), the first time the
// watermark rule lets W reach the input's end. So a replay of the past emits
// its panes at Now with watermark Now - D; a replay of future-dated orders
// emits them at the input's end. The specs are the live ones.
//
// Duplicates are handled as live: the same pedido_id counts once per
// segment (the first one read, since orders of one pedido_id are handled
// in input order). Invalid orders are counted and sampled in the Report and
// not written to pedidos_descartados: that table records what the live
// stream dropped, which reconcile uses to explain live figures, and a
// replay drops nothing the live stream saw.
//
// # Segments
//
// A Source marks a message Cut when no earlier message has a later event
// time than it or any later message (the input is ordered at that point).
// At a Cut whose windows differ, in every aggregation, from the newest
// window of the running segment, the segment is closed (its final tick
// runs) and a new one starts, so state and the final tick stay bounded by
// a segment. The orders JSONL is one segment (it need not be ordered, and
// dedup spans the file); lineas_pedido is cut at every date, so a segment
// is one date when windows are at most a day long.
//
// # Event time of lineas_pedido
//
// lineas_pedido has a date (fecha) and no time of day. An order of fecha D
// gets event time D 12:00 UTC. Consequences: with hourly windows every
// replayed order of D lands in the window [12:00, 13:00) UTC of D, one pane
// per country and date; the daily totals are exact and the hourly
// breakdown is not real (hours other than 12:00 stay empty). Noon rather
// than midnight because noon UTC is still on date D in every zone from
// UTC-12 to UTC+11, so a reader of the day in Madrid or in UTC finds the
// orders on their fecha, and reconcile (per day and country) agrees
// exactly with a table replay. Orders are read per date under the
// newest-generation rule (the named read day_orders of package
// warehouse, which shares the rule with reconcile's reads), grouped per
// pedido_id: pais (an order whose lines name several countries is
// invalid), importe_total = SUM(importe), and one summary line with
// cantidad = SUM(cantidad), so unidades = SUM(cantidad).
//
// # Pane identities: replay and live share them
//
// A pane's identity is (aggregation, window_start, key, pane_index), and a
// replay writes pane 0 of its windows under the live aggregation's name, so
// a window that already has live panes has a pane 0 too: appending would be
// ignored (same Row.ID) or mix two histories. The replay therefore checks
// the panes table before writing each pane:
//
//   - no pane for the (window, key): the replay's ON_TIME pane is written;
//   - exactly the replay's pane (one pane, ON_TIME, same figures): nothing is
//     written, it counts as Unchanged; this is what a re-run sees, so
//     re-running a replay adds nothing;
//   - anything else (live panes, or an earlier replay of different data):
//     the window is refused and reported as a Conflict; the command exits
//     non-zero. Replay is meant for history the live stream never saw.
//
// The check and the append are not one transaction: a live pane written to
// the same window while the replay runs is not detected.
package replay
