// Package stream is the processor of the real-time aggregations specified
// in docs/event-time.md: it handles Pub/Sub push deliveries of orders
// (Handle) for every configured aggregation at once, runs the watermark
// timer (Tick) and writes panes and discarded messages to the warehouse
// through an outbox. The decisions are package window's; this package owns
// the documents they are stored in and the transactions that read and write
// them. docs/stream.md walks through an order and a tick; this comment is
// the reference for the documents and what each transaction costs.
//
// # Elements
//
// An order counts in an aggregation as elements (elementsOf), each accepted
// or dropped on its own: keyed by an order field, one per window of its
// event time; keyed by sku, one per (distinct trimmed, upper-cased SKU;
// window) with importe = sum of cantidad x precio_unitario. A line without
// a SKU counts nowhere (reason sku_missing); each dropped (order, window)
// is one too_late row.
//
// # Documents (state layout 3)
//
// Designed for Firestore's bill and its limit of about one write per second
// per document: an order writes one document of its own and reads one that
// only ticks write; a tick reads the orders since the last tick by one
// indexed query and rewrites each window they touch once, with all its keys.
//
//	stream/control                             controlDoc: the open generation; per aggregation
//	                                           its W, the generation its last advance closed and
//	                                           the first that may hold its elements. Ticks only
//	stream/dedup/orders/<hash>_<pedido_id>     dedupDoc, one per order for every aggregation,
//	                                           tagged "g<gen>"; <hash>: 4 hex digits of
//	                                           FNV-1a(pedido_id), against a hotspot at the end
//	                                           of the key range. Expires 7 days after its newest
//	                                           window's end+L+D
//	aggregations/<agg>/control/fold            foldDoc: the last generation folded and the
//	                                           agenda (windows, or session parts). Fold only
//	aggregations/<agg>/control/lease           tick lease {holder, until}
//	aggregations/<agg>/state/<window>_<part>   partDoc: a window's keys that hash to the part.
//	                                           Parts double past 256 KiB (never shrink)
//	aggregations/<agg>/sessions/<part>         sessionsPart: the open sessions of the keys that
//	                                           hash to the part. Parts double past 768 KiB
//	aggregations/<agg>/parked/<window>_<gen>   elements folded while their window's state could
//	                                           not be read (sessions: s<part>_<gen>)
//	aggregations/<agg>/outbox/<row id>         up to 400 rows not yet in the warehouse
//	stream/deadletters/seen/<row id>           dedup record of an invalid message (7 days)
//	stream/deadletters/outbox/<row id>         an invalid message's row not yet in the warehouse
//
// <window> is the window start as 20060102T150405Z. The state documents
// carry "layout": StateLayout; any other is refused by name: the fold
// reports the window as failing and an order transaction fails, so Pub/Sub
// redelivers. The next change of layout ships its own one-shot migration.
//
// # Costs
//
// An order handled alone costs 1 transaction, 2 reads and 1 write
// (TestOrderCost), plus one write per too-late window or line without a
// SKU; a batch shares the control read (1 + n reads, n writes), split only
// to keep each transaction under 480 writes and 8 MiB. A tick's work is
// proportional to the orders since the last tick and the windows due, never
// to history (TestTickReadsBounded); one with nothing new writes only its
// leases. Every order classified against a W is in a generation the fold at
// the next W covers, so an ON_TIME pane is complete.
//
// An aggregation more than 60 generations behind adds 60 per tick at the W
// it has, without triggers (TestLaggingAggregationCatchesUp). With ticks
// stopped for hours one generation holds every order, and its fold may pass
// Firestore's 10 MiB (keep the tick's alert on).
//
// Sessions (TestSessionTickCost): a tick with new orders of one customer
// costs 8 transactions, 10 reads and 8 writes, whatever the other open
// sessions; k customers or keys due add one read and one write per part
// they hash to, never per key or order. An open session takes about 220
// bytes (TestSessionBytes); a key holds at most 1000. The doubling
// transaction rewrites every part within 10 MiB, which bounds the open
// sessions at about 45,000 (50,000 orders a day make about 5,600).
//
// # Outbox
//
// A row is written into an outbox document in the transaction whose change
// caused it, appended to the Sink with its stable Row.ID ("too_late|<agg>|
// <pedido_id>[|<window start>]", "sku_missing|<agg>|<pedido_id>|<line>",
// "overflow|<agg>|<pedido_id>", "invalid|<message id>",
// "undecodable|<sha-256 of the body>", or the pane identity), then deleted.
// A failure between the steps leaves the document for the next tick; the
// Sink ignores a repeated Row.ID, so nothing is lost or duplicated.
package stream
