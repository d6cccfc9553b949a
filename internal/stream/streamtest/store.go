package streamtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// ErrInjected is the failure a Recorder injects.
var ErrInjected = errors.New("streamtest: injected store failure")

// Recorder wraps a store to see what the processor commits: the paths
// written by every committed transaction (a function that ran several times
// counts once, with its last run). It can make deletes of chosen paths fail,
// which aborts their transaction like a crash before the commit, and reads
// of chosen paths or every ListTag fail, as an unreachable store would.
type Recorder struct {
	docstore.Store
	mu         sync.Mutex
	writes     []Write
	failDelete func(path string) bool
	failGet    func(path string) bool
	failTag    bool
	noLeases   bool
	txs        int // committed or not
	attempts   int // runs of transaction functions
	maxRuns    int // most runs of one transaction function
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
		r.writes = append(r.writes, last.paths()...)
	}
	return err
}

// Contention reports the transactions run so far, the runs of their
// functions (more than one each when the store re-ran them on contention),
// and the most runs one transaction needed.
func (r *Recorder) Contention() (txs, runs, maxRuns int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.txs, r.attempts, r.maxRuns
}

// Writes returns how many writes have committed so far; WritesSince lists
// those after a mark.
func (r *Recorder) Writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.writes)
}

// WritesSince returns the writes committed after mark (a Writes value).
func (r *Recorder) WritesSince(mark int) []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Write(nil), r.writes[mark:]...)
}

// writesBesidesLeases are the writes after mark but those of tick leases.
func (r *Recorder) writesBesidesLeases(mark int) []Write {
	var out []Write
	for _, w := range r.WritesSince(mark) {
		if !isLease(w.Path) {
			out = append(out, w)
		}
	}
	return out
}

// Write is one committed Set or Delete.
type Write struct {
	Path   string
	Delete bool
	// Rows is how many rows a set outbox document holds: a tick
	// transaction that emits several panes writes them in one.
	Rows int
}

// outboxRows is how many rows an outbox document's payload holds: those
// under "rows", or one.
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
// fail; nil stops it.
func (r *Recorder) FailDeletes(fail func(path string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failDelete = fail
}

// FailGets makes every read of a path, and every listing of a collection,
// for which fail reports true fail; nil stops it.
func (r *Recorder) FailGets(fail func(path string) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failGet = fail
}

// FailListTag makes every ListTag fail (true) or work (false).
func (r *Recorder) FailListTag(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failTag = on
}

// Heal stops every failure FailDeletes, FailGets and FailListTag started.
func (r *Recorder) Heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failDelete, r.failGet, r.failTag = nil, nil, false
}

// List implements docstore.Store.
func (r *Recorder) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	if r.fails(&r.failGet, collection) {
		return nil, fmt.Errorf("list %s: %w", collection, ErrInjected)
	}
	return r.Store.List(ctx, collection)
}

// ListTag implements docstore.Store.
func (r *Recorder) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	r.mu.Lock()
	fail := r.failTag
	r.mu.Unlock()
	if fail {
		return nil, fmt.Errorf("list %s tag %s: %w", collection, tag, ErrInjected)
	}
	return r.Store.ListTag(ctx, collection, tag, limit)
}

// IgnoreLeases makes tick leases invisible: reads of a lease find nothing
// and writes of one are dropped, so that concurrent ticks all run and only
// the transactions keep them apart.
func (r *Recorder) IgnoreLeases(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noLeases = on
}

func (r *Recorder) ignoresLeases() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noLeases
}

func (r *Recorder) fails(f *func(string) bool, path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return *f != nil && (*f)(path)
}

type recTx struct {
	docstore.Tx
	r  *Recorder
	mu sync.Mutex
	w  []Write
}

func (t *recTx) Get(paths ...string) ([]docstore.Doc, error) {
	for _, p := range paths {
		if t.r.fails(&t.r.failGet, p) {
			return nil, fmt.Errorf("get %s: %w", p, ErrInjected)
		}
	}
	docs, err := t.Tx.Get(paths...)
	if err != nil || !t.r.ignoresLeases() {
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
	if isLease(d.Path) && t.r.ignoresLeases() {
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
	if isLease(path) && t.r.ignoresLeases() {
		return nil
	}
	if err := t.Tx.Delete(path); err != nil {
		return err
	}
	t.add(Write{Path: path, Delete: true})
	return nil
}

func (t *recTx) add(w Write) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w = append(t.w, w)
}

func (t *recTx) paths() []Write {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w
}

// isOutbox reports whether path is an outbox document.
func isOutbox(path string) bool { return strings.Contains(path, "/outbox/") }

// isLease reports whether path is a tick lease.
func isLease(path string) bool { return strings.HasSuffix(path, "/control/lease") }

var _ docstore.Store = (*Recorder)(nil)
