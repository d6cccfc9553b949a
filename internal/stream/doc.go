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
// without a SKU counts in no window and is recorded in pedidos_descartados
// (reason sku_missing, the line index in raw's "line"). Each element is a
// window.Order with its Window set, accepted or dropped on its own: an order
// may be too late for its oldest windows and count in newer ones, and each
// dropped (order, window) is one pedidos_descartados row.
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
//	                                           elements (since). Read by every order
//	                                           transaction, written by ticks only
//	stream/dedup/orders/<hash>_<pedido_id>     dedupDoc, the dedup record, one per order for
//	                                           every aggregation: per aggregation its fate
//	                                           (accepted, too_late, no_elements), the W it was
//	                                           classified against and the window starts it
//	                                           counted in and was dropped from, and the keys
//	                                           it counts under (with their measures when not
//	                                           the order's own, which the record holds once):
//	                                           its elements for the fold are every accepted
//	                                           window times every key. Tag (docstore.Doc.Tag)
//	                                           "g<gen>": the generation it was written in.
//	                                           ExpireAt (TTL) = max(now, newest end+L+D it
//	                                           counted in) + 7 days. <hash> is 4 hex digits of
//	                                           FNV-1a(pedido_id), so that sequential order
//	                                           numbers do not make a hotspot at the end of
//	                                           the collection's key range
//	aggregations/<agg>/control/fold            foldDoc: the last generation folded in (folded)
//	                                           and the agenda of open windows: per
//	                                           window its extent, how many state documents
//	                                           (parts), its next processing-time timer (due),
//	                                           on_time_done, and while its state cannot be
//	                                           read, error, failing_since and parked. Written
//	                                           by the fold only
//	aggregations/<agg>/control/lease           tick lease {holder, until}; written by ticks
//	aggregations/<agg>/state/<window>_<part>   partDoc: the keys of one window that hash
//	                                           (FNV-1a) to the part, each with its
//	                                           window.PaneState and the sum (window.Partial) of
//	                                           every element folded in. A window starts as one
//	                                           part and doubles its parts while one would
//	                                           pass 256 KiB (never shrinks). Written by the
//	                                           fold only. Deleted when its last key expires
//	aggregations/<agg>/sessions/<hash>_<key>   sessionsDoc, session windows only: one key's open
//	                                           sessions (window.Session: extent, pane state,
//	                                           running sum, identities owing a MERGED pane)
//	                                           and the last generation folded into it. Written
//	                                           by the fold only; emptied, it stays a day as a
//	                                           tombstone (see "Session windows")
//	aggregations/<agg>/parked/<window>_<gen>   elements folded while their window's state
//	                                           could not be read (below); for sessions
//	                                           parked/<hash>_<key>_<gen>, per key
//	aggregations/<agg>/outbox/<row id>         a pane, too-late, sku_missing or overflow row
//	                                           not yet in the warehouse; or up to 400 rows of
//	                                           one transaction, {"rows": [...]}, under the
//	                                           first one's row id
//	stream/deadletters/seen/<row id>           dedup record of an invalid message; ExpireAt
//	                                           = now + 7 days
//	stream/deadletters/outbox/<row id>         an invalid message's row not yet in the warehouse
//
// <window> is the window start as 20060102T150405Z. Every document has its
// JSON payload in Doc.Data; the Firestore TTL policy goes on the single
// ExpireAt field (expire_at), and the tag is the indexed field tag. The
// state documents (control, fold, parts, parked) carry "layout":
// StateLayout; any other layout, or none, is refused by name ("state layout
// 4 found, this binary reads layout 3"): the fold reports the window as
// failing (see FailingWindow) and an order transaction fails, so Pub/Sub
// redelivers. No earlier layout was ever deployed; the next change of
// layout ships its own one-shot migration.
//
// # Orders: 2 reads and 1 write
//
// Order transaction (per batch of deliveries, every aggregation at once,
// orderTx): read stream/control and each order's dedup record; a
// duplicate stops at its dedup record in every aggregation at once. Each
// element is classified against its aggregation's W (window.Spec.Classify):
// a too-late (order, window) writes its pedidos_descartados row into the
// aggregation's outbox; every other element goes into the order's dedup
// record, tagged with the open generation, for the tick to fold. No window
// state is read or written, so orders of one hot key do not contend, and
// what an order costs does not depend on its windows and keys: handled
// alone, 1 transaction, 2 reads (control, dedup record) and 1 write (the
// record), plus one write per too-late window or line without a SKU. A
// batch shares the control read: 1 + n reads and n writes for n orders.
//
// With batching on (WithBatching: BATCH_WAIT, BATCH_MAX_ORDERS) the
// deliveries an instance receives at once join one batch, handled as if
// its orders came one after the other (HandleBatch): one transaction, or as
// many as keep each under 480 writes and 8 MiB (an order's record always
// whole); a pedido_id met twice counts once. An order whose elements
// would not fit one record (maxRecordElements: thousands of distinct SKUs
// times their windows) is dead-lettered as invalid, since no retry could
// write it. Every delivery is answered
// once its batch committed (2xx) or failed (503 for all: Pub/Sub
// redelivers, dedup keeps it exact).
//
// A late element goes to the fold like any other: its LATE pane comes
// with the first tick at least Ld (the late delay, at least the tick
// interval) after the first un-emitted late change of its (window, key).
//
// # Tick: generations, advance, fold
//
// Per aggregation under its own lease (an aggregation whose lease another
// live tick holds is skipped: AggregationTick.Busy), a tick (tickLive):
//
//  1. flushes the outbox and reads the fold document;
//  2. asks the open generation for one record by its tag
//     (docstore.Store.ListTag with limit 1: on Firestore an equality query
//     served by the automatic index of tag, one billed read). When it has
//     any it closes it (control.gen++): every order transaction that read
//     it and had not committed conflicts on the control document and runs
//     again in the next generation, so once closed a generation is final,
//     and it is listed whole (one read per record);
//  3. runs one advance transaction for every aggregation: it observes the
//     newest event and acceptance times of the records not yet folded,
//     advances each W (window.Spec.AdvanceWatermark) and, when some W
//     moved, closes the generation opened meanwhile, whose orders were
//     classified against the old W; that one is listed too. It writes
//     nothing when no W moved;
//  4. folds, per aggregation, the generations up to the one its advance
//     closed, at its new W (fold).
//
// Every order classified against a W is thus in a generation the fold at
// the next W covers, which is what makes an ON_TIME pane complete. The
// control document is written at most twice per tick.
//
// Fold: one transaction reads the fold document, the control document and
// the state parts of every window the records touch or whose timer is due
// (its EARLY/LATE delay, its ON_TIME round or its expiry reached, or it
// is failing): the touched windows and due ones up to 8 windows in all;
// further due windows (after an outage) take one transaction per 8. It
// adds the records' elements in acceptance order (window.Spec.Accept),
// runs window.Spec.OnTick for every key of every window visited, writes
// the parts that changed, deletes the keys and windows that expired,
// records each window's next timer and puts the panes into outbox
// documents of at most 400 rows. It moves folded from the previous
// generation to the one advanced; a concurrent tick that got there first
// makes it do nothing. Its work is proportional to the orders since the
// last tick and the windows due, never to history. A tick with nothing
// new whose W does not move writes nothing but its leases; re-running a
// tick at the same now writes nothing else; when W moves with no order
// (idle) it writes the control document and each fold document once. The
// lease only saves duplicate work: two ticks at once still emit every
// pane once.
//
// Catching up: an aggregation whose fold is more than 60 generations
// behind (maxFoldGens, about an hour of ticks: after an outage of its
// fold) takes no part in the advance; each tick adds the next 60
// generations' elements to its windows at the W it has, without running
// triggers (the windows are marked due), so that no transaction grows with
// the outage; once caught up it advances and triggers as usual. The bound
// is in generations, and only ticks close generations: with the ticks
// stopped for hours while orders flow, one generation holds them all and
// its fold rewrites every window they touched in one transaction, which
// past Firestore's 10 MiB would fail on every tick (not bounded further:
// keep the tick's alert on).
//
// Headroom: an element that would take its key's total out of the range
// BigQuery stores (NUMERIC) is refused by Spec.Accept in the fold, and the
// order is dead-lettered in THAT AGGREGATION ONLY, by the tick: none of its
// elements there is added, and its pedidos_descartados row has row id
// "overflow|<agg>|<pedido_id>" and reason "invalid: aggregation <agg>:
// window <start> key "<k>": ...". Handle answered it as accepted (its
// record is its dedup record: a redelivery stays a duplicate) and it counts
// in the other aggregations: the order transaction reads no window state,
// so it cannot see the totals.
//
// Parked elements: a window whose state parts cannot be read (see
// FailingWindow) is reported, its agenda entry keeps the error and since
// when, and the elements the fold meets for it are written to
// parked/<window>_<generation> instead of being lost; the window is never
// expired while it fails. Every tick visits it again; the first fold that
// reads it adds its parked elements first (as they stand in its own
// transaction: a concurrent tick may have taken them), deletes them and
// emits the panes it owes. The other windows go on as usual.
//
// A tick handles the aggregations' folds one after the other, and a failure
// in one (its store transactions failing, its panes table refusing rows)
// does not stop the others: each gets its tick, and Tick then answers the
// joined error (non-2xx, so that Cloud Scheduler retries; a retry repeats
// nothing done). A dedup record that does not decode is such an error: its
// generation cannot be folded without it; its aggregation takes no part in
// the advance and folds nothing until it reads (the others go on). The
// watermark observes the records up to the generation the tick closed;
// those of the generation its advance closes (orders of the moments
// between) are folded then and observed by the next advance (the fold
// document's unseen times).
//
// # Session windows
//
// An aggregation of session windows (window.Spec.Gap) goes through the same
// order transaction: its element's window is the order's proto-window
// [t, t+G), classified against W like any window, so an order is too late
// per its proto-window, before merging, and its pedidos_descartados row
// names window_start t. Nothing about sessions is read or written by an
// order: still 2 reads and 1 write.
//
// The fold keeps a key's open sessions together in one document,
// aggregations/<agg>/sessions/<hash>_<key>, found by key (the hash as in
// the dedup records), and the agenda in the fold document: per key with
// open sessions, its next processing-time timer (the EARLY or LATE delay of
// its first un-emitted change, or now when an identity owes its MERGED
// pane) and the watermark at which one of its sessions reaches its end
// (its ON_TIME round) or its expiry (end + L). A tick visits the keys its
// new orders touch, in the order of their first element, then the keys
// due; for each it reads the key's document, adds the key's elements in
// acceptance order (window.Spec.AcceptSession: merging, bridging, moving
// the start), runs window.Spec.OnTickSession for each session (MERGED
// panes first, then at most one pane; expired sessions dropped) and writes
// the document once. Up to 200 keys (keysPerTx) share a transaction with
// the fold and control documents; the last one moves folded, and each
// earlier one marks every key document it wrote with the generation folded
// in, so a fold stopped between two of them and run again later (over
// more generations) adds nothing twice. An emptied key document is not
// deleted but kept as such a mark for a day (TTL), for the same reason.
//
// Counts (TestSessionTickCost): a tick with new orders of one customer
// costs 8 transactions, 10 reads and 8 writes, whether the customer sent
// one order or a thousand, and whether 3 or 150 other customers hold open
// sessions: the fold reads and writes that customer's document once, its
// pane's outbox document and the fold document; only the listing of the
// closed generation grows with the orders (one read per record). A tick
// with k customers touched or due adds k reads and k writes, and one
// transaction more per 200 keys.
//
// Bounds. A session is constant in size whatever its orders (running
// sums, about 400 bytes), so a hot customer's document is as large as a
// quiet one's. A key holds at most maxKeySessions (1000) open sessions,
// about 400 KB; they are disjoint, each at least G long, and open until
// W passes end + L, so more would need event times spread over hundreds
// of gaps ahead of W (a clock far ahead). An order that would open one
// more is dead-lettered in that aggregation like an overflow ("overflow|
// <agg>|<pedido_id>", reason "invalid: aggregation <agg>: session of key
// ...") and counts in the others. The agenda costs about 100 bytes per
// customer with an open session (for G + L + D), so the fold document
// holds about 9,000 of them under 1 MiB: at 50,000 orders a day and the
// shipped G = 30 min, L = 2 h, about 5,000 orders fall in such a span, so
// at most that many customers. Past about 9,000 the fold document cannot
// be written and every tick of that aggregation fails (its alert fires;
// the others go on): not handled further.
//
// A key document that cannot be read fails that key as a window's state
// does (failing.go): the tick reports it (FailingWindow with its Key and
// Path), keeps it on the agenda with its error, parks its elements in
// parked/<hash>_<key>_<gen> and goes on with the other keys; the first
// fold that reads the document again adds the parked elements first (an
// order parked twice, by folds interrupted at different W, counts once).
//
// # Outbox
//
// A pane or a discarded message is written into an outbox document in the
// transaction whose state change caused it (an order's too-late and
// sku_missing rows with the order; a fold's panes
// and overflow rows, up to 400 per document, with the fold); it is then
// appended to the Sink with its stable Row.ID (the pane identity,
// "too_late|<agg>|<pedido_id>" for fixed windows,
// "too_late|<agg>|<pedido_id>|<window start>" for sliding ones,
// "sku_missing|<agg>|<pedido_id>|<line>", "overflow|<agg>|<pedido_id>",
// "invalid|<message id>" or "undecodable|<sha-256 of the body>"), and the
// outbox document is deleted. A failure between the steps leaves the
// outbox document, which the next tick appends again; the Sink ignores the
// repeated Row.ID, so nothing is lost and nothing visible is duplicated.
package stream
