package docstoretest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// listCase is a listing and the paths it must return.
type listCase struct {
	name, collection, tag string
	want                  []string
}

// checkLists runs each listing (ListTag when tag is set, else List) and
// checks that every document returned exists and carries the tag asked.
func checkLists(t *testing.T, s docstore.Store, cases []listCase) {
	t.Helper()
	for _, tc := range cases {
		docs, err := s.List(t.Context(), tc.collection)
		if tc.tag != "" {
			docs, err = s.ListTag(t.Context(), tc.collection, tc.tag, 0)
		}
		if diff := diffOf(tc.want, pathsOf(docs)); err != nil || diff != "" {
			t.Errorf("%s: list %s tagged %q: %v (-want +got):\n%s", tc.name, tc.collection, tc.tag, err, diff)
		}
		for _, d := range docs {
			if d.Tag != tc.tag || !d.Exists {
				t.Errorf("%s: listed %+v, want an existing document tagged %q", tc.name, d, tc.tag)
			}
		}
	}
}

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

	// Byte order, as Firestore orders document IDs.
	var want []docstore.Doc
	for _, id := range slices.Sorted(slices.Values(ids)) {
		d := stored("items/"+id, `{"id":1}`, "")
		if id == "b" {
			d.ExpireAt = zoned().UTC().Truncate(time.Microsecond)
		}
		want = append(want, d)
	}
	got, err := s.List(t.Context(), "items")
	if diff := diffOf(want, got); err != nil || diff != "" {
		t.Errorf("List(items): %v (-want +got):\n%s", err, diff)
	}
	checkLists(t, s, []listCase{
		{"subcollection", "items/a/sub", "", []string{"items/a/sub/deep"}},
		{"same ID elsewhere", "other/x/items", "", []string{"other/x/items/q"}},
		{"deep", "items/a/sub2/x/y", "", []string{"items/a/sub2/x/y/z"}},
		{"empty", "nothing", "", nil},
		{"parent of a subcollection only", "items/a/sub2", "", nil},
	})
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
	set(t, s,
		docstore.Doc{Path: "tg/b", Data: []byte(`{"v":"b"}`), Tag: "g1", ExpireAt: zoned()},
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
	wantB := stored("tg/b", `{"v":"b"}`, "g1")
	wantB.ExpireAt = zoned().UTC().Truncate(time.Microsecond)
	if diff := diffOf([]docstore.Doc{wantB, stored("tg/untagged", `{}`, "")}, get(t, s, "tg/b", "tg/untagged")); diff != "" {
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

	want := []docstore.Doc{stored("tg/10", `{"v":"10"}`, "g1"), stored("tg/9", `{"v":"9"}`, "g1"),
		stored("tg/B", `{"v":"B"}`, "g1"), stored("tg/a", `{"v":"a"}`, "g1"), wantB, stored("tg/é", `{"v":"é"}`, "g1")}
	// A limit returns the first documents by ID: the cheap "is there any".
	for _, tc := range []struct{ limit, want int }{{0, len(want)}, {1, 1}, {2, 2}, {100, len(want)}, {-1, len(want)}} {
		got, err := s.ListTag(t.Context(), "tg", "g1", tc.limit)
		if diff := diffOf(want[:tc.want], got); err != nil || diff != "" {
			t.Errorf("ListTag(tg, g1, %d): %v (-want +got):\n%s", tc.limit, err, diff)
		}
	}
	if got, err := s.ListTag(t.Context(), "tg", "g3", 1); err != nil || len(got) != 0 {
		t.Errorf("ListTag(tg, g3, 1) = %v, %v; want none", got, err)
	}

	checkLists(t, s, []listCase{
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
	})
}

// testTagMoves: a write that changes, clears or deletes moves the document
// out of its old tag's listing, in one transaction with its other writes.
func testTagMoves(t *testing.T, s docstore.Store) {
	var before []docstore.Doc
	for _, id := range []string{"changed", "cleared", "deleted", "twice", "deleted-then-set", "set-then-deleted", "kept/sub/x"} {
		before = append(before, tagged("mv/"+id, `{}`, "old"))
	}
	set(t, s, append(before, tagged("mv/kept", `{"v":1}`, "old"))...)
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
	checkLists(t, s, []listCase{
		{"old", "mv", "old", []string{"mv/kept"}},
		{"new", "mv", "new", []string{"mv/changed", "mv/deleted-then-set", "mv/fresh"}},
		{"last write wins", "mv", "third", []string{"mv/twice"}},
		{"subcollection untouched", "mv/kept/sub", "old", []string{"mv/kept/sub/x"}},
	})
	if got := listTag(t, s, "mv", "old"); len(got) == 1 && string(got[0].Data) != `{"v":2}` {
		t.Errorf("ListTag gave mv/kept data %s, want the replacement's", got[0].Data)
	}

	// Later transactions move documents again, and a delete empties a tag.
	set(t, s, tagged("mv/cleared", `{}`, "old"), tagged("mv/changed", `{}`, "old"))
	if err := runOps(t.Context(), s, deleteOp("mv/twice")); err != nil {
		t.Fatal(err)
	}
	checkLists(t, s, []listCase{
		{"back to old", "mv", "old", []string{"mv/changed", "mv/cleared", "mv/kept"}},
		{"left new", "mv", "new", []string{"mv/deleted-then-set", "mv/fresh"}},
		{"deleted", "mv", "third", nil},
	})
}

// testTagFailedTx: the tags of a transaction that fails are not listed,
// and the documents it meant to move stay where they were.
func testTagFailedTx(t *testing.T, s docstore.Store) {
	set(t, s, tagged("ft/a", `{}`, "before"))
	badTag := func(tx docstore.Tx) error { tx.Set(tagged("ft/bad", `{}`, strings.Repeat("x", 1500))); return nil }
	for _, tc := range []struct {
		name string
		ops  []op
		want error
	}{
		{"fn fails", []op{setOp(tagged("ft/new", `{}`, "after")), setOp(tagged("ft/a", `{}`, "after")),
			func(docstore.Tx) error { return errBoom }}, errBoom},
		{"bad tag dropped", []op{setOp(tagged("ft/new", `{}`, "after")), deleteOp("ft/a"), badTag}, docstore.ErrBadTag},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := runOps(t.Context(), s, tc.ops...); !errors.Is(err, tc.want) {
				t.Fatalf("RunTx = %v, want %v", err, tc.want)
			}
			checkLists(t, s, []listCase{{"before", "ft", "before", []string{"ft/a"}}, {"after", "ft", "after", nil}})
			wantExists(t, s, "ft/new", false)
			wantExists(t, s, "ft/bad", false)
		})
	}
}

