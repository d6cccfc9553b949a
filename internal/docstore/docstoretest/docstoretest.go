// Package docstoretest is the conformance suite of docstore.Store: every
// adapter runs it, so the embedded store and Firestore obey one contract.
package docstoretest

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	gfs "cloud.google.com/go/firestore"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/firestore"
)

// Run runs the suite. newStore must return an empty store private to the
// calling test (a fresh file, a fresh emulator project), cleaned up by it.
// Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) docstore.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s docstore.Store)
	}{
		{"PathValidation", testPathValidation},
		{"CollectionValidation", testCollectionValidation},
		{"BadData", testBadData},
		{"Writes", testWrites},
		{"ReadAfterWrite", testReadAfterWrite},
		{"List", testList},
		{"ListIsNotTransactional", testListIsNotTransactional},
		{"TagRoundTrip", testTagRoundTrip},
		{"TagMoves", testTagMoves},
		{"TagFailedTx", testTagFailedTx},
		{"TagValidation", testTagValidation},
		{"NestedTx", testNestedTx},
		{"TxAfterReturn", testTxAfterReturn},
		{"CanceledContext", testCanceledContext},
		{"ConcurrentIncrements", testConcurrentIncrements},
		{"WriteSkew", testWriteSkew},
	} {
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

func pathsOf(docs []docstore.Doc) []string {
	var ps []string
	for _, d := range docs {
		ps = append(ps, d.Path)
	}
	return ps
}

// get reads paths in their own transaction.
func get(t *testing.T, s docstore.Store, paths ...string) (docs []docstore.Doc) {
	t.Helper()
	if err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) (err error) {
		docs, err = tx.Get(paths...)
		return err
	}); err != nil {
		t.Fatalf("get %q: %v", paths, err)
	}
	return docs
}

func doc(path, data string) docstore.Doc { return docstore.Doc{Path: path, Data: []byte(data)} }

func tagged(path, data, tag string) docstore.Doc {
	return docstore.Doc{Path: path, Data: []byte(data), Tag: tag}
}

// stored is a document as Get and the lists return it.
func stored(path, data, tag string) docstore.Doc {
	return docstore.Doc{Path: path, Data: []byte(data), Tag: tag, Exists: true}
}

// diffOf compares documents or paths, treating nil and empty alike.
func diffOf(want, got any) string { return cmp.Diff(want, got, cmpopts.EquateEmpty()) }

func wantExists(t *testing.T, s docstore.Store, path string, want bool) {
	t.Helper()
	if got := get(t, s, path)[0].Exists; got != want {
		t.Errorf("%s exists = %v, want %v", path, got, want)
	}
}

// zoned is a fixed instant in a non-UTC zone, with nanoseconds, to check
// that stores keep microseconds and give times back in UTC. It is in the
// past: Get and List must still return a document whose ExpireAt has
// passed, until a TTL sweep deletes it.
func zoned() time.Time {
	return time.Date(2026, 3, 1, 12, 30, 15, 123456789, time.FixedZone("CET", 3600))
}

