// Package firestore is the production docstore: Cloud Firestore in native
// mode through cloud.google.com/go/firestore.
//
// Paths map 1:1 to Firestore document paths. A document holds up to three
// fields: "json", the payload as a string (readable in the console);
// "expire_at", a timestamp set only when the document expires, the field
// to name in each collection group's TTL policy; and "tag", a string set
// only when Doc.Tag is non-empty. Exempt "json" from single-field indexing
// (nothing queries it, and indexing a large string costs write latency)
// and "expire_at" too (TTL does not need the index, and monotonically
// rising timestamps make index hotspots). "tag" must keep its automatic
// single-field index in collection scope: ListTag is an equality query on
// it ordered by document ID, which that index serves with no composite
// index; an exemption would make ListTag fail with FAILED_PRECONDITION.
package firestore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	gfs "cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/internal/firestorerules"
)

var _ docstore.Store = (*Store)(nil)

const (
	fieldJSON     = "json"
	fieldExpireAt = "expire_at"
	fieldTag      = "tag"
)

// Store is a docstore.Store on a Firestore client.
type Store struct {
	client      *gfs.Client
	maxAttempts int
}

// Option configures a Store.
type Option func(*Store)

// WithMaxAttempts sets how many times RunTx tries a transaction that
// Firestore aborts on contention (default: the client's 5).
func WithMaxAttempts(n int) Option { return func(s *Store) { s.maxAttempts = n } }

// New returns a Store on client; the caller keeps ownership of the client.
func New(client *gfs.Client, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("docstore firestore: nil client")
	}
	s := &Store{client: client, maxAttempts: gfs.DefaultTransactionMaxAttempts}
	for _, o := range opts {
		o(s)
	}
	if s.maxAttempts < 1 {
		return nil, fmt.Errorf("docstore firestore: max attempts %d, want at least 1", s.maxAttempts)
	}
	return s, nil
}

// RunTx implements docstore.Store with client.RunTransaction, which
// re-runs fn only when Firestore answers ABORTED (contention, lock
// timeout), up to the configured attempts with backoff; any other error
// ends the transaction. Reads lock pessimistically until commit.
func (s *Store) RunTx(ctx context.Context, fn func(ctx context.Context, tx docstore.Tx) error) error {
	if fn == nil {
		return errors.New("docstore firestore: RunTx: nil function")
	}
	if firestorerules.InTx(ctx) {
		return firestorerules.ErrNested
	}
	// fnFailed tells fn's own error (returned as is, like the embedded
	// store does) from the client's and the commit's (wrapped).
	var fnFailed bool
	err := s.client.RunTransaction(ctx, func(ctx context.Context, ftx *gfs.Transaction) error {
		t := &tx{client: s.client, ftx: ftx}
		err := t.end(fn(firestorerules.WithTx(ctx), t))
		fnFailed = false
		if err != nil && t.aborted != nil {
			// A read lost a lock conflict: answer ABORTED whatever fn made
			// of it, so that the client retries instead of giving up.
			return t.aborted
		}
		fnFailed = err != nil
		return err
	}, gfs.MaxAttempts(s.maxAttempts))
	switch {
	case err == nil:
		return nil
	case fnFailed:
		return err
	case ctx.Err() != nil && isContextCode(err):
		return fmt.Errorf("firestore transaction: %w", ctx.Err())
	}
	return fmt.Errorf("firestore transaction: %w", err)
}

// List implements docstore.Store.
func (s *Store) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	if err := firestorerules.CollectionPath(collection); err != nil {
		return nil, err
	}
	q := s.client.Collection(collection).OrderBy(gfs.DocumentID, gfs.Asc)
	return query(ctx, collection, q, "list "+collection)
}

// ListTag implements docstore.Store with an equality query on the "tag"
// field, billed one read per document returned.
func (s *Store) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	if err := firestorerules.CollectionPath(collection); err != nil {
		return nil, err
	}
	if err := firestorerules.CheckTag(tag, true); err != nil {
		return nil, err
	}
	q := s.client.Collection(collection).Where(fieldTag, "==", tag).OrderBy(gfs.DocumentID, gfs.Asc)
	if limit > 0 {
		q = q.Limit(limit)
	}
	return query(ctx, collection, q, fmt.Sprintf("list %s tagged %.40q", collection, tag))
}

