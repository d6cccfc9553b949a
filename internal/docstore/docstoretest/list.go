package docstoretest

import (
	"context"
	"errors"
	"sort"
	"strings"
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
			if diff := diffStrings(tc.want, list(t, s, tc.collection)); diff != "" {
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
		if err := runTx(tx, getOp("lt/a"), setOp(doc("lt/b", `{}`))); err != nil {
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

func tagged(path, data, tag string) docstore.Doc {
	return docstore.Doc{Path: path, Data: []byte(data), Tag: tag}
}

// listTag lists collection's documents tagged tag, failing t on error.
func listTag(t *testing.T, s docstore.Store, collection, tag string) []docstore.Doc {
	t.Helper()
	docs, err := s.ListTag(t.Context(), collection, tag, 0)
	if err != nil {
		t.Fatalf("ListTag(%s, %.40q): %v", collection, tag, err)
	}
	return docs
}

// testTagRoundTrip: Get, List and ListTag give the tag back, and ListTag
// finds exactly the collection's direct documents with that exact tag,
// ordered by ID.
func testTagRoundTrip(t *testing.T, s docstore.Store) {
	exp := docstore.Doc{Path: "tg/b", Data: []byte(`{"v":"b"}`), Tag: "g1", ExpireAt: zoned()}
	set(t, s,
		exp,
		// IDs whose byte order differs from naive expectations.
		tagged("tg/a", `{"v":"a"}`, "g1"),
		tagged("tg/B", `{"v":"B"}`, "g1"),
		tagged("tg/é", `{"v":"é"}`, "g1"),
		tagged("tg/10", `{"v":"10"}`, "g1"),
		tagged("tg/9", `{"v":"9"}`, "g1"),
		doc("tg/untagged", `{}`),
		tagged("tg/other", `{}`, "g2"),
		tagged("tg/longer", `{}`, "g10"), // g1 is a prefix of it
		tagged("tg/shorter", `{}`, "g"),  // a prefix of g1
		tagged("tg/upper", `{}`, "G1"),
		tagged("tg/spaced", `{}`, "g1 "),
		tagged("tg/uni", `{}`, "señal ñ/é"),
		tagged("tg/a/tg/deep", `{}`, "g1"),  // subcollection named like its parent
		tagged("tg/a/sub/deep", `{}`, "g1"), // in a subcollection: not a direct child
		tagged("other/x/tg/q", `{}`, "g1"),  // same collection ID elsewhere
		tagged("tg2/a", `{}`, "g1"),         // sibling collection sharing the prefix
		tagged("t/g", `{}`, "g1"),
	)

	wantB := docstore.Doc{Path: "tg/b", Data: []byte(`{"v":"b"}`), Tag: "g1", Exists: true,
		ExpireAt: zoned().UTC().Truncate(time.Microsecond)}
	if diff := diffDocs([]docstore.Doc{wantB, {Path: "tg/untagged", Data: []byte(`{}`), Exists: true}},
		get(t, s, "tg/b", "tg/untagged")); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	all, err := s.List(t.Context(), "tg")
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, d := range all {
		tags[d.Path] = d.Tag
	}
	for path, want := range map[string]string{"tg/b": "g1", "tg/untagged": "", "tg/uni": "señal ñ/é", "tg/upper": "G1"} {
		if tags[path] != want {
			t.Errorf("List gave %s tag %q, want %q", path, tags[path], want)
		}
	}

	want := []docstore.Doc{
		{Path: "tg/10", Data: []byte(`{"v":"10"}`), Tag: "g1", Exists: true},
		{Path: "tg/9", Data: []byte(`{"v":"9"}`), Tag: "g1", Exists: true},
		{Path: "tg/B", Data: []byte(`{"v":"B"}`), Tag: "g1", Exists: true},
		{Path: "tg/a", Data: []byte(`{"v":"a"}`), Tag: "g1", Exists: true},
		wantB,
		{Path: "tg/é", Data: []byte(`{"v":"é"}`), Tag: "g1", Exists: true},
	}
	if diff := diffDocs(want, listTag(t, s, "tg", "g1")); diff != "" {
		t.Errorf("ListTag(tg, g1) (-want +got):\n%s", diff)
	}
	// A limit returns the first documents by ID: the cheap "is there any".
	for _, tc := range []struct {
		name  string
		limit int
		want  int
	}{
		{name: "limit 1", limit: 1, want: 1},
		{name: "limit 2", limit: 2, want: 2},
		{name: "limit past the count", limit: 100, want: len(want)},
		{name: "negative means all", limit: -1, want: len(want)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListTag(t.Context(), "tg", "g1", tc.limit)
			if err != nil {
				t.Fatalf("ListTag(tg, g1, %d): %v", tc.limit, err)
			}
			if diff := diffDocs(want[:tc.want], got); diff != "" {
				t.Errorf("ListTag(tg, g1, %d) (-want +got):\n%s", tc.limit, diff)
			}
		})
	}
	if got, err := s.ListTag(t.Context(), "tg", "g3", 1); err != nil || len(got) != 0 {
		t.Errorf("ListTag(tg, g3, 1) = %v, %v; want none", got, err)
	}

	for _, tc := range []struct {
		name       string
		collection string
		tag        string
		want       []string
	}{
		{"another tag", "tg", "g2", []string{"tg/other"}},
		{"tag with g1 as prefix", "tg", "g10", []string{"tg/longer"}},
		{"prefix of g1", "tg", "g", []string{"tg/shorter"}},
		{"case matters", "tg", "G1", []string{"tg/upper"}},
		{"trailing space matters", "tg", "g1 ", []string{"tg/spaced"}},
		{"non-ASCII and slash", "tg", "señal ñ/é", []string{"tg/uni"}},
		{"no such tag", "tg", "g3", nil},
		{"subcollection named like its parent", "tg/a/tg", "g1", []string{"tg/a/tg/deep"}},
		{"subcollection", "tg/a/sub", "g1", []string{"tg/a/sub/deep"}},
		{"same collection ID elsewhere", "other/x/tg", "g1", []string{"other/x/tg/q"}},
		{"sibling collection", "tg2", "g1", []string{"tg2/a"}},
		{"empty collection", "nothing", "g1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := listTag(t, s, tc.collection, tc.tag)
			if diff := diffStrings(tc.want, pathsOf(got)); diff != "" {
				t.Errorf("ListTag(%s, %q) (-want +got):\n%s", tc.collection, tc.tag, diff)
			}
			for _, d := range got {
				if d.Tag != tc.tag || !d.Exists {
					t.Errorf("ListTag returned %+v, want an existing document tagged %q", d, tc.tag)
				}
			}
		})
	}
}

// testTagMoves: a write that changes, clears or deletes moves the document
// out of its old tag's listing, in one transaction with its other writes.
func testTagMoves(t *testing.T, s docstore.Store) {
	set(t, s,
		tagged("mv/changed", `{}`, "old"),
		tagged("mv/cleared", `{}`, "old"),
		tagged("mv/deleted", `{}`, "old"),
		tagged("mv/kept", `{"v":1}`, "old"),
		tagged("mv/twice", `{}`, "old"),
		tagged("mv/deleted-then-set", `{}`, "old"),
		tagged("mv/set-then-deleted", `{}`, "old"),
		tagged("mv/kept/sub/x", `{}`, "old"), // deleting a parent leaves its subcollections
	)
	err := runOps(t.Context(), s,
		setOp(tagged("mv/changed", `{}`, "new")),
		setOp(doc("mv/cleared", `{}`)),
		deleteOp("mv/deleted"),
		setOp(tagged("mv/kept", `{"v":2}`, "old")),
		setOp(tagged("mv/twice", `{}`, "new")),
		setOp(tagged("mv/twice", `{}`, "third")),
		deleteOp("mv/deleted-then-set"),
		setOp(tagged("mv/deleted-then-set", `{}`, "new")),
		setOp(tagged("mv/set-then-deleted", `{}`, "new")),
		deleteOp("mv/set-then-deleted"),
		setOp(tagged("mv/fresh", `{}`, "new")),
	)
	if err != nil {
		t.Fatalf("RunTx: %v", err)
	}
	for _, tc := range []struct {
		name       string
		collection string
		tag        string
		want       []string
	}{
		{"old", "mv", "old", []string{"mv/kept"}},
		{"new", "mv", "new", []string{"mv/changed", "mv/deleted-then-set", "mv/fresh"}},
		{"last write wins", "mv", "third", []string{"mv/twice"}},
		{"subcollection untouched", "mv/kept/sub", "old", []string{"mv/kept/sub/x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := diffStrings(tc.want, pathsOf(listTag(t, s, tc.collection, tc.tag))); diff != "" {
				t.Errorf("ListTag(%s, %s) (-want +got):\n%s", tc.collection, tc.tag, diff)
			}
		})
	}
	if got := listTag(t, s, "mv", "old"); len(got) == 1 && string(got[0].Data) != `{"v":2}` {
		t.Errorf("ListTag gave mv/kept data %s, want the replacement's", got[0].Data)
	}

	// Later transactions move documents again, and a delete empties a tag.
	set(t, s, tagged("mv/cleared", `{}`, "old"), tagged("mv/changed", `{}`, "old"))
	if err := runOps(t.Context(), s, deleteOp("mv/twice")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tag  string
		want []string
	}{
		{"back to old", "old", []string{"mv/changed", "mv/cleared", "mv/kept"}},
		{"left new", "new", []string{"mv/deleted-then-set", "mv/fresh"}},
		{"deleted", "third", nil},
	} {
		t.Run("again/"+tc.name, func(t *testing.T) {
			if diff := diffStrings(tc.want, pathsOf(listTag(t, s, "mv", tc.tag))); diff != "" {
				t.Errorf("ListTag(mv, %s) (-want +got):\n%s", tc.tag, diff)
			}
		})
	}
}

