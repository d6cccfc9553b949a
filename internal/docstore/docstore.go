// Package docstore is the transactional document store that holds the
// pipeline's small, hot state: the ingest ledger (Step 1) and the event-time
// window state (Step 2). Firestore (native mode) is the production backend;
// an embedded single-file store is the local default. Both consumers (ledger
// and stream) speak this one contract, so it lives here with its conformance
// suite (docstoretest) rather than being declared twice.
//
// The contract is deliberately Firestore's, so that the embedded store cannot
// allow what production refuses:
//   - A path alternates collection and document IDs and names a document:
//     "ledger/<id>", "aggregations/<agg>/windows/<w>/shards/<n>". IDs are
//     non-empty, contain no '/', are not "." or "..", and are at most 1,500
//     bytes; callers escape free text with ID.
//   - RunTx runs fn in a serialisable transaction and may run it more than
//     once (on contention), so fn must be idempotent and must not leak
//     side effects outside tx.
//   - Inside a transaction every read happens before the first write; a read
//     after a write fails with ErrReadAfterWrite.
//   - Documents carry an optional ExpireAt (Firestore TTL). Expiry is not
//     enforced on read: an expired document stays visible until a TTL sweep
//     deletes it, so callers compare ExpireAt with their clock themselves.
package docstore

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// Doc is a stored document: a JSON payload plus its expiry time.
type Doc struct {
	Path     string
	Data     []byte    // JSON object
	ExpireAt time.Time // zero: never expires
	Exists   bool      // false for a Get of a missing document
}

// Store is the transactional document store.
type Store interface {
	// RunTx runs fn atomically; see the package comment for the rules.
	RunTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// List returns every document directly inside collection (a path with an
	// odd number of segments), ordered by ID. It is not transactional.
	List(ctx context.Context, collection string) ([]Doc, error)
}

// Tx is one transaction's view of the store.
type Tx interface {
	// Get returns the documents at paths, in order; a missing one has
	// Exists == false.
	Get(paths ...string) ([]Doc, error)
	// Set creates or replaces the document at d.Path.
	Set(d Doc) error
	// Delete removes the document at path; deleting a missing one is not an
	// error.
	Delete(path string) error
}

var (
	// ErrReadAfterWrite is returned by Get after a Set or Delete in the same
	// transaction.
	ErrReadAfterWrite = errors.New("docstore: read after write in a transaction")
	// ErrBadPath is returned for a path that does not name a document (or a
	// collection, for List).
	ErrBadPath = errors.New("docstore: bad path")
)

// ID turns free text (an object name, an order id) into a document ID that
// is safe in a path and stable: the same text always gives the same ID.
func ID(s string) string {
	if s == "" {
		return "%00"
	}
	e := url.PathEscape(s)
	// PathEscape keeps '.', so "." and ".." need their own escape.
	switch e {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return e
}