// query runs q over the direct documents of collection.
func query(ctx context.Context, collection string, q gfs.Query, what string) ([]docstore.Doc, error) {
	it := q.Documents(ctx)
	defer it.Stop()
	docs := []docstore.Doc{}
	for {
		snap, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return docs, nil
		}
		if err != nil {
			if ctx.Err() != nil && isContextCode(err) {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		d, err := fromSnapshot(collection+"/"+snap.Ref.ID, snap)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

func isContextCode(err error) bool {
	c := status.Code(err)
	return c == codes.Canceled || c == codes.DeadlineExceeded ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// tx adapts one attempt's *firestore.Transaction.
type tx struct {
	mu      sync.Mutex // the client's Transaction is not safe for concurrent use
	client  *gfs.Client
	ftx     *gfs.Transaction
	rules   firestorerules.Rules
	aborted error
}

var _ docstore.Tx = (*tx)(nil)

func (t *tx) Get(paths ...string) ([]docstore.Doc, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps, err := t.rules.Read(paths)
	if err != nil {
		return nil, err
	}
	docs := make([]docstore.Doc, len(ps))
	if len(ps) == 0 {
		return docs, nil
	}
	// One ref per distinct path: BatchGetDocuments with repeated names is
	// not something to rely on.
	refs := make([]*gfs.DocumentRef, 0, len(ps))
	index := make(map[string]int, len(ps))
	for _, p := range ps {
		if _, ok := index[p.Full]; !ok {
			index[p.Full] = len(refs)
			refs = append(refs, t.client.Doc(p.Full))
		}
	}
	snaps, err := t.ftx.GetAll(refs)
	if err != nil {
		if status.Code(err) == codes.Aborted {
			t.aborted = err
		}
		return nil, t.rules.Fail(fmt.Errorf("get %s: %w", ps[0].Full, err))
	}
	for i, p := range ps {
		snap := snaps[index[p.Full]]
		if !snap.Exists() {
			docs[i] = docstore.Doc{Path: p.Full}
			continue
		}
		if docs[i], err = fromSnapshot(p.Full, snap); err != nil {
			return nil, t.rules.Fail(err)
		}
	}
	return docs, nil
}

func (t *tx) Set(d docstore.Doc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, nd, err := t.rules.Set(d)
	if err != nil {
		return err
	}
	fields := map[string]any{fieldJSON: string(nd.Data)}
	if !nd.ExpireAt.IsZero() {
		fields[fieldExpireAt] = nd.ExpireAt
	}
	if nd.Tag != "" {
		fields[fieldTag] = nd.Tag
	}
	if err := t.ftx.Set(t.client.Doc(p.Full), fields); err != nil {
		return t.rules.Fail(fmt.Errorf("set %s: %w", p.Full, err))
	}
	return nil
}

func (t *tx) Delete(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.rules.Delete(path)
	if err != nil {
		return err
	}
	if err := t.ftx.Delete(t.client.Doc(p.Full)); err != nil {
		return t.rules.Fail(fmt.Errorf("delete %s: %w", p.Full, err))
	}
	return nil
}

func (t *tx) end(fnErr error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rules.End(fnErr)
}

func fromSnapshot(path string, snap *gfs.DocumentSnapshot) (docstore.Doc, error) {
	data := snap.Data()
	js, ok := data[fieldJSON].(string)
	if !ok {
		return docstore.Doc{}, fmt.Errorf("document %s: no string field %q (not written by this store?)", path, fieldJSON)
	}
	d := docstore.Doc{Path: path, Data: []byte(js), Exists: true}
	if v, ok := data[fieldExpireAt]; ok && v != nil {
		ts, ok := v.(time.Time)
		if !ok {
			return docstore.Doc{}, fmt.Errorf("document %s: field %q is %T, want a timestamp", path, fieldExpireAt, v)
		}
		d.ExpireAt = firestorerules.NormTime(ts)
	}
	if v, ok := data[fieldTag]; ok && v != nil {
		tag, ok := v.(string)
		if !ok {
			return docstore.Doc{}, fmt.Errorf("document %s: field %q is %T, want a string", path, fieldTag, v)
		}
		d.Tag = tag
	}
	return d, nil
}