// testTagFailedTx: the tags of a transaction that fails are not listed,
// and the documents it meant to move stay where they were.
func testTagFailedTx(t *testing.T, s docstore.Store) {
	set(t, s, tagged("ft/a", `{}`, "before"))
	for _, tc := range []struct {
		name string
		ops  []op
		want error
	}{
		{"fn fails", []op{setOp(tagged("ft/new", `{}`, "after")), setOp(tagged("ft/a", `{}`, "after")),
			func(docstore.Tx) error { return errBoom }}, errBoom},
		{"bad tag dropped", []op{setOp(tagged("ft/new", `{}`, "after")), deleteOp("ft/a"),
			func(tx docstore.Tx) error { tx.Set(tagged("ft/bad", `{}`, strings.Repeat("x", 1500))); return nil }},
			docstore.ErrBadTag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := runOps(t.Context(), s, tc.ops...); !errors.Is(err, tc.want) {
				t.Fatalf("RunTx = %v, want %v", err, tc.want)
			}
			for _, c := range []struct {
				tag  string
				want []string
			}{
				{"before", []string{"ft/a"}},
				{"after", nil},
			} {
				if diff := diffStrings(c.want, pathsOf(listTag(t, s, "ft", c.tag))); diff != "" {
					t.Errorf("ListTag(ft, %.10q) (-want +got):\n%s", c.tag, diff)
				}
			}
			wantExists(t, s, "ft/new", false)
			wantExists(t, s, "ft/bad", false)
		})
	}
}

