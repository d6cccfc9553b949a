package docstoretest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

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
			ops := []struct {
				name string
				op   func(tx docstore.Tx) error
			}{
				{"Get", func(tx docstore.Tx) error { _, err := tx.Get("ok/doc", tc.path); return err }},
				{"Set", func(tx docstore.Tx) error { return tx.Set(doc(tc.path, `{}`)) }},
				{"Delete", func(tx docstore.Tx) error { return tx.Delete(tc.path) }},
			}
			for _, op := range ops {
				var opErr error
				// fn drops the error: the transaction must still fail, so a
				// careless caller cannot commit half its intent.
				err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
					opErr = op.op(tx)
					return nil
				})
				if !errors.Is(opErr, docstore.ErrBadPath) {
					t.Errorf("%s(%.40q) = %v, want ErrBadPath", op.name, tc.path, opErr)
				}
				if !errors.Is(err, docstore.ErrBadPath) {
					t.Errorf("RunTx after a dropped %s error = %v, want ErrBadPath", op.name, err)
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
			var setErr error
			err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
				if err := tx.Set(doc("a/other", `{}`)); err != nil {
					return err
				}
				setErr = tx.Set(tc.doc)
				return nil
			})
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