func testPathValidation(t *testing.T, s docstore.Store) {
	for _, tc := range []struct{ name, path string }{
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, o := range map[string]op{
				"Get": getOp("ok/doc", tc.path), "Set": setOp(doc(tc.path, `{}`)), "Delete": deleteOp(tc.path),
			} {
				// fn drops the error: the transaction must still fail, so a
				// careless caller cannot commit half its intent.
				opErr, err := dropped(t.Context(), s, o)
				if !errors.Is(opErr, docstore.ErrBadPath) || !errors.Is(err, docstore.ErrBadPath) {
					t.Errorf("%s(%.40q) = %v, then RunTx = %v; want ErrBadPath for both", name, tc.path, opErr, err)
				}
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		paths := []string{"a/b", "a/b/c/d", "a/" + strings.Repeat("x", 1500), "opiniones/señal ñ é", "a/_x_", "a/__",
			"a/" + docstore.ID("gs://bucket/dir/file.csv#1700000000000000")}
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
	for _, tc := range []struct{ name, path string }{
		{"empty", ""},
		{"document path", "a/b"},
		{"leading slash", "/a"},
		{"trailing slash", "a/"},
		{"empty segment", "a//b"},
		{"dot", "."},
		{"reserved", "__a__"},
		{"over 1500 bytes", strings.Repeat("x", 1501)},
	} {
		if _, err := s.List(t.Context(), tc.path); !errors.Is(err, docstore.ErrBadPath) {
			t.Errorf("%s: List(%.40q) = %v, want ErrBadPath", tc.name, tc.path, err)
		}
	}
}

// testBadData: Set refuses data Firestore would not store and a tag it
// could not index exactly, failing the transaction even if fn drops the
// error.
func testBadData(t *testing.T, s docstore.Store) {
	expiring := func(at time.Time) docstore.Doc { return docstore.Doc{Path: "a/b", Data: []byte(`{}`), ExpireAt: at} }
	// A document name of exactly Firestore's 6 KiB: with the longest tag
	// its index entry is exactly Firestore's 7.5 KiB.
	x := strings.Repeat("x", 1500)
	long := "a/" + x + "/b/" + x + "/c/" + x + "/d/" + x + "/e/" + strings.Repeat("x", 113)
	for _, tc := range []struct {
		name string
		doc  docstore.Doc // a tagged one must fail with ErrBadTag
	}{
		{"nil data", docstore.Doc{Path: "a/b"}},
		{"not JSON", doc("a/b", `{oops`)},
		{"JSON array", doc("a/b", `[1,2]`)},
		{"JSON string", doc("a/b", `"x"`)},
		{"invalid UTF-8", doc("a/b", "{\"s\":\"\xff\"}")},
		{"over 1 MiB", doc("a/b", `{"s":"`+strings.Repeat("x", 1<<20)+`"}`)},
		{"expiry before year 1", expiring(time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC))},
		{"expiry after year 9999", expiring(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"tag over 1499 bytes", tagged("a/b", `{}`, x)},
		{"multi-byte tag over 1499 bytes", tagged("a/b", `{}`, strings.Repeat("é", 750))},
		{"tag of invalid UTF-8", tagged("a/b", `{}`, "g\xff")},
		{"tag over 1499 bytes, longest path", tagged(long, `{}`, strings.Repeat("t", 1500))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setErr, err := dropped(t.Context(), s, setOp(doc("a/other", `{}`)), setOp(tc.doc))
			accepted := setErr == nil || err == nil
			if tc.doc.Tag != "" {
				accepted = !errors.Is(setErr, docstore.ErrBadTag) || !errors.Is(err, docstore.ErrBadTag)
			}
			if accepted {
				t.Errorf("Set = %v, RunTx = %v; want both to fail (with ErrBadTag if tagged)", setErr, err)
			}
			wantExists(t, s, "a/other", false)
			wantExists(t, s, tc.doc.Path, false)
		})
	}
	t.Run("large but within limits", func(t *testing.T) {
		big := `{"s":"` + strings.Repeat("x", 900_000) + `"}`
		set(t, s, doc("big/one", big))
		if got := get(t, s, "big/one")[0]; string(got.Data) != big {
			t.Errorf("big document came back with %d bytes, want %d", len(got.Data), len(big))
		}
	})
	t.Run("tags at the limits", func(t *testing.T) {
		limits := []docstore.Doc{tagged("tvok/a", `{}`, x[1:]), tagged("tvok/b", `{}`, "x"+strings.Repeat("é", 749)),
			tagged(long, `{}`, strings.Repeat("t", 1499))}
		set(t, s, limits...)
		for _, d := range limits {
			collection := d.Path[:strings.LastIndexByte(d.Path, '/')]
			if diff := diffOf([]string{d.Path}, pathsOf(listTag(t, s, collection, d.Tag))); diff != "" {
				t.Errorf("ListTag(%.20s..., %.10q...) (-want +got):\n%s", collection, d.Tag, diff)
			}
		}
	})
}

// Emulator returns a store on the Firestore emulator in a project of its
// own, so that tests never see each other's documents, that tries a
// contended transaction up to attempts times; it skips t under -short or
// without FIRESTORE_EMULATOR_HOST.
func Emulator(t *testing.T, attempts int) docstore.Store {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: needs the Firestore emulator")
	}
	if os.Getenv("FIRESTORE_EMULATOR_HOST") == "" {
		t.Skip("FIRESTORE_EMULATOR_HOST is unset: start `gcloud emulators firestore start --host-port=127.0.0.1:8681` and export FIRESTORE_EMULATOR_HOST=127.0.0.1:8681")
	}
	client, err := gfs.NewClient(t.Context(), "alpipe-"+strings.ToLower(rand.Text()[:12]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	s, err := firestore.New(client, firestore.WithMaxAttempts(attempts))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
