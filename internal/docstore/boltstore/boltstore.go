// Package boltstore is the embedded docstore: one bbolt file in the local
// data folder, enforcing the same contract as Firestore.
//
// Durability: every commit is fsynced (NoSync is never set) before RunTx
// returns, so a caller that answers 2xx after RunTx has durable state. An
// fsync costs about 1 ms, which would cap one-at-a-time commits near
// 1,000/s; instead a single committer goroutine runs every transaction
// queued while the previous commit was syncing in one bbolt write
// transaction (group commit), so throughput grows with concurrent callers
// at no added latency for a lone one. Transactions are serialised, so fn
// never re-runs on contention as it may on Firestore.
package boltstore

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/internal/firestorerules"
)

var _ docstore.Store = (*Store)(nil)

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("boltstore: closed")

const (
	// maxBatch bounds how many queued transactions share one commit, so
	// one slow function delays a bounded number of others.
	maxBatch = 256
	// lockTimeout: a second process opening the same file (a CLI next to a
	// running server) gets an error instead of hanging.
	lockTimeout = 2 * time.Second
)

// Store is a docstore.Store in one bbolt file.
type Store struct {
	db   *bolt.DB
	path string

	mu     sync.RWMutex // guards closed against RunTx enqueueing while Close drains
	closed bool

	reqs    chan *request
	stop    chan struct{}
	stopped chan struct{}
}

// Open opens (creating if needed) the store in the file at path.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open docstore %s: file is locked by another process", path)
	}
	if err == nil {
		if err = db.Update(initLayout); err != nil {
			db.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open docstore %s: %w", path, err)
	}
	s := &Store{db: db, path: path, reqs: make(chan *request, maxBatch), stop: make(chan struct{}), stopped: make(chan struct{})}
	go s.commitLoop()
	return s, nil
}

// Close waits for queued transactions to commit, then closes the file.
// It must not be called from inside a transaction function.
func (s *Store) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	close(s.stop)
	<-s.stopped
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close docstore %s: %w", s.path, err)
	}
	return nil
}

// Request states: the committer and an impatient caller race to move a
// queued request on, so exactly one of them decides its fate.
const (
	queued int32 = iota
	taken
	abandoned
)

type request struct {
	ctx   context.Context
	fn    func(context.Context, docstore.Tx) error
	state atomic.Int32
	done  chan result // buffered: the committer never blocks on it
}

type result struct {
	err      error
	panicVal any // non-nil when fn panicked: recover never returns nil since Go 1.21
	stack    []byte
}