// testTagValidation: ListTag refuses an empty or invalid tag.
func testTagValidation(t *testing.T, s docstore.Store) {
	x := strings.Repeat("x", 1500)
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name            string
		ctx             context.Context
		collection, tag string
		want            error
	}{
		{"empty tag", t.Context(), "tv", "", docstore.ErrBadTag},
		{"tag over 1499 bytes", t.Context(), "tv", x, docstore.ErrBadTag},
		{"invalid UTF-8 tag", t.Context(), "tv", "\xff", docstore.ErrBadTag},
		{"document path", t.Context(), "tv/a", "g", docstore.ErrBadPath},
		{"empty collection path", t.Context(), "", "g", docstore.ErrBadPath},
		{"reserved collection", t.Context(), "__tv__", "g", docstore.ErrBadPath},
		{"canceled context", canceled, "tv", "g", context.Canceled},
	} {
		if docs, err := s.ListTag(tc.ctx, tc.collection, tc.tag, 0); !errors.Is(err, tc.want) {
			t.Errorf("ListTag/%s: ListTag(%q, %.40q) = %v, %v; want %v", tc.name, tc.collection, tc.tag, docs, err, tc.want)
		}
	}
}

// testListIsNotTransactional: List and ListTag inside fn, with its
// context, see committed state, not the transaction's pending writes.
func testListIsNotTransactional(t *testing.T, s docstore.Store) {
	set(t, s, tagged("lt/a", `{}`, "g"))
	var inside [][]string // what List and ListTag saw
	err := s.RunTx(t.Context(), func(ctx context.Context, tx docstore.Tx) error {
		err := runTx(tx, getOp("lt/a"), setOp(tagged("lt/b", `{}`, "g")), setOp(doc("lt/a", `{}`)))
		if err != nil {
			return err
		}
		docs, err := s.List(ctx, "lt")
		tagged, terr := s.ListTag(ctx, "lt", "g", 0)
		inside = [][]string{pathsOf(docs), pathsOf(tagged)}
		return errors.Join(err, terr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffOf([][]string{{"lt/a"}, {"lt/a"}}, inside); diff != "" {
		t.Errorf("List and ListTag inside the transaction: committed only (-want +got):\n%s", diff)
	}
	checkLists(t, s, []listCase{{"after the commit", "lt", "g", []string{"lt/b"}}})
}
