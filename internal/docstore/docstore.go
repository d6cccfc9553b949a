// Package docstore is the transactional document store that holds the
// pipeline's small, hot state: the ingest ledger and the event-time window
// state. Firestore (native mode) is the production backend, an embedded
// single-file store (boltstore) the local default; both pass the
// conformance suite docstoretest.Run.
//
// The contract is Firestore's, so that the embedded store cannot allow what
// production refuses (limits checked against the gcloud emulator):
//   - A path alternates collection and document IDs and names a document:
//     "ledger/<id>", "aggregations/<agg>/windows/<w>/shards/<n>". IDs are
//     non-empty valid UTF-8, contain no '/', are not "." or "..", do not
//     match __.*__ (reserved), and are at most 1,500 bytes; a document name
//     is at most 6 KiB. Callers escape free text with ID.
//   - Data is a JSON object of at most 1 MiB - 89 bytes (Firestore's limit
//     on the string field that holds it). ExpireAt is kept to the
//     microsecond and read back in UTC.
//   - RunTx runs fn in a serialisable transaction and may run it more than
//     once (on contention), so fn must be idempotent and must not leak
//     side effects outside tx. fn's own error is returned as is.
//   - Inside a transaction every read happens before the first write; a read
//     after a write fails with ErrReadAfterWrite. Several writes to one
//     document apply in order (the last wins).
//   - A broken rule (bad path, bad data, bad tag, read after write) fails
//     RunTx even if fn drops the error, so nothing is half-committed.
//   - RunTx with the context of a running transaction fails (no nesting);
//     fn must not wait for another transaction of the same store. List and
//     ListTag inside fn read committed state, not the transaction's writes.
//   - A Tag is an indexed label that ListTag finds by equality (Firestore: a
//     string field with its automatic single-field index): valid UTF-8 of
//     at most 1,499 bytes, as Firestore's 1,500-byte limit on an indexed
//     string counts its bytes plus one and refuses a longer value in a
//     query. Empty means none.
//   - Expiry (Firestore TTL) is not enforced on read: an expired document
//     stays visible until a TTL sweep deletes it, so callers compare
//     ExpireAt with their clock themselves.
package docstore

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// Doc is a stored document: a JSON payload plus its expiry time and tag.
type Doc struct {
	Path     string
	Data     []byte    // JSON object
	ExpireAt time.Time // zero: never expires
	Tag      string    // indexed label for ListTag; empty: none
	Exists   bool      // false for a Get of a missing document
}

// Store is the transactional document store.
type Store interface {
	// RunTx runs fn atomically; see the package comment for the rules.
	RunTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// List returns every document directly inside collection (a path with an
	// odd number of segments), ordered by ID. It is not transactional.
	List(ctx context.Context, collection string) ([]Doc, error)
	// ListTag is List of the documents whose Tag equals tag (non-empty).
	// On Firestore it is an equality query billed one read per document
	// returned (one for none), so callers keep tags selective: a tag names
	// a closed batch of documents, not a category that grows without bound.
	// limit > 0 returns at most the first limit documents (the cheap way to
	// ask whether a tag has any); <= 0, all.
	ListTag(ctx context.Context, collection, tag string, limit int) ([]Doc, error)
}

// Tx is one transaction's view of the store.
type Tx interface {
	// Get returns the documents at paths, in order; a missing one has
	// Exists == false.
	Get(paths ...string) ([]Doc, error)
	// Set creates or replaces the document at d.Path.
	Set(d Doc) error
	// Delete removes the document at path, if any.
	Delete(path string) error
}

var (
	// ErrReadAfterWrite is returned by Get after a Set or Delete in the same
	// transaction.
	ErrReadAfterWrite = errors.New("docstore: read after write in a transaction")
	// ErrBadPath is returned for a path that does not name a document (or a
	// collection, for List).
	ErrBadPath = errors.New("docstore: bad path")
	// ErrBadTag is returned for an invalid Doc.Tag, and for an empty or
	// invalid tag given to ListTag.
	ErrBadTag = errors.New("docstore: bad tag")
)

// ID turns free text (an object name, an order id) into a document ID that
// is safe in a path and stable. It does not bound length (escaped non-ASCII
// text triples in size) nor avoid the reserved form __x__: text that may
// be long or start and end with "__" needs more (see ledger's docID).
func ID(s string) string {
	switch e := url.PathEscape(s); e {
	case "":
		return "%00"
	case ".": // PathEscape keeps '.'
		return "%2E"
	case "..":
		return "%2E%2E"
	default:
		return e
	}
}
