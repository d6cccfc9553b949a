// Package stream is the processor of the real-time aggregations specified
// in docs/event-time.md: it handles Pub/Sub push deliveries of orders
// (Handle) for every configured aggregation at once, runs the watermark
// timer (Tick) and writes panes and discarded messages to the warehouse
// through a pane outbox. The decisions are package window's; this package
// owns the documents they are stored in and the transactions that read and
// write them.
//
// # Elements
//
// An order counts in an aggregation as elements (elementsOf): keyed by an
// order field (pais, cliente_id), one per window of its event time
// (Spec.WindowsOf: one for fixed windows, S/P for sliding ones) with the
// order's measures; keyed by sku, one per (distinct SKU of its lines,
// trimmed and upper-cased; window) with importe = sum of cantidad x
// precio_unitario, unidades = sum of cantidad and pedidos = 1. A line
// without a SKU counts in no cell and is recorded in pedidos_descartados
// (reason sku_missing, the line index in raw's "line"). Each element is a
// window.Order with its Window set, accepted or dropped on its own: an order
// may be too late for its oldest windows and count in newer ones, and each
// dropped (order, window) is one pedidos_descartados row.
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
//	aggregations/<agg>/outbox/<row id>         a pane, too-late or sku_missing row not yet in
//	                                           the warehouse; or the panes of one tick
//	                                           transaction, {"rows": [...]}, under the
//	                                           first one's row id
//	aggregations/<agg>/orders/<hash>_<id>      the previous layout's dedup record (one per order
//	                                           and aggregation): no longer written; read only
//	                                           during the upgrade (below)
//	stream/dedup/orders/<hash>_<pedido_id>     dedup record, one per order for every
//	                                           aggregation: per aggregation its fate
//	                                           (accepted, too_late, no_elements) and the
//	                                           window starts it counted in and was dropped
//	                                           from. ExpireAt (TTL) = max(now, newest
//	                                           end+L+D it counted in) + 7 days. <hash> is 4
//	                                           hex digits of FNV-1a(pedido_id), so that
//	                                           sequential order numbers do not make a
//	                                           hotspot at the end of the collection's key range
//	stream/dedup                               control: when this dedup layout first started
//	                                           (since), until when the previous layout's
//	                                           records are read (legacy_until), and for which
//	                                           aggregations (legacy)
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
// and is layout 1; layouts 1 and 2 are read (the window state did not
// change between them), any other is refused by name ("state layout 3
// found, this binary reads layouts 1 to 2"): the tick reports the cell as
// failing (see FailingCell) and an order transaction fails, so Pub/Sub
// redelivers.
//
// # Upgrade from layout 1
//
// Layout 1 kept one dedup record per order and aggregation. Cells, deltas,
// agendas, watermarks and outboxes keep their paths, so open windows carry
// on. The first order transaction of a process reads stream/dedup (once per
// process); the first process of layout 2 creates it, in one transaction
// that also re-stamps every configured aggregation's watermark document with
// layout 2. The previous binary reads the watermark in every order
// transaction and refuses layout 2, so from that commit on it cannot count
// an order (its deliveries fail and Pub/Sub redelivers them to this
// version), and every order it counted has its legacy record. Aggregations
// whose watermark existed then are the legacy ones. Until legacy_until
// (since + DedupRetention + LegacyDedupMargin: Pub/Sub cannot redeliver a
// message published before the fence later than that) an order transaction
// also reads, per order, the legacy record of each legacy aggregation: one
// more read per order for ventas_hora_pais, for eight days; none after, and
// none ever on a new deployment. A legacy record makes the order a duplicate
// in every aggregation (an aggregation added by the upgrade never counts an
// order the previous version handled).
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
// commits the batch in every aggregation, or as many as keep each under
// 480 writes and 8 MiB, each order's dedup record always with all its
// deltas. Every delivery is answered once its batch committed (2xx) or
// failed (503 for all: Pub/Sub redelivers, dedup keeps it exact).
//
// Order transaction (per batch, every aggregation): read every
// aggregation's watermark and the dedup records (and the legacy ones during
// the upgrade), then the deltas the batch adds to and their cells; a
// duplicate stops at its dedup record (dedup comes before classifying) in
// every aggregation at once. A too-late (order, window) writes its
// pedidos_descartados row into its aggregation's outbox. An element on
// time, or late with Ld > 0, is added to its delta by window.Spec.Accept,
// once the headroom check (cell.go) knows the cell's total stays within the
// range BigQuery stores; an order one of whose elements would take a cell
// past is taken out of every aggregation and dead-lettered with the reason
// (an invalid order counts nowhere), as is an order that alone needs more
// writes than a transaction takes.
//
// What an order costs, both shipped aggregations on (ventas_hora_pais and
// ventas_sku_hora_movil: 4 windows per SKU), handled alone: 1 transaction;
// reads: 2 watermarks + 1 dedup record + (delta + cell) per cell it touches
// (1 + 4 x distinct SKUs), so 2 x (1 + 4k) + 3 with k SKUs; writes: 1 dedup
// record + 1 delta per cell (1 + 4k), plus one row per too-late window or
// line without a SKU. In a batch, orders of one cell share its delta and
// cell reads and its delta write. The cell document
// (which ticks write once per visit) gives that check its bound; only a
// cell near the bound reads every delta. A late order with Ld = 0 reads its
// cell and every delta of it: it folds them into the cell, emits the
// correction pane into the outbox in the same commit, and leaves a notice
// delta holding the newest event and acceptance times, so that the tick
// still sees them.
//
// # Tick: proportional to what changed
//
// Per aggregation, under its own lease: flush the outbox; list the deltas and
// the agenda (two snapshot queries, which take no lock, so the orders
// writing deltas meanwhile are not held up); one transaction reads the
// watermark, folds the listed deltas' newest event and acceptance times in,
// advances W, and adds the cells it has not seen yet to the agenda, so that
// the watermark's inputs come from the deltas and no document is written by
// every order. A cell's new deltas carry their own pending marks, so the
// tick knows from the listing alone when their EARLY (or LATE) delay runs
// out and notes it in the agenda. It visits only the cells that have a
// timer due, and every cell of a window whose end (the ON_TIME round) or
// expiry W has reached. When some window's ON_TIME round or expiry is due,
// the tick lists the deltas again after the watermark transaction
// committed (relist): every order reads W, and an order writes a delta of
// a window only while the W it read is short of the window's expiry (on
// time: of its end), so that listing holds every delta the ON_TIME pane
// or the expiry must cover, and those visits read it instead of every
// delta number the cell may use (most of which do not exist). A visit
// whose transaction reads a W past the one the listing followed (a
// concurrent tick) reads every delta number, as before. One transaction
// visits up to 16 cells (tickChunk): it re-reads the watermark, reads the
// cells in one call and then their deltas in one call, and runs
// window.Spec.OnTick per cell; when a cell emits a pane it folds the
// deltas into the cell and deletes them, at expiry it deletes the cell,
// and a visit that emits nothing and changes no state writes nothing (but
// the first, which creates the cell). The panes of one transaction go into
// one outbox document. A cell whose state cannot be read gets its error
// and writes nothing; the other cells of the transaction commit. The agenda records each
// cell's next timer and the fingerprint of the deltas already accounted
// for. A delta committed after the listing is seen by the next tick, as if
// its orders had arrived just after this one. A tick with nothing new and
// nothing due reads about seven documents and writes only its lease;
// re-running a tick writes nothing else. The lease only saves duplicate
// work: two ticks at once still emit every pane once, because a pane's
// index comes from the PaneState it is written with.
//
// A tick handles the aggregations one after the other, and a failure in one
// (its store transactions failing, its panes table refusing rows) does not
// stop the others: each gets its tick, and Tick then answers the joined
// error (non-2xx, so that Cloud Scheduler retries; a retry repeats nothing
// done). Order transactions are one for all aggregations, so an
// aggregation whose state cannot be read fails the orders (Pub/Sub
// redelivers them): one dedup record for every aggregation is what keeps a
// redelivery from counting twice anywhere.
//
// # Outbox
//
// A pane or a discarded message is written into an outbox document in the
// transaction whose state change caused it (the panes of one tick
// transaction into one document, appended and deleted together); it is
// then appended to the Sink with its stable Row.ID (the pane identity,
// "too_late|<agg>|<pedido_id>" for fixed windows as before,
// "too_late|<agg>|<pedido_id>|<window start>" for sliding ones,
// "sku_missing|<agg>|<pedido_id>|<line>", "invalid|<message id>" or
// "undecodable|<sha-256 of the body>"), and the outbox document is
// deleted. A failure between the steps leaves the outbox document, which
// the next tick appends again; the Sink ignores the repeated Row.ID, so
// nothing is lost and nothing visible is duplicated. A binary older than
// the several-row document reads it as a row it cannot render and leaves
// it in place (a rollback delays those panes, it loses none).
package stream
