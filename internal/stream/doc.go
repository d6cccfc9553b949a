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
// An order counts in an aggregation as elements (elementsOf), each a
// window.Order with its Window set, accepted or dropped on its own: keyed by
// an order field (pais, cliente_id), one per window of its event time with
// the order's measures; keyed by sku, one per (distinct SKU of its lines,
// trimmed and upper-cased; window) with importe = sum of cantidad x
// precio_unitario, unidades = sum of cantidad and pedidos = 1. A line
// without a SKU counts nowhere and is recorded in pedidos_descartados
// (reason sku_missing, its index in raw's "line"); each dropped (order,
// window) is one too_late row.
//
// # Documents (state layout 3)
//
// Designed for Firestore's bill and its limit of about one write per second
// per document: an order writes one document of its own and reads one
// shared document that only ticks write; the tick reads the orders since
// the last tick by one indexed query and rewrites each window they touch
// once, with all its keys.
//
//	stream/control                             controlDoc: the open generation (gen); per
//	                                           aggregation its window.WatermarkState, the
//	                                           generation its last advance closed (advanced)
//	                                           and the first whose records may hold its
//	                                           elements (since). Written by ticks only
//	stream/dedup/orders/<hash>_<pedido_id>     dedupDoc, one per order for every aggregation:
//	                                           per aggregation its fate, the W it was
//	                                           classified against, the window starts it
//	                                           counted in and was dropped from, and its keys
//	                                           (with their measures when not the order's).
//	                                           Tag "g<gen>": the generation it was written in.
//	                                           ExpireAt = max(now, newest end+L+D it counted
//	                                           in) + 7 days. <hash>: 4 hex digits of
//	                                           FNV-1a(pedido_id), against a hotspot at the end
//	                                           of the key range
//	aggregations/<agg>/control/fold            foldDoc: the last generation folded in and the
//	                                           agenda of open windows (extent, parts, next
//	                                           timer, on_time_done; while unreadable: error,
//	                                           failing_since, parked); for sessions the number
//	                                           of parts and per part its open keys, earliest
//	                                           timer and W due (the same while unreadable).
//	                                           Written by the fold only
//	aggregations/<agg>/control/lease           tick lease {holder, until}
//	aggregations/<agg>/state/<window>_<part>   partDoc: the keys of one window that hash
//	                                           (FNV-1a) to the part, each with its PaneState
//	                                           and sum. Parts double while one would pass
//	                                           256 KiB (never shrink). Deleted when the
//	                                           window's last key expires
//	aggregations/<agg>/sessions/<part>         sessionsPart: the open sessions of the keys
//	                                           that hash (FNV-1a) to the part, and the last
//	                                           generation folded into it. Parts double while
//	                                           one would pass 768 KiB (never shrink; an
//	                                           emptied part stays)
//	aggregations/<agg>/parked/<window>_<gen>   elements folded while their window's state
//	                                           could not be read (sessions: s<part>_<gen>)
//	aggregations/<agg>/outbox/<row id>         a row not yet in the warehouse, or up to 400
//	                                           rows of one transaction, {"rows": [...]}
//	stream/deadletters/seen/<row id>           dedup record of an invalid message (7 days)
//	stream/deadletters/outbox/<row id>         an invalid message's row not yet in the warehouse
//
// <window> is the window start as 20060102T150405Z. The TTL policy goes on
// ExpireAt (expire_at), the tag is the indexed field tag. The state
// documents carry "layout": StateLayout; any other is refused by name
// ("state layout 4 found, this binary reads layout 3"): the fold reports
// the window as failing and an order transaction fails, so Pub/Sub
// redelivers. The next change of layout ships its own one-shot migration.
//
// # Orders: 2 reads and 1 write
//
// The order transaction (orderTx, every aggregation at once) reads
// stream/control and each order's dedup record (a duplicate stops there),
// classifies each element against its aggregation's W, writes a too-late
// (order, window)'s row into the outbox and every other element into the
// order's dedup record, tagged with the open generation. No window state is
// read or written, so orders of a hot key do not contend: handled alone an
// order costs 1 transaction, 2 reads and 1 write (TestOrderCost), plus one
// write per too-late window or line without a SKU. A batch (WithBatching,
// HandleBatch) shares the control read: 1 + n reads and n writes for n
// orders, split only to keep each transaction under 480 writes and 8 MiB;
// an order whose elements would not fit one record is dead-lettered.
//
// # Tick: generations, advance, fold
//
// Per aggregation under its own lease (AggregationTick.Busy when another
// live tick holds it), a tick (tickLive): flushes the outbox and reads the
// fold document; asks the open generation for one record (ListTag, limit
// 1) and, if it has any, closes it (control.gen++: an order transaction
// still running conflicts and runs again in the next) and lists it whole;
// runs one advance transaction for every aggregation, which observes the
// newest times of the records not yet folded, advances each W and, when
// some W moved, closes the generation opened meanwhile; then folds, per
// aggregation, the generations up to the one its advance closed, at its
// new W. Every order classified against a W is thus in a generation the
// fold at the next W covers: an ON_TIME pane is complete.
//
// A fold transaction reads the fold and control documents and the state
// parts of the windows the records touch or whose timer is due, up to 8
// windows (further due ones take one transaction per 8), adds the elements
// in acceptance order, runs the trigger of every key visited, writes the
// parts that changed and the panes into outbox documents of at most 400
// rows. Its work is proportional to the orders since the last tick and the
// windows due, never to history (TestTickReadsBounded). A tick with nothing
// new writes nothing but its leases; the lease only saves duplicate work.
//
// Catching up: an aggregation more than 60 generations behind (about an
// hour of ticks) takes no part in the advance and adds the next 60
// generations per tick at the W it has, without triggers. With ticks
// stopped for hours one generation holds every order, and its fold may pass
// Firestore's 10 MiB (not bounded further: keep the tick's alert on).
//
// Headroom: an element that would take its key's total out of NUMERIC's
// range is refused by the fold, which dead-letters the order in that
// aggregation only (row "overflow|<agg>|<pedido_id>"); Handle answered it
// as accepted, since an order transaction cannot see the totals.
//
// Failures (failing.go): a window whose state cannot be read is reported
// and its elements parked; the others go on. A failure of one
// aggregation's fold does not stop the others, and Tick answers the joined
// error so that Cloud Scheduler retries. A dedup record that does not
// decode holds back its aggregation's advance and fold until it reads.
//
// # Session windows
//
// An order of a session aggregation (window.Spec.Gap) goes through the same
// order transaction: its element's window is the proto-window [t, t+G),
// classified against W before merging. The fold keeps the open sessions of
// the keys that hash to a part in one part document (a key's sessions
// together, found by its hash), and the agenda per part in the fold
// document (its keys, the earliest processing-time timer and the earliest
// W at which one of its sessions reaches its end or its expiry). It visits
// the parts its new orders' keys hash to, then the parts due, adds their
// elements (window.Spec.AcceptSession), runs OnTickSession on every session
// of the part and writes each part once. Up to 4 parts share a
// transaction; each earlier one marks its parts with the generation folded
// in, so an interrupted fold adds nothing twice. A part that would pass
// 768 KiB doubles the parts, as a window's state does (splitParts): that
// transaction reads and rewrites every part once.
//
// Counts (TestSessionTickCost): a tick with new orders of one customer
// costs 8 transactions, 10 reads and 8 writes, whether the customer sent
// one order or a thousand and whatever the other customers with open
// sessions and the parts they take; only the listing of the closed
// generation grows with the orders. Orders of k customers, or keys due,
// add one read and one write per part they hash to, min(k, parts), never
// per key or order (150 customers over 8 parts: 19 reads, 18 writes); a
// tick with no new order and no part due reads and writes no part.
//
// Bounds: an open session takes about 220 bytes of its part
// (TestSessionBytes: 222 with its EARLY and ON_TIME panes; short names,
// times in nanoseconds), whatever its orders; a key holds at most 1000
// open sessions (an order opening one more is dead-lettered like an
// overflow), so a key alone stays far under 1 MiB. The agenda costs under
// 100 bytes per part, not per customer. What bounds the open sessions is
// the doubling transaction, which rewrites every part within Firestore's
// 10 MiB: the doubling past 16 parts, at about 10 MiB of open sessions,
// some 45,000 (50,000 orders a day with D + G + L = 2 h 40 min make about
// 5,600, in 2 parts), fails every time and the tick's alert fires. CPU: a
// tick that reads and writes those 2 parts spends about 54 ms more than
// one with 100 open customers (BenchmarkSessionTick).
//
// # Outbox
//
// A row is written into an outbox document in the transaction whose change
// caused it, appended to the Sink with its stable Row.ID (the pane
// identity, "too_late|<agg>|<pedido_id>" plus "|<window start>" for
// sliding windows, "sku_missing|<agg>|<pedido_id>|<line>",
// "overflow|<agg>|<pedido_id>", "invalid|<message id>" or
// "undecodable|<sha-256 of the body>"), then deleted. A failure between the
// steps leaves the document for the next tick; the Sink ignores a repeated
// Row.ID, so nothing is lost or duplicated.
package stream
