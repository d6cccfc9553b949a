// Package firestore is the production docstore: Cloud Firestore in native
// mode through cloud.google.com/go/firestore.
//
// Paths map 1:1 to Firestore document paths. A document holds up to three
// fields: "json", the payload as a string (readable in the console);
// "expire_at", a timestamp set only when the document expires, the field
// each collection group's TTL policy names; and "tag", set only when
// Doc.Tag is non-empty. Exempt "json" (nothing queries it, and indexing a
// large string costs write latency) and "expire_at" (TTL needs no index,
// and rising timestamps make index hotspots) from single-field indexing.
// "tag" must keep its automatic single-field index in collection scope:
// ListTag is an equality query on it ordered by document ID, which that
// index serves; an exemption would make ListTag fail with
// FAILED_PRECONDITION.
package firestore

import (
	"context"
	"errors"
	"fmt"
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
	s := &Store{client: client, maxAttempts: gfs.DefaultTransactionMaxAttempts}
	for _, o := range opts {
		o(s)
	}
	switch {
	case client == nil:
		return nil, errors.New("docstore firestore: nil client")
	case s.maxAttempts < 1:
		return nil, fmt.Errorf("docstore firestore: max attempts %d, want at least 1", s.maxAttempts)
	}
	return s, nil
}

// RunTx implements docstore.Store with client.RunTransaction, which
// re-runs fn only when Firestore answers ABORTED (contention, lock
// timeout), up to the configured attempts with backoff; any other error
// ends the transaction. Reads lock pessimistically until commit.
func (s *Store) RunTx(ctx context.Context, fn func(ctx context.Context, tx docstore.Tx) error) error {
	switch {
	case fn == nil:
		return errors.New("docstore firestore: RunTx: nil function")
	case firestorerules.InTx(ctx):
		return firestorerules.ErrNested
	}
	// fnFailed tells fn's own error (returned as is) from the client's and
	// the commit's (wrapped).
	var fnFailed bool
	err := s.client.RunTransaction(ctx, func(ctx context.Context, ftx *gfs.Transaction) error {
		t := &tx{client: s.client, ftx: ftx}
		checked := &firestorerules.Tx{B: t}
		err := checked.End(fn(firestorerules.WithTx(ctx), checked))
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
	return query(ctx, collection, s.client.Collection(collection).OrderBy(gfs.DocumentID, gfs.Asc), "list "+collection)
}

// ListTag implements docstore.Store with an equality query on "tag".
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
	client  *gfs.Client
	ftx     *gfs.Transaction
	aborted error
}

func (t *tx) Get(ps []firestorerules.Path) ([]docstore.Doc, error) {
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
		return nil, fmt.Errorf("get %s: %w", ps[0].Full, err)
	}
	for i, p := range ps {
		docs[i] = docstore.Doc{Path: p.Full}
		if snap := snaps[index[p.Full]]; snap.Exists() {
			if docs[i], err = fromSnapshot(p.Full, snap); err != nil {
				return nil, err
			}
		}
	}
	return docs, nil
}

func (t *tx) Set(p firestorerules.Path, d docstore.Doc) error {
	fields := map[string]any{fieldJSON: string(d.Data)}
	if !d.ExpireAt.IsZero() {
		fields[fieldExpireAt] = d.ExpireAt
	}
	if d.Tag != "" {
		fields[fieldTag] = d.Tag
	}
	if err := t.ftx.Set(t.client.Doc(p.Full), fields); err != nil {
		return fmt.Errorf("set %s: %w", p.Full, err)
	}
	return nil
}

func (t *tx) Delete(p firestorerules.Path) error {
	if err := t.ftx.Delete(t.client.Doc(p.Full)); err != nil {
		return fmt.Errorf("delete %s: %w", p.Full, err)
	}
	return nil
}

func fromSnapshot(path string, snap *gfs.DocumentSnapshot) (docstore.Doc, error) {
	data := snap.Data()
	js, ok := data[fieldJSON].(string)
	if !ok {
		return docstore.Doc{}, fmt.Errorf("document %s: no string field %q (not written by this store?)", path, fieldJSON)
	}
	ts, okTS := data[fieldExpireAt].(time.Time)
	tag, okTag := data[fieldTag].(string)
	switch {
	case data[fieldExpireAt] != nil && !okTS:
		return docstore.Doc{}, fmt.Errorf("document %s: field %q is %T, want a timestamp", path, fieldExpireAt, data[fieldExpireAt])
	case data[fieldTag] != nil && !okTag:
		return docstore.Doc{}, fmt.Errorf("document %s: field %q is %T, want a string", path, fieldTag, data[fieldTag])
	}
	return docstore.Doc{Path: path, Data: []byte(js), ExpireAt: firestorerules.NormTime(ts), Tag: tag, Exists: true}, nil
}
