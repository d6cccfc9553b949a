package docstoretest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

func testRoundTrip(t *testing.T, s docstore.Store) {
	expiring := doc("rt/expiring", ` {"n": "12.500000000"} `)
	expiring.ExpireAt = zoned()
	set(t, s, doc("rt/plain", `{"a":1,"b":"x"}`), expiring, doc("rt/nested/sub/doc", `{"deep":true}`))
	want := []docstore.Doc{stored("rt/plain", `{"a":1,"b":"x"}`, ""), stored("rt/expiring", ` {"n": "12.500000000"} `, ""),
		stored("rt/nested/sub/doc", `{"deep":true}`, "")}
	// Firestore keeps microseconds and answers in UTC.
	want[1].ExpireAt = time.Date(2026, 3, 1, 11, 30, 15, 123456000, time.UTC)
	got := get(t, s, "rt/plain", "rt/expiring", "rt/nested/sub/doc")
	if diff := diffDocs(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if loc := got[1].ExpireAt.Location(); loc != time.UTC {
		t.Errorf("ExpireAt location = %v, want UTC", loc)
	}
}

func testGetOrderAndMissing(t *testing.T, s docstore.Store) {
	set(t, s, doc("g/a", `{"v":"a"}`), doc("g/b", `{"v":"b"}`))
	got := get(t, s, "g/b", "g/missing", "g/a", "g/b")
	want := []docstore.Doc{stored("g/b", `{"v":"b"}`, ""), {Path: "g/missing"}, stored("g/a", `{"v":"a"}`, ""), stored("g/b", `{"v":"b"}`, "")}
	if diff := diffDocs(want, got); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if got := get(t, s); len(got) != 0 {
		t.Errorf("Get() = %v, want nothing", got)
	}
}

func testSetReplaces(t *testing.T, s docstore.Store) {
	set(t, s, docstore.Doc{Path: "r/d", Data: []byte(`{"a":1}`), ExpireAt: zoned()})
	set(t, s, doc("r/d", `{"b":2}`))
	if diff := diffDocs([]docstore.Doc{stored("r/d", `{"b":2}`, "")}, get(t, s, "r/d")); diff != "" {
		t.Errorf("after second Set (-want +got):\n%s", diff)
	}
}

func testDelete(t *testing.T, s docstore.Store) {
	set(t, s, doc("d/a", `{}`), doc("d/b", `{}`), doc("d/a/sub/c", `{}`))
	if err := runOps(t.Context(), s, deleteOp("d/a"), deleteOp("d/never-existed")); err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantExists(t, s, "d/a", false)
	wantExists(t, s, "d/b", true)
	// As in Firestore, deleting a document leaves its subcollections.
	wantExists(t, s, "d/a/sub/c", true)
}

func testLastWriteWins(t *testing.T, s docstore.Store) {
	set(t, s, doc("w/deleted-then-set", `{"v":0}`))
	err := runOps(t.Context(), s,
		setOp(doc("w/twice", `{"v":1}`)), setOp(doc("w/twice", `{"v":2}`)),
		setOp(doc("w/set-then-deleted", `{"v":1}`)), deleteOp("w/set-then-deleted"),
		deleteOp("w/deleted-then-set"), setOp(doc("w/deleted-then-set", `{"v":3}`)),
	)
	if err != nil {
		t.Fatalf("RunTx: %v", err)
	}
	want := []docstore.Doc{stored("w/twice", `{"v":2}`, ""), {Path: "w/set-then-deleted"}, stored("w/deleted-then-set", `{"v":3}`, "")}
	if diff := diffDocs(want, get(t, s, "w/twice", "w/set-then-deleted", "w/deleted-then-set")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func testReadAfterWrite(t *testing.T, s docstore.Store) {
	for _, tc := range []struct {
		name  string
		write op
	}{
		{"after Set", setOp(doc("raw/x", `{}`))},
		{"after Delete", deleteOp("raw/y")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getErr, err := dropped(t.Context(), s, getOp("raw/first"), tc.write, getOp("raw/z"))
			if !errors.Is(getErr, docstore.ErrReadAfterWrite) || !errors.Is(err, docstore.ErrReadAfterWrite) {
				t.Errorf("Get after a write = %v, then RunTx = %v; want ErrReadAfterWrite for both, though fn dropped it", getErr, err)
			}
			wantExists(t, s, "raw/x", false)
		})
	}
}

func testErrorRollsBack(t *testing.T, s docstore.Store) {
	set(t, s, doc("rb/kept", `{"v":1}`))
	err := runOps(t.Context(), s, getOp("rb/kept"), setOp(doc("rb/new", `{}`)), setOp(doc("rb/kept", `{"v":2}`)),
		deleteOp("rb/kept"), func(docstore.Tx) error { return fmt.Errorf("claim: %w", errBoom) })
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunTx = %v, want fn's error", err)
	}
	if diff := diffDocs([]docstore.Doc{stored("rb/kept", `{"v":1}`, ""), {Path: "rb/new"}}, get(t, s, "rb/kept", "rb/new")); diff != "" {
		t.Errorf("after a failed transaction (-want +got):\n%s", diff)
	}
}

func testExpiredStillVisible(t *testing.T, s docstore.Store) {
	past := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Microsecond)
	set(t, s, docstore.Doc{Path: "ttl/old", Data: []byte(`{}`), ExpireAt: past})
	got := get(t, s, "ttl/old")[0]
	if !got.Exists || !got.ExpireAt.Equal(past) {
		t.Errorf("Get of an expired document = %+v, want it visible with ExpireAt %v", got, past)
	}
	if docs, err := s.List(t.Context(), "ttl"); err != nil || len(docs) != 1 || !docs[0].ExpireAt.Equal(past) {
		t.Errorf("List = %+v, %v; want the expired document", docs, err)
	}
}

