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
// second: no document is written by every order.
//
//	aggregations/<agg>/control/watermark       window.WatermarkState; written by the tick only
//	aggregations/<agg>/control/lease           tick lease {holder, until}; written by ticks
//	aggregations/<agg>/windows/<cell>          one open (window, key): the index entry the tick
//	                                           lists AND its window.PaneState. Created by the
//	                                           first order of the cell (only when missing),
//	                                           then written by the tick, and by a late order
//	                                           when the late delay Ld is 0. Deleted at expiry.
//	aggregations/<agg>/windows/<cell>/shards/<n>  window.Shard n of the cell, n < the cell's
//	                                           shard count; written by the orders that hash
//	                                           to it, deleted at expiry
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
// A cell records the shard count it was created with, and every order and
// tick of that cell uses that count: changing Spec.Shards takes effect for
// new cells only, and never moves an order of an open window to another
// shard. Hot-key capacity is therefore about Shards writes per second per
// (window, key) on Firestore (8 by default), sustained; bursts above it
// queue on the shards' locks. With Ld = 0 every late order also writes its
// cell, so a burst of late orders into one (window, key) contends on that
// document: a late delay Ld > 0 batches them into the tick instead.
//
// # Transactions
//
// Every transaction reads everything before its first write, derives all
// it writes from what it read (it may run several times), and has no effect
// outside the store.
//
// Order (one per aggregation): read the watermark, the dedup record, the
// cell and the order's shard; a duplicate stops there (dedup comes before
// classifying). A too-late order writes its dedup record and its
// pedidos_descartados row into the outbox. Otherwise window.Spec.Accept
// updates the shard, which is written with the dedup record. A late order
// with Ld = 0 also reads every shard of its cell, and writes the cell's new
// PaneState and the correction pane into the outbox in the same commit.
// An order that finds its cell missing writes nothing: a small transaction
// creates the cell (if still missing), then the order transaction runs
// again, so that a burst into a new window contends on the cell once, not
// in every order transaction.
//
// Tick (per aggregation, under the lease): flush the outbox; list the open
// cells; one transaction reads the watermark and every listed cell with its
// shards, folds their newest event and acceptance times in and writes the
// advanced watermark (so M and last are read where W is written); then one
// transaction per cell that may change re-reads the watermark, the cell and
// its shards, runs window.Spec.OnTick and writes the new PaneState and the
// pane into the outbox, or deletes the expired cell and its shards; finally
// the outbox is flushed again. A cell whose trigger, run on the watermark
// transaction's snapshot, changes nothing gets no transaction, so a repeated
// tick writes nothing but its lease. A cell created after the listing is
// observed by the next tick, as if its first order had arrived just after
// this one. A late order handled between the watermark transaction and its
// cell's transaction emits the ON_TIME pane the cell still owes (as
// window.Spec.OnLateOrder does), so timings stay EARLY* ON_TIME? LATE*.
// The lease only saves duplicate work: two ticks at once still emit every
// pane once, because a pane's index comes from the PaneState it is written
// with.
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
