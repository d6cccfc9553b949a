package docstoretest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/docstore"
)

func testList(t *testing.T, s docstore.Store) {
	// IDs chosen so that byte order differs from naive expectations:
	// digits, upper before lower case, '%' escapes, non-ASCII last.
	ids := []string{"b", "a", "B", "é", "_", "%2F", "~", "a b", "zz", "Z", "0", "10", "9", "a-b"}
	var docs []docstore.Doc
	for _, id := range ids {
		docs = append(docs, doc("items/"+id, `{"id":1}`))
	}
	docs = append(docs,
		doc("items/a/sub/deep", `{}`),   // in a subcollection: not a direct child
		doc("items2/a", `{}`),           // sibling collection sharing the prefix
		doc("other/x/items/q", `{}`),    // same collection ID elsewhere
		doc("itemsa/z", `{}`),           // longer collection name
		doc("items/a/sub2/x/y/z", `{}`), // deeper still
	)
	docs[0].ExpireAt = zoned()
	set(t, s, docs...)

	want := append([]string(nil), ids...)
	sort.Strings(want) // byte order, as Firestore orders document IDs
	got, err := s.List(t.Context(), "items")
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, d := range got {
		gotIDs = append(gotIDs, d.Path[len("items/"):])
		if !d.Exists || string(d.Data) != `{"id":1}` {
			t.Errorf("List returned %+v, want an existing document with its data", d)
		}
		if d.Path == "items/b" && !d.ExpireAt.Equal(zoned().Truncate(time.Microsecond)) {
			t.Errorf("List lost ExpireAt of items/b: %v", d.ExpireAt)
		}
	}
	if diff := diffStrings(want, gotIDs); diff != "" {
		t.Errorf("List(items) IDs (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name       string
		collection string
		want       []string
	}{
		{"subcollection", "items/a/sub", []string{"items/a/sub/deep"}},
		{"same ID elsewhere", "other/x/items", []string{"other/x/items/q"}},
		{"deep", "items/a/sub2/x/y", []string{"items/a/sub2/x/y/z"}},
		{"empty", "nothing", nil},
		{"parent of a subcollection only", "items/a/sub2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.List(t.Context(), tc.collection)
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, d := range got {
				paths = append(paths, d.Path)
			}
			if diff := diffStrings(tc.want, paths); diff != "" {
				t.Errorf("List(%s) (-want +got):\n%s", tc.collection, diff)
			}
		})
	}
}

// testListIsNotTransactional: List inside fn sees committed state, not the
// transaction's pending writes.
func testListIsNotTransactional(t *testing.T, s docstore.Store) {
	set(t, s, doc("lt/a", `{}`))
	var n int
	err := s.RunTx(t.Context(), func(ctx context.Context, tx docstore.Tx) error {
		if _, err := tx.Get("lt/a"); err != nil {
			return err
		}
		if err := tx.Set(doc("lt/b", `{}`)); err != nil {
			return err
		}
		docs, err := s.List(ctx, "lt")
		n = len(docs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("List inside the transaction saw %d documents, want 1 (committed only)", n)
	}
	wantExists(t, s, "lt/b", true)
}

func diffStrings(want, got []string) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}
