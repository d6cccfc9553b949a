// Package stream is the processor of the real-time aggregation specified in
// docs/event-time.md: it handles Pub/Sub push deliveries of orders (Handle),
// runs the watermark timer (Tick) and writes panes and discarded messages to
// the warehouse through a pane outbox. The decisions are package window's;
// this package owns the documents they are stored in and the transactions
// that read and write them.
//
// # Document layout
//
// Designed for Firestore, where one document sustains about one write per
// second: no document is written by every order, and the tick reads what
// changed, not what is open.
//
//	aggregations/<agg>/control/watermark       window.WatermarkState; written by the tick only,
//	                                           read by every order transaction
//	aggregations/<agg>/control/lease           tick lease {holder, until}; written by ticks
//	aggregations/<agg>/deltas/<cell>_<n>       a change of a cell not yet folded in: the partial
//	                                           sums (window.Shard) of the orders some batches
//	                                           accepted, n < the cell's shard count. Written by
//	                                           order batches; folded into the cell and deleted
//	                                           by the tick
//	aggregations/<agg>/windows/<cell>          one (window, key): its window.PaneState and the
//	                                           sum of every change folded in. Written by the
//	                                           tick, and by a late order when the late delay Ld
//	                                           is 0. Deleted at expiry
//	aggregations/<agg>/agenda/<window start>   the tick's index of one window's cells and their
//	                                           next processing-time timer (EARLY/LATE delay);
//	                                           written by ticks only
//	aggregations/<agg>/orders/<hash>_<pedido_id>  dedup record: the order's fate (accepted
//	                                           or too_late) in this aggregation; ExpireAt
//	                                           (TTL) = max(now, end+L+D) + 7 days. <hash> is
//	                                           4 hex digits of FNV-1a(pedido_id), so that
//	                                           sequential order numbers do not make a
//	                                           hotspot at the end of the collection's key range
//	aggregations/<agg>/outbox/<row id>         a pane or too-late row not yet in the warehouse
//	stream/deadletters/seen/<row id>           dedup record of an invalid message; ExpireAt
//	                                           = now + 7 days
//	stream/deadletters/outbox/<row id>         an invalid message's row not yet in the warehouse
//
// <cell> is the window start as 20060102T150405Z, '_', and the key escaped
// with docstore.ID. Every document has its JSON payload in Doc.Data; the
// Firestore TTL policy goes on the single ExpireAt field (expire_at).
//
// The window state (watermark, deltas, cells, agenda) carries "layout":
// StateLayout. A document without it was written before the field existed
// and is layout 1; any other layout is refused by name ("state layout 2
// found, this binary reads layout 1"): the tick reports the cell as failing
// (see FailingCell) and an order transaction fails, so Pub/Sub redelivers.
//
// # Orders: combiner lifting
//
// With batching on (WithBatching: BATCH_WAIT, BATCH_MAX_ORDERS) the
// deliveries an instance receives at once join one batch: the first waits
// at most BATCH_WAIT for others, and while one batch commits the next keeps
// filling. A batch is handled as if its orders came one after the other
// (HandleBatch), in memory, over documents read once: the orders of one
// (window, key) are summed into one delta, whose number n comes from the
// first order's pedido_id so that concurrent batches of several instances
// spread over the cell's deltas; each order's dedup record is written in the
// same transaction, and a pedido_id met twice counts once. One transaction
// per aggregation commits the batch, or as many as keep each under 480
// writes and 8 MiB. Every delivery is answered once its batch committed
// (2xx) or failed (503 for all: Pub/Sub redelivers, dedup keeps it exact).
//
// Order transaction (per aggregation and batch): read the watermark and the
// dedup records, then the deltas the batch adds to and their cells; a
// duplicate stops at its dedup record (dedup comes before classifying). A
// too-late order writes its dedup record and its pedidos_descartados row
// into the outbox. An order on time, or late with Ld > 0, is added to its
// delta by window.Spec.Accept, once the headroom check (cell.go) knows the
// cell's total stays within the range BigQuery stores; the order that
// would take it past is dead-lettered with the reason. The cell document
// (which ticks write once per visit) gives that check its bound; only a
// cell near the bound reads every delta. A late order with Ld = 0 reads its
// cell and every delta of it: it folds them into the cell, emits the
// correction pane into the outbox in the same commit, and leaves a notice
// delta holding the newest event and acceptance times, so that the tick
// still sees them.
//
// # Tick: proportional to what changed
//
// Per aggregation, under the lease: flush the outbox; list the deltas and
// the agenda (two snapshot queries, which take no lock, so the orders
// writing deltas meanwhile are not held up); one transaction reads the
// watermark, folds the listed deltas' newest event and acceptance times in,
// advances W, and adds the cells it has not seen yet to the agenda, so that
// the watermark's inputs come from the deltas and no document is written by
// every order. A cell's new deltas carry their own pending marks, so the
// tick knows from the listing alone when their EARLY (or LATE) delay runs
// out and notes it in the agenda. It visits only the cells that have a
// timer due, and every cell of a window whose end (the ON_TIME round) or
// expiry W has reached. One transaction per visit re-reads the watermark,
// reads the cell and its deltas (the listed ones; every delta number for
// the ON_TIME pane and at expiry, so that they cover everything accepted
// before them) and runs window.Spec.OnTick; when it emits a pane (into the
// outbox) it folds the deltas into the cell and deletes them, at expiry it
// deletes the cell, and a visit that emits nothing and changes no state
// writes nothing (but the first, which creates the cell). The agenda records each
// cell's next timer and the fingerprint of the deltas already accounted
// for. A delta committed after the listing is seen by the next tick, as if
// its orders had arrived just after this one. A tick with nothing new and
// nothing due reads about seven documents and writes only its lease;
// re-running a tick writes nothing else. The lease only saves duplicate
// work: two ticks at once still emit every pane once, because a pane's
// index comes from the PaneState it is written with.
//
// # Outbox
//
// A pane or a discarded message is written into an outbox document in the
// transaction whose state change caused it; it is then appended to the Sink
// with its stable Row.ID (the pane identity, "too_late|<agg>|<pedido_id>",
// "invalid|<message id>" or "undecodable|<sha-256 of the body>"), and the
// outbox document is deleted. A failure between the steps leaves the outbox
// document, which the next tick appends again; the Sink ignores the repeated
// Row.ID, so nothing is lost and nothing visible is duplicated.
package stream
