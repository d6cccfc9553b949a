package firestorerules

import (
	"context"
	"errors"

	"github.com/alpinashop/alpipe/internal/docstore"
)

var (
	// ErrNested is returned by RunTx called with the context of a running
	// transaction: the Firestore client refuses it too, and the embedded
	// store would deadlock on its single writer.
	ErrNested = errors.New("docstore: nested transaction")
	// ErrTxDone is returned by a Tx used after its function returned.
	ErrTxDone = errors.New("docstore: transaction used after its function returned")
)

type txKey struct{}

// WithTx marks ctx as belonging to a running transaction.
func WithTx(ctx context.Context) context.Context { return context.WithValue(ctx, txKey{}, true) }

// InTx reports whether ctx belongs to a running transaction.
func InTx(ctx context.Context) bool { return ctx.Value(txKey{}) != nil }

// Rules enforces, for one attempt of a transaction function, what every
// adapter must refuse. The first violation sticks: RunTx fails with it even
// if fn drops the error, as the Firestore client does for read-after-write,
// so that a swallowed error can never commit half of what fn meant to do.
// Rules is not safe for concurrent use; adapters serialise Tx calls.
type Rules struct {
	wrote, done bool
	err         error
}

// Read checks a Get of paths.
func (r *Rules) Read(paths []string) ([]Path, error) {
	if r.done {
		return nil, ErrTxDone
	}
	if r.wrote {
		return nil, r.Fail(docstore.ErrReadAfterWrite)
	}
	ps := make([]Path, len(paths))
	for i, p := range paths {
		pp, err := DocPath(p)
		if err != nil {
			return nil, r.Fail(err)
		}
		ps[i] = pp
	}
	return ps, nil
}

// Set checks a Set of d and returns d as it will be stored.
func (r *Rules) Set(d docstore.Doc) (Path, docstore.Doc, error) {
	if r.done {
		return Path{}, docstore.Doc{}, ErrTxDone
	}
	p, nd, err := CheckDoc(d)
	if err != nil {
		return Path{}, docstore.Doc{}, r.Fail(err)
	}
	r.wrote = true
	return p, nd, nil
}

// Delete checks a Delete of path.
func (r *Rules) Delete(path string) (Path, error) {
	if r.done {
		return Path{}, ErrTxDone
	}
	p, err := DocPath(path)
	if err != nil {
		return Path{}, r.Fail(err)
	}
	r.wrote = true
	return p, nil
}

// Fail records err as the attempt's outcome unless one is already recorded,
// and returns err.
func (r *Rules) Fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}

// End closes the attempt and returns what RunTx must report for it: fn's
// own error, else the first recorded violation, else nil (commit).
func (r *Rules) End(fnErr error) error {
	r.done = true
	if fnErr != nil {
		return fnErr
	}
	return r.err
}
