package cost

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// Phase is what a store operation is charged to: the caller sets it around
// each Handle, Tick or ledger call, so that a serial simulation can tell the
// cost of an order from the cost of a tick.
type Phase string

// The phases the measurement charges operations to.
const (
	PhaseOrder  Phase = "order"
	PhaseTick   Phase = "tick"
	PhaseLedger Phase = "ledger"
)

// Ops counts document store operations the way Firestore bills them.
type Ops struct {
	Transactions int64 `json:"transactions"` // RunTx calls
	GetCalls     int64 `json:"get_calls"`    // Tx.Get calls (one BatchGetDocuments RPC each)
	// Reads is the documents asked for by Get, found or not: a lookup of a
	// missing document is counted as a billed read (the conservative reading
	// of Firestore's billing; ReadsMissing says how many of them there were).
	Reads        int64 `json:"reads"`
	ReadsMissing int64 `json:"reads_missing"`
	Writes       int64 `json:"writes"`    // Set, in committed transactions
	Deletes      int64 `json:"deletes"`   // Delete, in committed transactions
	Lists        int64 `json:"lists"`     // List and ListTag calls (one query each)
	ListDocs     int64 `json:"list_docs"` // documents returned by List and ListTag
	// ListReads is what the queries are billed: the documents returned, and
	// one read for a query that returns none.
	ListReads int64 `json:"list_reads"`
	// TTLDeletes counts documents written with an ExpireAt that no explicit
	// Delete removed: each will be deleted once by the TTL policy, billed as
	// a delete (and outside the free quota).
	TTLDeletes int64 `json:"ttl_deletes"`
	// TTLBytes is the size (path + data + tag) of those documents when
	// written, for the storage estimate.
	TTLBytes int64 `json:"ttl_bytes"`
	// RPCs estimates the round trips of the Firestore client: two per
	// transaction (begin, commit), one per Get and one per List or ListTag.
	RPCs int64 `json:"rpcs"`
	// TxByKind counts transactions by what they do (see kindLocked).
	TxByKind map[string]int64 `json:"tx_by_kind"`
	// RPCsByKind splits RPCs the same way; List and ListTag are under "list".
	RPCsByKind map[string]int64 `json:"rpcs_by_kind"`
}

// BilledReads is what Firestore bills as document reads.
func (o Ops) BilledReads() int64 { return o.Reads + o.ListReads }

// Sub returns o - p, for counts taken over an interval.
func (o Ops) Sub(p Ops) Ops {
	d := Ops{
		Transactions: o.Transactions - p.Transactions,
		GetCalls:     o.GetCalls - p.GetCalls,
		Reads:        o.Reads - p.Reads,
		ReadsMissing: o.ReadsMissing - p.ReadsMissing,
		Writes:       o.Writes - p.Writes,
		Deletes:      o.Deletes - p.Deletes,
		Lists:        o.Lists - p.Lists,
		ListDocs:     o.ListDocs - p.ListDocs,
		ListReads:    o.ListReads - p.ListReads,
		TTLDeletes:   o.TTLDeletes - p.TTLDeletes,
		TTLBytes:     o.TTLBytes - p.TTLBytes,
		RPCs:         o.RPCs - p.RPCs,
		TxByKind:     subMap(o.TxByKind, p.TxByKind),
		RPCsByKind:   subMap(o.RPCsByKind, p.RPCsByKind),
	}
	return d
}

func subMap(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range a {
		if v-b[k] != 0 {
			out[k] = v - b[k]
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && v != 0 {
			out[k] = -v
		}
	}
	return out
}

func (o Ops) clone() Ops {
	c := o
	c.TxByKind = map[string]int64{}
	for k, v := range o.TxByKind {
		c.TxByKind[k] = v
	}
	c.RPCsByKind = map[string]int64{}
	for k, v := range o.RPCsByKind {
		c.RPCsByKind[k] = v
	}
	return c
}

// CountingStore wraps a docstore.Store and counts, per Phase, what each
// operation would be billed on Firestore. It changes nothing it forwards.
type CountingStore struct {
	store docstore.Store

	mu    sync.Mutex
	phase Phase
	// folded holds the aggregations (by fold document path) whose fold
	// state the current tick has read, so that their later fold-first
	// transactions are fold transactions.
	folded map[string]bool
	ops    map[Phase]*Ops
	// ttl holds the live documents written with an ExpireAt, by the phase
	// that created them, and their size when written.
	ttl map[string]ttlDoc
}

type ttlDoc struct {
	phase Phase
	bytes int64
}

var _ docstore.Store = (*CountingStore)(nil)

// NewCountingStore wraps s; operations are charged to PhaseOrder until
// SetPhase says otherwise.
func NewCountingStore(s docstore.Store) *CountingStore {
	return &CountingStore{store: s, phase: PhaseOrder, folded: map[string]bool{}, ops: map[Phase]*Ops{}, ttl: map[string]ttlDoc{}}
}

// SetPhase charges the following operations to p. Starting PhaseTick again
// starts a new tick.
func (c *CountingStore) SetPhase(p Phase) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phase = p
	c.folded = map[string]bool{}
}

// Ops returns the counts charged to p so far.
func (c *CountingStore) Ops(p Phase) Ops {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opsLocked(p).clone()
}

func (c *CountingStore) opsLocked(p Phase) *Ops {
	o, ok := c.ops[p]
	if !ok {
		o = &Ops{TxByKind: map[string]int64{}, RPCsByKind: map[string]int64{}}
		c.ops[p] = o
	}
	return o
}