// RunTx implements docstore.Store.
func (s *Store) RunTx(ctx context.Context, fn func(ctx context.Context, tx docstore.Tx) error) error {
	switch {
	case fn == nil:
		return errors.New("boltstore: RunTx: nil function")
	case firestorerules.InTx(ctx):
		return firestorerules.ErrNested
	case ctx.Err() != nil:
		return ctx.Err()
	}
	r := &request{ctx: ctx, fn: fn, done: make(chan result, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.reqs <- r:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	var res result
	select {
	case res = <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		res = <-r.done // already running: its outcome is the answer
	}
	if res.panicVal != nil {
		// Re-raised in the caller's goroutine, with fn's stack from the
		// committer's.
		if err, ok := res.panicVal.(error); ok {
			panic(fmt.Errorf("%w [panic in transaction function]\n%s", err, res.stack))
		}
		panic(fmt.Sprintf("%v [panic in transaction function]\n%s", res.panicVal, res.stack))
	}
	return res.err
}

func (s *Store) commitLoop() {
	defer close(s.stopped)
	batch := make([]*request, 0, maxBatch)
	for {
		select {
		case r := <-s.reqs:
			batch = append(batch[:0], r)
		case <-s.stop:
			// No RunTx is in flight any more: what is queued was accepted,
			// so run it before leaving.
			for {
				select {
				case r := <-s.reqs:
					s.runBatch([]*request{r})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		s.runBatch(batch)
		clear(batch)
	}
}

// runBatch runs the functions one after the other in one bbolt write
// transaction. Each function's writes are buffered and applied only if it
// succeeds, so a failing function leaves nothing behind and the others
// still commit; the next function reads what the previous one wrote, which
// is the serial order.
func (s *Store) runBatch(batch []*request) {
	results := make([]result, len(batch))
	ran := make([]bool, len(batch))
	err := s.db.Update(func(btx *bolt.Tx) error {
		bs := bucketsOf(btx)
		for i, r := range batch {
			if !r.state.CompareAndSwap(queued, taken) {
				continue
			}
			ran[i] = true
			t := &tx{bs: bs}
			if results[i] = call(r, &firestorerules.Tx{B: t}); results[i].err != nil || results[i].panicVal != nil {
				continue
			}
			if err := r.ctx.Err(); err != nil {
				// The caller gave up; Firestore's commit would fail too.
				results[i] = result{err: err}
				continue
			}
			if err := t.apply(); err != nil {
				return err // partly applied: the whole bbolt transaction must go
			}
		}
		return nil
	})
	for i, r := range batch {
		if !ran[i] {
			continue
		}
		if err != nil && results[i].err == nil && results[i].panicVal == nil {
			results[i].err = fmt.Errorf("commit docstore %s: %w", s.path, err)
		}
		r.done <- results[i]
	}
}

func call(r *request, t *firestorerules.Tx) (res result) {
	if err := r.ctx.Err(); err != nil {
		return result{err: err}
	}
	defer func() {
		if p := recover(); p != nil {
			t.End(nil)
			res = result{panicVal: p, stack: debug.Stack()}
		}
	}()
	return result{err: t.End(r.fn(firestorerules.WithTx(r.ctx), t))}
}

// List implements docstore.Store. It reads the last committed state.
func (s *Store) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	if err := firestorerules.CollectionPath(collection); err != nil {
		return nil, err
	}
	return s.view(ctx, "list "+collection, func(btx *bolt.Tx) ([]docstore.Doc, error) {
		return list(btx.Bucket(bucketDocs), collection)
	})
}

// ListTag implements docstore.Store through the tag index: it reads the
// documents returned, never the rest of the collection.
func (s *Store) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	if err := firestorerules.CollectionPath(collection); err != nil {
		return nil, err
	}
	if err := firestorerules.CheckTag(tag, true); err != nil {
		return nil, err
	}
	return s.view(ctx, fmt.Sprintf("list %s tagged %.40q", collection, tag), func(btx *bolt.Tx) ([]docstore.Doc, error) {
		return listTag(bucketsOf(btx), collection, tag, limit)
	})
}

// view runs read over the last committed state; what names it in errors.
func (s *Store) view(ctx context.Context, what string, read func(*bolt.Tx) ([]docstore.Doc, error)) ([]docstore.Doc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var docs []docstore.Doc
	err := s.db.View(func(btx *bolt.Tx) (err error) {
		docs, err = read(btx)
		return err
	})
	switch {
	case errors.Is(err, bolterrors.ErrDatabaseNotOpen):
		return nil, ErrClosed
	case err != nil:
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return docs, nil
}

// tx buffers its writes until fn returns: reads see the state before the
// transaction (reads come first anyway), and a failed fn leaves nothing in
// the shared bbolt transaction.
type tx struct {
	bs     buckets
	writes []write
}

type write struct {
	collection, id, tag string
	val                 []byte // nil: delete
}

func (t *tx) Get(ps []firestorerules.Path) ([]docstore.Doc, error) {
	docs := make([]docstore.Doc, len(ps))
	for i, p := range ps {
		docs[i] = docstore.Doc{Path: p.Full}
		if v := t.bs.docs.Get(docKey(p.Collection, p.ID)); v != nil {
			var err error
			if docs[i], err = decode(p.Full, v); err != nil {
				return nil, err
			}
		}
	}
	return docs, nil
}

func (t *tx) Set(p firestorerules.Path, d docstore.Doc) error {
	t.writes = append(t.writes, write{collection: p.Collection, id: p.ID, tag: d.Tag, val: encode(d)})
	return nil
}

func (t *tx) Delete(p firestorerules.Path) error {
	t.writes = append(t.writes, write{collection: p.Collection, id: p.ID})
	return nil
}

// apply writes in order, so the last write to a document wins, as in a
// Firestore commit; each write moves the document's tag index key with it.
func (t *tx) apply() error {
	for _, w := range t.writes {
		err := t.bs.remove(w.collection, w.id)
		if err == nil && w.val != nil {
			err = t.bs.put(w.collection, w.id, w.tag, w.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