// testTagValidation: Set refuses a tag Firestore could not index exactly,
// failing the transaction even if fn drops the error; ListTag refuses an
// empty or invalid tag.
func testTagValidation(t *testing.T, s docstore.Store) {
	// A document name of exactly Firestore's 6 KiB: with the longest tag
	// its index entry is exactly Firestore's 7.5 KiB.
	long := "a/" + strings.Repeat("x", 1500) + "/b/" + strings.Repeat("x", 1500) + "/c/" + strings.Repeat("x", 1500) +
		"/d/" + strings.Repeat("x", 1500) + "/e/" + strings.Repeat("x", 113)
	for _, tc := range []struct {
		name string
		doc  docstore.Doc
	}{
		{"over 1499 bytes", tagged("tv/a", `{}`, strings.Repeat("x", 1500))},
		{"over 1499 bytes of multi-byte runes", tagged("tv/a", `{}`, strings.Repeat("é", 750))},
		{"invalid UTF-8", tagged("tv/a", `{}`, "g\xff")},
		{"over 1499 bytes on the longest path", tagged(long, `{}`, strings.Repeat("t", 1500))},
	} {
		t.Run("Set/"+tc.name, func(t *testing.T) {
			setErr, err := dropped(t.Context(), s, setOp(doc("tv/other", `{}`)), setOp(tc.doc))
			if !errors.Is(setErr, docstore.ErrBadTag) {
				t.Errorf("Set = %v, want ErrBadTag", setErr)
			}
			if !errors.Is(err, docstore.ErrBadTag) {
				t.Errorf("RunTx after a dropped Set error = %v, want ErrBadTag", err)
			}
			wantExists(t, s, "tv/other", false)
			wantExists(t, s, tc.doc.Path, false)
		})
	}
	t.Run("Set/at the limits", func(t *testing.T) {
		limits := []docstore.Doc{
			tagged("tvok/a", `{}`, strings.Repeat("x", 1499)),
			tagged("tvok/b", `{}`, "x"+strings.Repeat("é", 749)),
			tagged(long, `{}`, strings.Repeat("t", 1499)),
		}
		set(t, s, limits...)
		for _, d := range limits {
			collection := d.Path[:strings.LastIndexByte(d.Path, '/')]
			got := listTag(t, s, collection, d.Tag)
			if diff := diffStrings([]string{d.Path}, pathsOf(got)); diff != "" {
				t.Errorf("ListTag(%.20s..., %.10q...) (-want +got):\n%s", collection, d.Tag, diff)
			}
		}
	})

	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name       string
		ctx        context.Context
		collection string
		tag        string
		want       error
	}{
		{"empty tag", t.Context(), "tv", "", docstore.ErrBadTag},
		{"tag over 1499 bytes", t.Context(), "tv", strings.Repeat("x", 1500), docstore.ErrBadTag},
		{"invalid UTF-8 tag", t.Context(), "tv", "\xff", docstore.ErrBadTag},
		{"document path", t.Context(), "tv/a", "g", docstore.ErrBadPath},
		{"empty collection path", t.Context(), "", "g", docstore.ErrBadPath},
		{"reserved collection", t.Context(), "__tv__", "g", docstore.ErrBadPath},
		{"canceled context", canceled, "tv", "g", context.Canceled},
	} {
		t.Run("ListTag/"+tc.name, func(t *testing.T) {
			docs, err := s.ListTag(tc.ctx, tc.collection, tc.tag, 0)
			if !errors.Is(err, tc.want) {
				t.Errorf("ListTag(%q, %.40q) = %v, %v; want %v", tc.collection, tc.tag, docs, err, tc.want)
			}
		})
	}
}

// testListTagIsNotTransactional: ListTag inside fn sees committed state,
// not the transaction's pending writes.
func testListTagIsNotTransactional(t *testing.T, s docstore.Store) {
	set(t, s, tagged("ltt/a", `{}`, "g"))
	var inside []string
	err := s.RunTx(t.Context(), func(ctx context.Context, tx docstore.Tx) error {
		if err := runTx(tx, getOp("ltt/a"), setOp(tagged("ltt/b", `{}`, "g")), setOp(doc("ltt/a", `{}`))); err != nil {
			return err
		}
		docs, err := s.ListTag(ctx, "ltt", "g", 0) // with the transaction's context
		inside = pathsOf(docs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"inside the transaction: committed only", inside, []string{"ltt/a"}},
		{"after the commit", pathsOf(listTag(t, s, "ltt", "g")), []string{"ltt/b"}},
	} {
		if diff := diffStrings(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