// List implements docstore.Store.
func (c *CountingStore) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	docs, err := c.store.List(ctx, collection)
	c.countQuery(len(docs), err)
	return docs, err
}

// ListTag implements docstore.Store. It is a query like List and billed
// alike: the documents returned, at least one read.
func (c *CountingStore) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	docs, err := c.store.ListTag(ctx, collection, tag, limit)
	c.countQuery(len(docs), err)
	return docs, err
}

func (c *CountingStore) countQuery(n int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.opsLocked(c.phase)
	o.Lists++
	o.RPCs++
	o.RPCsByKind["list"]++
	if err == nil {
		o.ListDocs += int64(n)
		o.ListReads += max(1, int64(n))
	}
}

// RunTx implements docstore.Store. Reads are counted for every run of fn
// (Firestore bills the reads of an aborted attempt too); writes and deletes
// only for the run that committed.
func (c *CountingStore) RunTx(ctx context.Context, fn func(ctx context.Context, tx docstore.Tx) error) error {
	var last *countingTx
	err := c.store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		last = &countingTx{Tx: tx, c: c}
		return fn(ctx, last)
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.opsLocked(c.phase)
	o.Transactions++
	kind := "none"
	gets := int64(0)
	if last != nil {
		kind = c.kindLocked(last.first, last.gets)
		gets = last.gets
	}
	o.TxByKind[kind]++
	o.RPCs += 2 + gets
	o.RPCsByKind[kind] += 2 + gets
	if err != nil || last == nil {
		return err
	}
	for _, w := range last.writes {
		if w.delete {
			o.Deletes++
			if d, ok := c.ttl[w.path]; ok {
				c.opsLocked(d.phase).TTLDeletes--
				c.opsLocked(d.phase).TTLBytes -= d.bytes
				delete(c.ttl, w.path)
			}
			continue
		}
		o.Writes++
		if w.expires {
			if d, ok := c.ttl[w.path]; ok {
				// Rewritten: still one TTL delete, of the newer size.
				c.opsLocked(d.phase).TTLBytes += w.bytes - d.bytes
				c.ttl[w.path] = ttlDoc{phase: d.phase, bytes: w.bytes}
				continue
			}
			c.ttl[w.path] = ttlDoc{phase: c.phase, bytes: w.bytes}
			o.TTLDeletes++
			o.TTLBytes += w.bytes
		}
	}
	return nil
}

// kindLocked names a transaction by its first read, following the
// documents' layout (stream's and ledger's package comments). An order
// transaction reads the control document and the orders' dedup records at
// once. The tick's transactions on the control document (reading the open
// generation, closing it, advancing the watermarks) are tick-control. An
// aggregation's fold document is read first twice in a tick: to learn what
// was folded (tick-fold-state, the first in the tick), then by each fold
// transaction (tick-fold).
func (c *CountingStore) kindLocked(first []string, gets int64) string {
	if gets == 0 || len(first) == 0 {
		return "outbox-delete"
	}
	p := first[0]
	switch {
	case strings.HasSuffix(p, "/control/lease"):
		return "tick-lease"
	case strings.HasPrefix(p, "ledger"):
		return "ledger"
	case strings.HasPrefix(p, "stream/deadletters/seen/"):
		return "dead-letter"
	case p == "stream/control":
		switch {
		case slices.Contains(first[1:], "stream/dedup"):
			return "control-fence" // once per process: creates or completes the control document
		case slices.ContainsFunc(first[1:], func(q string) bool { return strings.Contains(q, "/orders/") }):
			return "order" // a batch of orders: the control document and their dedup records
		}
		return "tick-control"
	case strings.HasSuffix(p, "/control/fold"):
		if c.phase == PhaseTick && !c.folded[p] {
			c.folded[p] = true
			return "tick-fold-state"
		}
		return "tick-fold"
	}
	return "other"
}

type write struct {
	path    string
	delete  bool
	expires bool
	bytes   int64
}

// countingTx records one run of a transaction function.
type countingTx struct {
	docstore.Tx
	c *CountingStore

	mu     sync.Mutex
	first  []string
	gets   int64
	writes []write
}

func (t *countingTx) Get(paths ...string) ([]docstore.Doc, error) {
	docs, err := t.Tx.Get(paths...)
	if len(paths) == 0 {
		// The Firestore adapter sends no request for an empty Get (a fold
		// with no window to visit asks for none): nothing is billed.
		return docs, err
	}
	t.mu.Lock()
	if t.gets == 0 {
		t.first = append([]string(nil), paths...)
	}
	t.gets++
	t.mu.Unlock()
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	o := t.c.opsLocked(t.c.phase)
	o.GetCalls++
	o.Reads += int64(len(paths))
	if err == nil {
		for _, d := range docs {
			if !d.Exists {
				o.ReadsMissing++
			}
		}
	}
	return docs, err
}

func (t *countingTx) Set(d docstore.Doc) error {
	if err := t.Tx.Set(d); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writes = append(t.writes, write{path: d.Path, expires: !d.ExpireAt.IsZero(), bytes: int64(len(d.Path) + len(d.Data) + len(d.Tag))})
	return nil
}

func (t *countingTx) Delete(path string) error {
	if err := t.Tx.Delete(path); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writes = append(t.writes, write{path: path, delete: true})
	return nil
}
