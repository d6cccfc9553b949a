package docstoretest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

func testRoundTrip(t *testing.T, s docstore.Store) {
	in := []docstore.Doc{
		{Path: "rt/plain", Data: []byte(`{"a":1,"b":"x"}`)},
		{Path: "rt/expiring", Data: []byte(` {"n": "12.500000000"} `), ExpireAt: zoned()},
		{Path: "rt/nested/sub/doc", Data: []byte(`{"deep":true}`)},
	}
	set(t, s, in...)
	want := []docstore.Doc{
		{Path: "rt/plain", Data: []byte(`{"a":1,"b":"x"}`), Exists: true},
		// Firestore keeps microseconds and answers in UTC.
		{Path: "rt/expiring", Data: []byte(` {"n": "12.500000000"} `), Exists: true,
			ExpireAt: time.Date(2026, 3, 1, 11, 30, 15, 123456000, time.UTC)},
		{Path: "rt/nested/sub/doc", Data: []byte(`{"deep":true}`), Exists: true},
	}
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
	want := []docstore.Doc{
		{Path: "g/b", Data: []byte(`{"v":"b"}`), Exists: true},
		{Path: "g/missing"},
		{Path: "g/a", Data: []byte(`{"v":"a"}`), Exists: true},
		{Path: "g/b", Data: []byte(`{"v":"b"}`), Exists: true},
	}
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
	want := []docstore.Doc{{Path: "r/d", Data: []byte(`{"b":2}`), Exists: true}}
	if diff := diffDocs(want, get(t, s, "r/d")); diff != "" {
		t.Errorf("after second Set (-want +got):\n%s", diff)
	}
}

func testDelete(t *testing.T, s docstore.Store) {
	set(t, s, doc("d/a", `{}`), doc("d/b", `{}`), doc("d/a/sub/c", `{}`))
	err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		if err := tx.Delete("d/a"); err != nil {
			return err
		}
		return tx.Delete("d/never-existed")
	})
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantExists(t, s, "d/a", false)
	wantExists(t, s, "d/b", true)
	// As in Firestore, deleting a document leaves its subcollections.
	wantExists(t, s, "d/a/sub/c", true)
}

func testLastWriteWins(t *testing.T, s docstore.Store) {
	set(t, s, doc("w/deleted-then-set", `{"v":0}`))
	err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		for _, op := range []func() error{
			func() error { return tx.Set(doc("w/twice", `{"v":1}`)) },
			func() error { return tx.Set(doc("w/twice", `{"v":2}`)) },
			func() error { return tx.Set(doc("w/set-then-deleted", `{"v":1}`)) },
			func() error { return tx.Delete("w/set-then-deleted") },
			func() error { return tx.Delete("w/deleted-then-set") },
			func() error { return tx.Set(doc("w/deleted-then-set", `{"v":3}`)) },
		} {
			if err := op(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("RunTx: %v", err)
	}
	want := []docstore.Doc{
		{Path: "w/twice", Data: []byte(`{"v":2}`), Exists: true},
		{Path: "w/set-then-deleted"},
		{Path: "w/deleted-then-set", Data: []byte(`{"v":3}`), Exists: true},
	}
	if diff := diffDocs(want, get(t, s, "w/twice", "w/set-then-deleted", "w/deleted-then-set")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func testReadAfterWrite(t *testing.T, s docstore.Store) {
	for _, tc := range []struct {
		name  string
		write func(tx docstore.Tx) error
	}{
		{"after Set", func(tx docstore.Tx) error { return tx.Set(doc("raw/x", `{}`)) }},
		{"after Delete", func(tx docstore.Tx) error { return tx.Delete("raw/y") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var getErr error
			err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
				if _, err := tx.Get("raw/first"); err != nil {
					return err
				}
				if err := tc.write(tx); err != nil {
					return err
				}
				_, getErr = tx.Get("raw/z")
				return nil // dropped on purpose
			})
			if !errors.Is(getErr, docstore.ErrReadAfterWrite) {
				t.Errorf("Get after a write = %v, want ErrReadAfterWrite", getErr)
			}
			if !errors.Is(err, docstore.ErrReadAfterWrite) {
				t.Errorf("RunTx = %v, want ErrReadAfterWrite even though fn dropped it", err)
			}
			wantExists(t, s, "raw/x", false)
		})
	}
}

func testErrorRollsBack(t *testing.T, s docstore.Store) {
	set(t, s, doc("rb/kept", `{"v":1}`))
	err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		if _, err := tx.Get("rb/kept"); err != nil {
			return err
		}
		if err := tx.Set(doc("rb/new", `{}`)); err != nil {
			return err
		}
		if err := tx.Set(doc("rb/kept", `{"v":2}`)); err != nil {
			return err
		}
		if err := tx.Delete("rb/kept"); err != nil {
			return err
		}
		return fmt.Errorf("claim: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunTx = %v, want fn's error", err)
	}
	want := []docstore.Doc{
		{Path: "rb/kept", Data: []byte(`{"v":1}`), Exists: true},
		{Path: "rb/new"},
	}
	if diff := diffDocs(want, get(t, s, "rb/kept", "rb/new")); diff != "" {
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
	docs, err := s.List(t.Context(), "ttl")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || !docs[0].ExpireAt.Equal(past) {
		t.Errorf("List = %+v, want the expired document", docs)
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
	if err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		kept = tx
		return nil
	}); err != nil {
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
	err := s.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(doc("c/x", `{}`))
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("RunTx with a canceled context = %v, want context.Canceled", err)
	}
	if _, err := s.List(ctx, "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context = %v, want context.Canceled", err)
	}
	wantExists(t, s, "c/x", false)
}
