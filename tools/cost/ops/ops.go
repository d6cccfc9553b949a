// Package ops states what the stream processor costs in Firestore
// operations: per order and per tick, the figures internal/stream's cost
// tests assert (TestOrderCost, TestTickReadsBounded) and docs/cost.md
// prices. It is one place both can read, so that the price sheet cannot
// quote counts the code no longer has.
package ops

// Ops are Firestore operations. Firestore bills writes and deletes apart,
// and a query one read per document it returns (Listed), one when it
// returns none (EmptyQueries).
type Ops struct {
	Transactions, Reads, Writes, Deletes int64
	// TTLDeletes: documents the TTL policy deletes later, billed as deletes
	// with no free quota.
	TTLDeletes                    int64
	Queries, Listed, EmptyQueries int64
	// RoundTrips: begin and commit per transaction, one per Get, one per
	// query; what a request waits on Firestore.
	RoundTrips int64
}

// BilledReads are the reads Firestore bills, queries included.
func (o Ops) BilledReads() int64 { return o.Reads + o.Listed + o.EmptyQueries }

// Order is an order handled alone: one transaction reads stream/control
// (the open generation and every watermark) and the order's dedup record,
// and writes the record, which the TTL policy deletes after the retention.
// Its windows and SKUs change nothing: the tick folds the record.
var Order = Ops{Transactions: 1, Reads: 2, Writes: 1, TTLDeletes: 1, RoundTrips: 3}

// Ticks are n ticks of aggs aggregations that list records dedup records
// in all (at least one each tick), read stateReads and write stateWrites
// window state documents in their folds, and write outbox outbox
// documents, each appended to BigQuery by one insertAll and then deleted
// in a transaction of its own.
func Ticks(n, aggs, records, stateReads, stateWrites, outbox int64) Ops {
	// Per tick, on stream/control: one transaction reads the open
	// generation, one closes it and one advances the watermarks (a read
	// each, the last two write it); four queries: the dead letters' outbox
	// (empty), the open generation probed for one record and then listed,
	// and the generation the advance closed (empty: orders arrive after
	// the tick). Per aggregation: its lease taken (a read, a write) and
	// given back (a read, a delete), its fold state read (the fold
	// document and stream/control), its fold (the same two, then the
	// window state; it writes the fold document) and its outbox queried
	// (empty). A transaction is two round trips, each of its Gets one more:
	// the fold has two.
	return Ops{
		Transactions: n*(3+4*aggs) + outbox,
		Reads:        n*(3+6*aggs) + stateReads,
		Writes:       n*(2+2*aggs) + stateWrites + outbox,
		Deletes:      n*aggs + outbox,
		Queries:      n * (4 + aggs),
		Listed:       n + records,
		EmptyQueries: n * (2 + aggs),
		RoundTrips:   n*(2*(3+4*aggs)+3+5*aggs+4+aggs) + 2*outbox,
	}
}

// fields are o's counts, in declaration order, for Add and Times.
func (o *Ops) fields() []*int64 {
	return []*int64{&o.Transactions, &o.Reads, &o.Writes, &o.Deletes, &o.TTLDeletes,
		&o.Queries, &o.Listed, &o.EmptyQueries, &o.RoundTrips}
}

// Add returns the sum of o and p.
func (o Ops) Add(p Ops) Ops {
	add := p.fields()
	for i, f := range o.fields() {
		*f += *add[i]
	}
	return o
}

// Times returns o n times over.
func (o Ops) Times(n int64) Ops {
	for _, f := range o.fields() {
		*f *= n
	}
	return o
}
