// Package docstoretest is the conformance suite of docstore.Store: every
// adapter runs it, so the embedded store and Firestore obey one contract.
package docstoretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// Run runs the suite. newStore must return an empty store private to the
// calling test (a fresh file, a fresh emulator project), cleaned up by it.
// Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) docstore.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s docstore.Store)
	}{
		{"PathValidation", testPathValidation},
		{"CollectionValidation", testCollectionValidation},
		{"BadData", testBadData},
		{"RoundTrip", testRoundTrip},
		{"GetOrderAndMissing", testGetOrderAndMissing},
		{"SetReplaces", testSetReplaces},
		{"Delete", testDelete},
		{"LastWriteWins", testLastWriteWins},
		{"ReadAfterWrite", testReadAfterWrite},
		{"ErrorRollsBack", testErrorRollsBack},
		{"List", testList},
		{"ListIsNotTransactional", testListIsNotTransactional},
		{"ExpiredStillVisible", testExpiredStillVisible},
		{"TagRoundTrip", testTagRoundTrip},
		{"TagMoves", testTagMoves},
		{"TagFailedTx", testTagFailedTx},
		{"TagValidation", testTagValidation},
		{"ListTagIsNotTransactional", testListTagIsNotTransactional},
		{"NestedTx", testNestedTx},
		{"TxAfterReturn", testTxAfterReturn},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentIncrements", testConcurrentIncrements},
		{"WriteSkew", testWriteSkew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newStore(t))
		})
	}
}

var errBoom = errors.New("boom")

// set commits docs in one transaction.
func set(t *testing.T, s docstore.Store, docs ...docstore.Doc) {
	t.Helper()
	err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		for _, d := range docs {
			if err := tx.Set(d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
}

// get reads paths in their own transaction.
func get(t *testing.T, s docstore.Store, paths ...string) []docstore.Doc {
	t.Helper()
	var docs []docstore.Doc
	err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		var err error
		docs, err = tx.Get(paths...)
		return err
	})
	if err != nil {
		t.Fatalf("get %q: %v", paths, err)
	}
	return docs
}

func doc(path, data string) docstore.Doc {
	return docstore.Doc{Path: path, Data: []byte(data)}
}

// diffDocs compares docs, treating nil and empty Data alike and times by
// instant.
func diffDocs(want, got []docstore.Doc) string {
	return cmp.Diff(want, got, cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) }))
}

func wantExists(t *testing.T, s docstore.Store, path string, want bool) {
	t.Helper()
	if got := get(t, s, path)[0].Exists; got != want {
		t.Errorf("%s exists = %v, want %v", path, got, want)
	}
}

// utc returns a fixed instant in a non-UTC zone, with nanoseconds, to
// check that stores keep microseconds and give times back in UTC.
func zoned() time.Time {
	return time.Date(2026, 3, 1, 12, 30, 15, 123456789, time.FixedZone("CET", 3600))
}
