// Package docstoretest is the conformance suite of docstore.Store: every
// adapter runs it, so the embedded store and Firestore obey one contract.
package docstoretest

import (
	"context"
	"errors"
	"strings"
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

// op is one call on a transaction.
type op func(tx docstore.Tx) error

func setOp(d docstore.Doc) op { return func(tx docstore.Tx) error { return tx.Set(d) } }
func deleteOp(path string) op { return func(tx docstore.Tx) error { return tx.Delete(path) } }
func getOp(paths ...string) op {
	return func(tx docstore.Tx) error { _, err := tx.Get(paths...); return err }
}

// runOps runs ops in order in one transaction, stopping at the first error.
func runOps(ctx context.Context, s docstore.Store, ops ...op) error {
	return s.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error { return runTx(tx, ops...) })
}

// runTx runs ops in order on tx, stopping at the first error.
func runTx(tx docstore.Tx, ops ...op) error {
	for _, o := range ops {
		if err := o(tx); err != nil {
			return err
		}
	}
	return nil
}

// dropped runs ops in one transaction whose fn drops the last op's error,
// as a careless caller would; it returns that error and RunTx's.
func dropped(ctx context.Context, s docstore.Store, ops ...op) (last, txErr error) {
	n := len(ops) - 1
	txErr = runOps(ctx, s, append(ops[:n:n], func(tx docstore.Tx) error {
		last = ops[n](tx)
		return nil
	})...)
	return last, txErr
}

// set commits docs in one transaction.
func set(t *testing.T, s docstore.Store, docs ...docstore.Doc) {
	t.Helper()
	var ops []op
	for _, d := range docs {
		ops = append(ops, setOp(d))
	}
	if err := runOps(t.Context(), s, ops...); err != nil {
		t.Fatalf("set: %v", err)
	}
}

// list lists collection's paths, failing t on error.
func list(t *testing.T, s docstore.Store, collection string) []string {
	t.Helper()
	docs, err := s.List(t.Context(), collection)
	if err != nil {
		t.Fatalf("List(%s): %v", collection, err)
	}
	return pathsOf(docs)
}

func pathsOf(docs []docstore.Doc) []string {
	var ps []string
	for _, d := range docs {
		ps = append(ps, d.Path)
	}
	return ps
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

var badDocPaths = []struct {
	name string
	path string
}{
	{"empty", ""},
	{"collection only", "ledger"},
	{"three segments", "a/b/c"},
	{"leading slash", "/a/b"},
	{"trailing slash", "a/b/"},
	{"empty segment", "a//b/c"},
	{"dot id", "a/."},
	{"dot-dot id", "a/.."},
	{"dot collection", "./b"},
	{"reserved id", "a/__x__"},
	{"reserved collection", "__a__/b"},
	{"id over 1500 bytes", "a/" + strings.Repeat("x", 1501)},
	{"invalid UTF-8", "a/\xff\xfe"},
}

func testPathValidation(t *testing.T, s docstore.Store) {
	for _, tc := range badDocPaths {
		t.Run(tc.name, func(t *testing.T) {
			for name, o := range map[string]op{
				"Get": getOp("ok/doc", tc.path), "Set": setOp(doc(tc.path, `{}`)), "Delete": deleteOp(tc.path),
			} {
				// fn drops the error: the transaction must still fail, so a
				// careless caller cannot commit half its intent.
				opErr, err := dropped(t.Context(), s, o)
				if !errors.Is(opErr, docstore.ErrBadPath) {
					t.Errorf("%s(%.40q) = %v, want ErrBadPath", name, tc.path, opErr)
				}
				if !errors.Is(err, docstore.ErrBadPath) {
					t.Errorf("RunTx after a dropped %s error = %v, want ErrBadPath", name, err)
				}
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		paths := []string{
			"a/b",
			"a/b/c/d",
			"a/" + strings.Repeat("x", 1500),
			"opiniones/señal ñ é",
			"a/_x_",
			"a/__",
			"a/" + docstore.ID("gs://bucket/dir/file.csv#1700000000000000"),
		}
		var docs []docstore.Doc
		for _, p := range paths {
			docs = append(docs, doc(p, `{"p":1}`))
		}
		set(t, s, docs...)
		for i, d := range get(t, s, paths...) {
			if !d.Exists {
				t.Errorf("%.40q not stored", paths[i])
			}
		}
	})
}

func testCollectionValidation(t *testing.T, s docstore.Store) {
	for _, tc := range []struct {
		name string
		path string
	}{
		{"empty", ""},
		{"document path", "a/b"},
		{"leading slash", "/a"},
		{"trailing slash", "a/"},
		{"empty segment", "a//b"},
		{"dot", "."},
		{"reserved", "__a__"},
		{"over 1500 bytes", strings.Repeat("x", 1501)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.List(t.Context(), tc.path); !errors.Is(err, docstore.ErrBadPath) {
				t.Errorf("List(%.40q) = %v, want ErrBadPath", tc.path, err)
			}
		})
	}
}

func testBadData(t *testing.T, s docstore.Store) {
	for _, tc := range []struct {
		name string
		doc  docstore.Doc
	}{
		{"nil data", docstore.Doc{Path: "a/b"}},
		{"not JSON", doc("a/b", `{oops`)},
		{"JSON array", doc("a/b", `[1,2]`)},
		{"JSON string", doc("a/b", `"x"`)},
		{"invalid UTF-8", doc("a/b", "{\"s\":\"\xff\"}")},
		{"over 1 MiB", doc("a/b", `{"s":"`+strings.Repeat("x", 1<<20)+`"}`)},
		{"expiry before year 1", docstore.Doc{Path: "a/b", Data: []byte(`{}`), ExpireAt: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)}},
		{"expiry after year 9999", docstore.Doc{Path: "a/b", Data: []byte(`{}`), ExpireAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setErr, err := dropped(t.Context(), s, setOp(doc("a/other", `{}`)), setOp(tc.doc))
			if setErr == nil || err == nil {
				t.Errorf("Set = %v, RunTx = %v; want both to fail", setErr, err)
			}
			wantExists(t, s, "a/b", false)
			wantExists(t, s, "a/other", false)
		})
	}
	t.Run("large but within limits", func(t *testing.T) {
		big := `{"s":"` + strings.Repeat("x", 900_000) + `"}`
		set(t, s, doc("big/one", big))
		if got := get(t, s, "big/one")[0]; string(got.Data) != big {
			t.Errorf("big document came back with %d bytes, want %d", len(got.Data), len(big))
		}
	})
}
