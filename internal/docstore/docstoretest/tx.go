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

// testWrites: each case commits before, runs ops in one transaction and
// reads get back: documents as the store keeps them (ExpireAt to the
// microsecond, in UTC), a missing one with Exists false, in the order asked.
func testWrites(t *testing.T, s docstore.Store) {
	type docs = []docstore.Doc
	expiring := func(d docstore.Doc, at time.Time) docstore.Doc { d.ExpireAt = at; return d }
	// zoned() as Firestore gives it back.
	utc := time.Date(2026, 3, 1, 11, 30, 15, 123456000, time.UTC)
	failing := func(docstore.Tx) error { return fmt.Errorf("claim: %w", errBoom) }
	const num = ` {"n": "12.500000000"} `
	for _, tc := range []struct {
		name    string
		before  docs
		ops     []op
		wantErr error
		get     []string
		want    docs
	}{
		{name: "round trip",
			before: docs{doc("rt/plain", `{"a":1,"b":"x"}`), expiring(doc("rt/exp", num), zoned()),
				doc("rt/n/sub/d", `{}`)},
			get: []string{"rt/plain", "rt/exp", "rt/n/sub/d"},
			want: docs{stored("rt/plain", `{"a":1,"b":"x"}`, ""), expiring(stored("rt/exp", num, ""), utc),
				stored("rt/n/sub/d", `{}`, "")}},
		{name: "get order and missing", before: docs{doc("g/a", `{"v":"a"}`), doc("g/b", `{"v":"b"}`)},
			get: []string{"g/b", "g/missing", "g/a", "g/b"},
			want: docs{stored("g/b", `{"v":"b"}`, ""), {Path: "g/missing"}, stored("g/a", `{"v":"a"}`, ""),
				stored("g/b", `{"v":"b"}`, "")}},
		{name: "get nothing"},
		{name: "set replaces", before: docs{expiring(doc("r/d", `{"a":1}`), zoned())},
			ops: []op{setOp(doc("r/d", `{"b":2}`))},
			get: []string{"r/d"}, want: docs{stored("r/d", `{"b":2}`, "")}},
		// As in Firestore, deleting a document leaves its subcollections.
		{name: "delete", before: docs{doc("d/a", `{}`), doc("d/b", `{}`), doc("d/a/sub/c", `{}`)},
			ops:  []op{deleteOp("d/a"), deleteOp("d/never-existed")},
			get:  []string{"d/a", "d/b", "d/a/sub/c"},
			want: docs{{Path: "d/a"}, stored("d/b", `{}`, ""), stored("d/a/sub/c", `{}`, "")}},
		{name: "last write wins", before: docs{doc("w/deleted-then-set", `{"v":0}`)},
			ops: []op{setOp(doc("w/twice", `{"v":1}`)), setOp(doc("w/twice", `{"v":2}`)),
				setOp(doc("w/set-then-deleted", `{"v":1}`)), deleteOp("w/set-then-deleted"),
				deleteOp("w/deleted-then-set"), setOp(doc("w/deleted-then-set", `{"v":3}`))},
			get: []string{"w/twice", "w/set-then-deleted", "w/deleted-then-set"},
			want: docs{stored("w/twice", `{"v":2}`, ""), {Path: "w/set-then-deleted"},
				stored("w/deleted-then-set", `{"v":3}`, "")}},
		{name: "fn's error rolls back", before: docs{doc("rb/kept", `{"v":1}`)},
			ops: []op{getOp("rb/kept"), setOp(doc("rb/new", `{}`)), setOp(doc("rb/kept", `{"v":2}`)),
				deleteOp("rb/kept"), failing},
			wantErr: errBoom, get: []string{"rb/kept", "rb/new"},
			want: docs{stored("rb/kept", `{"v":1}`, ""), {Path: "rb/new"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set(t, s, tc.before...)
			if err := runOps(t.Context(), s, tc.ops...); !errors.Is(err, tc.wantErr) {
				t.Fatalf("RunTx = %v, want %v", err, tc.wantErr)
			}
			got := get(t, s, tc.get...)
			if diff := diffOf(tc.want, got); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
			for _, d := range got {
				if !d.ExpireAt.IsZero() && d.ExpireAt.Location() != time.UTC {
					t.Errorf("%s: ExpireAt location = %v, want UTC", d.Path, d.ExpireAt.Location())
				}
			}
		})
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
