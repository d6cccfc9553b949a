package streamtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// ErrInjected is the failure a Recorder injects.
var ErrInjected = errors.New("streamtest: injected store failure")

// Recorder wraps a store to see the writes of every committed transaction
// (its last run) and what they cost. It can make writes or deletes of chosen
// paths fail, which aborts their transaction like a crash before the commit,
// and reads of chosen paths or every ListTag fail, as an unreachable store
// would.
type Recorder struct {
	docstore.Store
	guard
	writes     []Write
	failSet    func(path string) bool
	failDelete func(path string) bool
	failGet    func(path string) bool
	failTag    atomic.Bool
	noLeases   atomic.Bool
	txs        int // committed or not
	attempts   int // runs of transaction functions
	maxRuns    int // most runs of one transaction function
	cost       Cost
}

// Cost is what Firestore bills: Reads and Writes in committed transactions,
// Queries (List, ListTag; at least one read each) and the documents they
// Listed.
type Cost struct{ Transactions, Reads, Writes, Queries, Listed int }

// TakeCost returns the cost since the last call.
func (r *Recorder) TakeCost() (c Cost) {
	r.locked(func() { c, r.cost = r.cost, Cost{} })
	return c
}

func (r *Recorder) queried(docs []docstore.Doc) {
	r.locked(func() { r.cost.Queries, r.cost.Listed = r.cost.Queries+1, r.cost.Listed+len(docs) })
}

// NewRecorder wraps s.
func NewRecorder(s docstore.Store) *Recorder { return &Recorder{Store: s} }

// RunTx implements docstore.Store.
func (r *Recorder) RunTx(ctx context.Context, fn func(ctx context.Context, tx docstore.Tx) error) error {
	var last *recTx
	runs := 0
	err := r.Store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		runs++
		last = &recTx{Tx: tx, r: r}
		return fn(ctx, last)
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.txs++
	r.attempts += runs
	r.maxRuns = max(r.maxRuns, runs)
	if err == nil && last != nil {
		r.writes = append(r.writes, last.w...)
		r.cost.Transactions++
		r.cost.Reads += last.reads
		r.cost.Writes += len(last.w)
	}
	return err
}

// guard is the mutex of Recorder, recTx and Sink; locked runs f holding it.
type guard struct{ mu sync.Mutex }

func (g *guard) locked(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
}

// Contention reports the transactions run so far, the runs of their
// functions, and the most runs one transaction needed.
func (r *Recorder) Contention() (txs, runs, maxRuns int) {
	r.locked(func() { txs, runs, maxRuns = r.txs, r.attempts, r.maxRuns })
	return txs, runs, maxRuns
}

// Writes returns how many writes have committed so far: a mark for
// WritesSince.
func (r *Recorder) Writes() (n int) {
	r.locked(func() { n = len(r.writes) })
	return n
}

func (r *Recorder) WritesSince(mark int) (ws []Write) {
	r.locked(func() { ws = slices.Clone(r.writes[mark:]) })
	return ws
}

// writesBesidesLeases are the writes after mark but those of tick leases.
func (r *Recorder) writesBesidesLeases(mark int) []Write {
	return slices.DeleteFunc(r.WritesSince(mark), func(w Write) bool { return isLease(w.Path) })
}

// Write is one committed Set or Delete.
type Write struct {
	Path   string
	Delete bool
	Rows   int // of a set outbox document
}

func outboxRows(data []byte) int {
	var v struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if json.Unmarshal(data, &v) == nil && len(v.Rows) > 0 {
		return len(v.Rows)
	}
	return 1
}

func (w Write) String() string {
	if w.Delete {
		return "delete " + w.Path
	}
	return "set " + w.Path
}

// FailDeletes makes every Delete of a path for which fail reports true
// fail; nil stops it. FailSets does the same for Set.
func (r *Recorder) FailDeletes(fail func(path string) bool) { r.locked(func() { r.failDelete = fail }) }

func (r *Recorder) FailSets(fail func(path string) bool) { r.locked(func() { r.failSet = fail }) }

// FailGets makes every read of a path, and every listing of a collection,
// for which fail reports true fail; nil stops it.
func (r *Recorder) FailGets(fail func(path string) bool) { r.locked(func() { r.failGet = fail }) }

func (r *Recorder) FailListTag(on bool) { r.failTag.Store(on) }

// Heal stops every failure FailSets, FailDeletes, FailGets and FailListTag
// started.
func (r *Recorder) Heal() {
	r.locked(func() { r.failSet, r.failDelete, r.failGet = nil, nil, nil })
	r.failTag.Store(false)
}

// List implements docstore.Store.
func (r *Recorder) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	if r.fails(&r.failGet, collection) {
		return nil, fmt.Errorf("list %s: %w", collection, ErrInjected)
	}
	docs, err := r.Store.List(ctx, collection)
	r.queried(docs)
	return docs, err
}

// ListTag implements docstore.Store.
func (r *Recorder) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	if r.failTag.Load() {
		return nil, fmt.Errorf("list %s tag %s: %w", collection, tag, ErrInjected)
	}
	docs, err := r.Store.ListTag(ctx, collection, tag, limit)
	r.queried(docs)
	return docs, err
}

// IgnoreLeases makes tick leases invisible: reads of a lease find nothing
// and writes of one are dropped, so that concurrent ticks all run and only
// the transactions keep them apart.
func (r *Recorder) IgnoreLeases(on bool) { r.noLeases.Store(on) }

func (r *Recorder) fails(f *func(string) bool, path string) (fail bool) {
	r.locked(func() { fail = *f != nil && (*f)(path) })
	return fail
}

type recTx struct {
	docstore.Tx
	guard
	r     *Recorder
	w     []Write
	reads int
}

func (t *recTx) Get(paths ...string) ([]docstore.Doc, error) {
	for _, p := range paths {
		if t.r.fails(&t.r.failGet, p) {
			return nil, fmt.Errorf("get %s: %w", p, ErrInjected)
		}
	}
	t.locked(func() { t.reads += len(paths) })
	docs, err := t.Tx.Get(paths...)
	if err != nil || !t.r.noLeases.Load() {
		return docs, err
	}
	for i, p := range paths {
		if isLease(p) {
			docs[i] = docstore.Doc{Path: p}
		}
	}
	return docs, nil
}

func (t *recTx) Set(d docstore.Doc) error {
	if t.r.fails(&t.r.failSet, d.Path) {
		return fmt.Errorf("set %s: %w", d.Path, ErrInjected)
	}
	if isLease(d.Path) && t.r.noLeases.Load() {
		return nil
	}
	if err := t.Tx.Set(d); err != nil {
		return err
	}
	w := Write{Path: d.Path}
	if isOutbox(d.Path) {
		w.Rows = outboxRows(d.Data)
	}
	t.add(w)
	return nil
}

func (t *recTx) Delete(path string) error {
	if t.r.fails(&t.r.failDelete, path) {
		return ErrInjected
	}
	if isLease(path) && t.r.noLeases.Load() {
		return nil
	}
	if err := t.Tx.Delete(path); err != nil {
		return err
	}
	t.add(Write{Path: path, Delete: true})
	return nil
}

func (t *recTx) add(w Write) { t.locked(func() { t.w = append(t.w, w) }) }

func isOutbox(path string) bool { return strings.Contains(path, "/outbox/") }

func isLease(path string) bool { return strings.HasSuffix(path, "/control/lease") }

var _ docstore.Store = (*Recorder)(nil)