func testNestedTx(t *testing.T, s docstore.Store) {
	var nested error
	err := s.RunTx(t.Context(), func(ctx context.Context, tx docstore.Tx) error {
		nested = s.RunTx(ctx, func(context.Context, docstore.Tx) error { return nil })
		return tx.Set(doc("n/outer", `{}`))
	})
	if err != nil {
		t.Fatalf("outer RunTx: %v", err)
	}
	if nested == nil {
		t.Error("RunTx with a transaction's context succeeded, want an error")
	}
	wantExists(t, s, "n/outer", true)
}

func testTxAfterReturn(t *testing.T, s docstore.Store) {
	var kept docstore.Tx
	if err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Get("late/a"); err == nil {
		t.Error("Get on a finished transaction succeeded")
	}
	if err := kept.Set(doc("late/a", `{}`)); err == nil {
		t.Error("Set on a finished transaction succeeded")
	}
	wantExists(t, s, "late/a", false)
}

func testCanceledContext(t *testing.T, s docstore.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := runOps(ctx, s, setOp(doc("c/x", `{}`))); !errors.Is(err, context.Canceled) {
		t.Errorf("RunTx with a canceled context = %v, want context.Canceled", err)
	}
	if _, err := s.List(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context = %v, want context.Canceled", err)
	}
	wantExists(t, s, "c/x", false)
}

// contenders is bounded because the Firestore emulator serialises
// contended transactions slowly (lock upgrades wait for its ~30 s lock
// timeout); 20 still makes the embedded store batch and Firestore retry.
const contenders = 20

// testConcurrentIncrements: no lost update, and every attempt that did not
// commit left nothing behind (each attempt writes a marker document named
// after itself; only the committed attempt's marker may remain).
func testConcurrentIncrements(t *testing.T, s docstore.Store) {
	last := make([]int, contenders)
	var total atomic.Int64
	var wg sync.WaitGroup
	for g := range contenders {
		wg.Go(func() {
			attempt := 0
			err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
				attempt++
				total.Add(1)
				docs, err := tx.Get("counter/c")
				if err != nil {
					return err
				}
				var c struct{ N int }
				if docs[0].Exists {
					if err := json.Unmarshal(docs[0].Data, &c); err != nil {
						return err
					}
				}
				c.N++
				b, _ := json.Marshal(c)
				return runTx(tx, setOp(doc(fmt.Sprintf("attempts/g%02d-%d", g, attempt), `{}`)), setOp(docstore.Doc{Path: "counter/c", Data: b}))
			})
			last[g] = attempt
			if err != nil {
				t.Errorf("goroutine %d: %v", g, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d transactions took %d attempts", contenders, total.Load())

	var c struct{ N int }
	if err := json.Unmarshal(get(t, s, "counter/c")[0].Data, &c); err != nil {
		t.Fatal(err)
	}
	if c.N != contenders {
		t.Errorf("counter = %d after %d increments", c.N, contenders)
	}
	var want []string
	for g, a := range last {
		want = append(want, fmt.Sprintf("attempts/g%02d-%d", g, a))
	}
	checkLists(t, s, []listCase{{"attempt markers: only committed attempts may leave one", "attempts", "", want}})
}

// testWriteSkew: two transactions each read x and y and set their own only
// if both are absent. Serialisable execution lets exactly one set; snapshot
// isolation would let both. A barrier makes the first attempts overlap
// where the store allows it (on a serial store it times out harmlessly).
func testWriteSkew(t *testing.T, s docstore.Store) {
	const rounds = 2
	for round := range rounds {
		x, y := fmt.Sprintf("skew/x%d", round), fmt.Sprintf("skew/y%d", round)
		var arrived atomic.Int32
		barrier := make(chan struct{})
		var wg sync.WaitGroup
		for _, mine := range []string{x, y} {
			wg.Go(func() {
				first := true
				err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
					docs, err := tx.Get(x, y)
					if err != nil {
						return err
					}
					if first {
						first = false
						if arrived.Add(1) == 2 {
							close(barrier)
						}
						select {
						case <-barrier:
						case <-time.After(300 * time.Millisecond):
						}
					}
					if docs[0].Exists || docs[1].Exists {
						return nil
					}
					return tx.Set(doc(mine, `{}`))
				})
				if err != nil {
					t.Errorf("set %s: %v", mine, err)
				}
			})
		}
		wg.Wait()
		docs := get(t, s, x, y)
		if docs[0].Exists == docs[1].Exists {
			t.Errorf("round %d: x exists %v, y exists %v; want exactly one", round, docs[0].Exists, docs[1].Exists)
		}
	}
}
