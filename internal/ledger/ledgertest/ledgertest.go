// Package ledgertest is the conformance suite of the ledger over a
// docstore.Store: every store adapter runs it, so the exactly-once rules
// hold on the embedded store and on Firestore alike.
package ledgertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
	"github.com/alpinashop/alpipe/internal/ledger"
)

// Run runs the suite. newStore must return an empty store private to the
// calling test. Subtests run in parallel. Once they end, Run holds
// ledger.CollectionGroups and ledger.TTLCollectionGroups equal to the groups
// the suite wrote.
func Run(t *testing.T, newStore func(t *testing.T) docstore.Store) {
	t.Helper()
	g := docstoretest.NewGroups()
	t.Cleanup(func() {
		g.Check(t, "ledger.CollectionGroups", ledger.CollectionGroups(), ledger.TTLCollectionGroups())
	})
	tests := []struct {
		name string
		fn   func(t *testing.T, l *ledger.Ledger)
	}{
		{"FirstClaimProceeds", testFirstClaimProceeds},
		{"RedeliveryOfFinished", testRedeliveryOfFinished},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ConcurrentSameContent", testConcurrentSameContent},
		{"LeaseTakeover", testLeaseTakeover},
		{"FailedIsRetried", testFailedIsRetried},
		{"DuplicateContent", testDuplicateContent},
		{"DuplicateWaitsForLiveOriginal", testDuplicateWaitsForLiveOriginal},
		{"OnlyLoadedContentDeduplicates", testOnlyLoadedContentDeduplicates},
		{"CountsRoundTrip", testCountsRoundTrip},
		{"FinishRefuses", testFinishRefuses},
		{"FinishIsIdempotent", testFinishIsIdempotent},
		{"ListNewestFirst", testListNewestFirst},
		{"AwkwardNames", testAwkwardNames},
		{"Locks", testLocks},
		{"ReleaseLeases", testReleaseLeases},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := ledger.New(g.Wrap(newStore(t)), ledger.Options{Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			tc.fn(t, l)
		})
	}
}

const (
	lease = 10 * time.Minute
	md5A  = "XrY7u+Ae7tCTyyK7j1rNww=="
	md5B  = "1B2M2Y8AsgTpgAmY7PhCfg=="
)

var (
	t0   = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	key1 = ledger.Key{Bucket: "landing", Object: "exportaciones/2026/11/29/pedidos.csv", Generation: 1764410400000001}
	key2 = ledger.Key{Bucket: "landing", Object: "exportaciones/2026/11/29/pedidos-copia.csv", Generation: 1764410400000002}
)

// claimAs claims k and fails t unless the decision is want.
func claimAs(t *testing.T, l *ledger.Ledger, k ledger.Key, md5, owner string, now time.Time, want ledger.Decision) ledger.Claim {
	t.Helper()
	c, err := l.Claim(t.Context(), k, md5, owner, now)
	if err != nil || c.Decision != want {
		t.Fatalf("Claim(%s, %s) = %v, %v, want %v (record %+v)", k, owner, c.Decision, err, want, c.Record)
	}
	return c
}

func finish(t *testing.T, l *ledger.Ledger, rec ledger.Record, state ledger.State, now time.Time) ledger.Record {
	t.Helper()
	rec.State = state
	if err := l.Finish(t.Context(), rec, now); err != nil {
		t.Fatalf("Finish(%s, %s): %v", rec.Key, state, err)
	}
	return get(t, l, rec.Key)
}

// gen is k's generation d later.
func gen(k ledger.Key, d int64) ledger.Key {
	k.Generation += d
	return k
}

func get(t *testing.T, l *ledger.Ledger, k ledger.Key) ledger.Record {
	t.Helper()
	r, ok, err := l.Get(t.Context(), k)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = %v, %v", k, ok, err)
	}
	return r
}

func testFirstClaimProceeds(t *testing.T, l *ledger.Ledger) {
	if _, ok, err := l.Get(t.Context(), key1); ok || err != nil {
		t.Fatalf("Get before any claim = %v, %v; want missing", ok, err)
	}
	c := claimAs(t, l, key1, md5A, "instance-a", t0, ledger.Proceed)
	want := ledger.Claim{Decision: ledger.Proceed, Record: ledger.Record{
		Key: key1, State: ledger.InProgress, MD5: md5A, Attempt: 1, Owner: "instance-a", LeaseUntil: t0.Add(lease), StartedAt: t0}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("claim (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Record, get(t, l, key1)); diff != "" {
		t.Errorf("stored record (-want +got):\n%s", diff)
	}
}

func testRedeliveryOfFinished(t *testing.T, l *ledger.Ledger) {
	for i, state := range []ledger.State{ledger.Done, ledger.Rejected, ledger.Skipped} {
		t.Run(string(state), func(t *testing.T) {
			k := gen(key1, int64(i))
			c := claimAs(t, l, k, "", "first", t0, ledger.Proceed)
			done := finish(t, l, c.Record, state, t0.Add(time.Minute))
			// Long after the lease, and for another owner: still finished.
			again := claimAs(t, l, k, "", "second", t0.Add(24*time.Hour), ledger.AlreadyFinished)
			if diff := cmp.Diff(done, again.Record); diff != "" {
				t.Errorf("redelivery record (-want +got):\n%s", diff)
			}
		})
	}
}

func testConcurrentClaims(t *testing.T, l *ledger.Ledger) {
	winner := race(t, l, 10, func(int) ledger.Key { return key1 })
	if got := get(t, l, key1); got.Owner != winner.Owner || got.Attempt != 1 {
		t.Errorf("stored record owner %q attempt %d, want %q attempt 1", got.Owner, got.Attempt, winner.Owner)
	}
}

// testConcurrentSameContent: copies of one file under several names,
// delivered at once, are loaded once: one claim proceeds, the others wait.
func testConcurrentSameContent(t *testing.T, l *ledger.Ledger) {
	race(t, l, 5, func(i int) ledger.Key {
		return ledger.Key{Bucket: "landing", Object: fmt.Sprintf("copias/copia-%d.csv", i), Generation: 1}
	})
}

// race claims keyOf(i) with md5A for owner-i, n at once, and checks that
// exactly one claim proceeds and every other is busy on its record.
func race(t *testing.T, l *ledger.Ledger, n int, keyOf func(int) ledger.Key) ledger.Record {
	t.Helper()
	claims := make([]ledger.Claim, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := l.Claim(t.Context(), keyOf(i), md5A, fmt.Sprintf("owner-%d", i), t0)
			if err != nil {
				t.Errorf("owner-%d: %v", i, err)
			}
			claims[i] = c
		})
	}
	wg.Wait()
	var winner *ledger.Record
	for _, c := range claims {
		if c.Decision == ledger.Proceed {
			if winner != nil {
				t.Fatalf("%s of %s and %s of %s both proceed", winner.Owner, winner.Key, c.Record.Owner, c.Record.Key)
			}
			winner = &c.Record
		}
	}
	if winner == nil {
		t.Fatal("no claim proceeded")
	}
	for i, c := range claims {
		r := c.Record
		if c.Decision != ledger.Proceed && (c.Decision != ledger.Busy || r.Key != winner.Key || r.Owner != winner.Owner) {
			t.Errorf("owner-%d: %v on %s held by %q, want busy on %s held by %q", i, c.Decision, r.Key, r.Owner, winner.Key, winner.Owner)
		}
	}
	return *winner
}

func testLeaseTakeover(t *testing.T, l *ledger.Ledger) {
	a := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed)

	live := claimAs(t, l, key1, md5A, "b", t0.Add(lease-time.Second), ledger.Busy)
	if live.Record.Owner != "a" {
		t.Errorf("busy record owner %q, want a", live.Record.Owner)
	}

	b := claimAs(t, l, key1, md5A, "b", t0.Add(lease), ledger.Proceed)
	if b.Record.Attempt != 2 || b.Record.Owner != "b" || !b.Record.LeaseUntil.Equal(t0.Add(2*lease)) {
		t.Errorf("takeover record %+v, want attempt 2 owned by b until %v", b.Record, t0.Add(2*lease))
	}
	if diff := cmp.Diff(&a.Record, b.Previous); diff != "" {
		t.Errorf("Previous (-want +got):\n%s", diff)
	}

	late := a.Record
	late.State = ledger.Done
	if err := l.Finish(t.Context(), late, t0.Add(lease+time.Minute)); !errors.Is(err, ledger.ErrLeaseLost) {
		t.Errorf("old owner's Finish = %v, want ErrLeaseLost", err)
	}
	if diff := cmp.Diff(b.Record, get(t, l, key1)); diff != "" {
		t.Errorf("record after the old owner's Finish (-want +got):\n%s", diff)
	}
	if got := finish(t, l, b.Record, ledger.Done, t0.Add(lease+2*time.Minute)); got.State != ledger.Done || got.Owner != "b" {
		t.Errorf("after the new owner's Finish: %+v", got)
	}
}

func testFailedIsRetried(t *testing.T, l *ledger.Ledger) {
	a := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed)
	rec := a.Record
	rec.Reason = "bigquery: 503 backend error"
	failed := finish(t, l, rec, ledger.Failed, t0.Add(time.Minute))
	if failed.State != ledger.Failed || !failed.LeaseUntil.IsZero() {
		t.Errorf("failed record %+v, want FAILED with the lease released", failed)
	}
	// Well within the old lease: a failed attempt holds nothing.
	b := claimAs(t, l, key1, md5A, "b", t0.Add(2*time.Minute), ledger.Proceed)
	if b.Record.Attempt != 2 {
		t.Errorf("retry attempt %d, want 2", b.Record.Attempt)
	}
	if diff := cmp.Diff(&failed, b.Previous); diff != "" {
		t.Errorf("Previous (-want +got):\n%s", diff)
	}
}

func testDuplicateContent(t *testing.T, l *ledger.Ledger) {
	c1 := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed)
	finish(t, l, c1.Record, ledger.Done, t0.Add(time.Minute))

	c2 := claimAs(t, l, key2, md5A, "b", t0.Add(time.Hour), ledger.DuplicateContent)
	if c2.Record.State != ledger.Duplicate || c2.Record.DuplicateOf == nil || *c2.Record.DuplicateOf != key1 {
		t.Fatalf("duplicate record %+v, want DUPLICATE of %s", c2.Record, key1)
	}
	if diff := cmp.Diff(c2.Record, get(t, l, key2)); diff != "" {
		t.Errorf("stored duplicate (-want +got):\n%s", diff)
	}
	// A duplicate is final, and itself a source of duplicates.
	claimAs(t, l, key2, md5A, "c", t0.Add(2*time.Hour), ledger.AlreadyFinished)
	// An overwrite with identical bytes (the object's newest loaded content)
	// changes nothing: a duplicate.
	claimAs(t, l, gen(key1, 1), md5A, "d", t0.Add(3*time.Hour), ledger.DuplicateContent)
	// Restoring an older content is not a copy: A, then B, then A again
	// must load A again, so that it is the newest generation counted.
	b := claimAs(t, l, gen(key1, 2), md5B, "e", t0.Add(4*time.Hour), ledger.Proceed)
	finish(t, l, b.Record, ledger.Done, t0.Add(4*time.Hour))
	claimAs(t, l, gen(key1, 3), md5A, "f", t0.Add(5*time.Hour), ledger.Proceed)
	// B is loaded now, so a copy of B under another name is a duplicate.
	claimAs(t, l, gen(key2, 1), md5B, "g", t0.Add(6*time.Hour), ledger.DuplicateContent)
	// Content never seen proceeds.
	claimAs(t, l, gen(key2, 2), "md5-new", "h", t0.Add(6*time.Hour), ledger.Proceed)
}

func testDuplicateWaitsForLiveOriginal(t *testing.T, l *ledger.Ledger) {
	c1 := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed)
	busy := claimAs(t, l, key2, md5A, "b", t0.Add(time.Minute), ledger.Busy)
	if busy.Record.Key != key1 || busy.Record.Owner != "a" {
		t.Errorf("busy record %+v, want key1's held by a", busy.Record)
	}
	if _, ok, _ := l.Get(t.Context(), key2); ok {
		t.Error("a busy claim wrote a record")
	}

	// The original fails: it may have committed its load before failing,
	// so the copy keeps waiting for the original's own redelivery.
	finish(t, l, c1.Record, ledger.Failed, t0.Add(2*time.Minute))
	claimAs(t, l, key2, md5A, "b", t0.Add(3*time.Minute), ledger.Busy)
	retry := claimAs(t, l, key1, md5A, "a2", t0.Add(4*time.Minute), ledger.Proceed)
	finish(t, l, retry.Record, ledger.Done, t0.Add(5*time.Minute))
	again := claimAs(t, l, key2, md5A, "b2", t0.Add(6*time.Minute), ledger.DuplicateContent)
	if *again.Record.DuplicateOf != key1 || again.Record.Attempt != 1 {
		t.Errorf("record %+v, want attempt 1, duplicate of %s", again.Record, key1)
	}
}

func testOnlyLoadedContentDeduplicates(t *testing.T, l *ledger.Ledger) {
	for i, tc := range []struct {
		name, md5 string
		state     ledger.State // the original's outcome; "" leaves its lease to expire
	}{
		{"empty md5", "", ledger.Done},
		{"skipped original", md5B, ledger.Skipped},
		{"rejected original (its generation was gone: nothing was read)", "md5-rejected", ledger.Rejected},
		{"expired original", "md5-expired", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k1, k2 := key1, key2
			k1.Generation, k2.Generation = int64(10*i+1), int64(10*i+2)
			c := claimAs(t, l, k1, tc.md5, "a", t0, ledger.Proceed)
			at := t0.Add(lease)
			if tc.state != "" {
				finish(t, l, c.Record, tc.state, t0)
				at = t0
			}
			claimAs(t, l, k2, tc.md5, "b", at, ledger.Proceed)
		})
	}
}

func testCountsRoundTrip(t *testing.T, l *ledger.Ledger) {
	rec := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed).Record
	rec.Feed, rec.Reason, rec.AlreadyLoaded = "lineas_pedido", "3 rows quarantined", true
	rec.Counts = ledger.Counts{Read: 4, Loaded: 1, Quarantined: 3, Rejects: map[string]int64{"column_count": 1, "negative_quantity": 1, "invalid_date": 1}}
	rec.Quarantine = "cuarentena/lineas_pedido/2026/11/29/pedidos.csv#1764410400000001.csv"
	rec.LoadID = "alpipe_load_landing_pedidos_1764410400000001_1"
	rec.Drift = &ledger.Drift{Added: []string{"canal"}, Missing: []string{"cliente_id"}}
	fin := t0.Add(90 * time.Second)
	got := finish(t, l, rec, ledger.Done, fin)
	rec.State, rec.FinishedAt, rec.LeaseUntil = ledger.Done, fin, time.Time{}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
}

func testFinishRefuses(t *testing.T, l *ledger.Ledger) {
	c := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed)
	for _, tc := range []struct {
		name string
		edit func(r *ledger.Record)
	}{
		{"in progress", func(r *ledger.Record) { r.State = ledger.InProgress }},
		{"duplicate", func(r *ledger.Record) { r.State = ledger.Duplicate }},
		{"unknown state", func(r *ledger.Record) { r.State = "LOADED" }},
		{"rows unaccounted", func(r *ledger.Record) {
			r.State, r.Counts = ledger.Done, ledger.Counts{Read: 5, Loaded: 3, Quarantined: 1}
		}},
		{"negative count", func(r *ledger.Record) { r.State, r.Counts = ledger.Failed, ledger.Counts{Read: -1} }},
		{"no owner", func(r *ledger.Record) { r.State = ledger.Done; r.Owner = "" }},
		{"other attempt", func(r *ledger.Record) { r.State = ledger.Done; r.Attempt = 7 }},
		{"unclaimed key", func(r *ledger.Record) { r.State = ledger.Done; r.Key = key2 }},
	} {
		rec := c.Record
		tc.edit(&rec)
		if err := l.Finish(t.Context(), rec, t0); err == nil {
			t.Errorf("%s: Finish succeeded", tc.name)
		}
	}
	if diff := cmp.Diff(c.Record, get(t, l, key1)); diff != "" {
		t.Errorf("record changed by refused Finish calls (-want +got):\n%s", diff)
	}
}

func testFinishIsIdempotent(t *testing.T, l *ledger.Ledger) {
	c := claimAs(t, l, key1, md5A, "a", t0, ledger.Proceed)
	first := finish(t, l, c.Record, ledger.Done, t0.Add(time.Minute))
	second := finish(t, l, c.Record, ledger.Done, t0.Add(2*time.Minute))
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("repeated Finish changed the record (-want +got):\n%s", diff)
	}
	rec := c.Record
	rec.State = ledger.Failed
	if err := l.Finish(t.Context(), rec, t0.Add(3*time.Minute)); !errors.Is(err, ledger.ErrLeaseLost) {
		t.Errorf("Finish with another outcome after DONE = %v, want ErrLeaseLost", err)
	}
}

func testListNewestFirst(t *testing.T, l *ledger.Ledger) {
	var want []string
	for i := range 5 {
		k := key1
		k.Generation = int64(100 + i)
		c := claimAs(t, l, k, "", "a", t0.Add(time.Duration(i)*time.Minute), ledger.Proceed)
		if i%2 == 0 {
			finish(t, l, c.Record, ledger.Done, t0.Add(time.Hour))
		}
		want = append([]string{k.String()}, want...)
	}
	recs, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Key.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
}

// testAwkwardNames: object names whose escaped form exceeds Firestore's
// 1,500-byte ID limit, or that look like reserved IDs, still get records.
func testAwkwardNames(t *testing.T, l *ledger.Ledger) {
	for _, tc := range []struct {
		name string
		key  ledger.Key
		md5  string
	}{
		{"long non-ASCII name", ledger.Key{Bucket: "landing", Object: strings.Repeat("ñ", 510) + ".csv", Generation: 1}, "md5-long"},
		{"long name, same prefix", ledger.Key{Bucket: "landing", Object: strings.Repeat("ñ", 510) + ".tsv", Generation: 1}, "md5-long2"},
		{"reserved-looking md5", ledger.Key{Bucket: "landing", Object: "x.csv", Generation: 1}, "__md5__"},
		{"slashes and spaces", ledger.Key{Bucket: "landing", Object: "a b/c%2F/../d.csv", Generation: 1}, "a/b+c=="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claimAs(t, l, tc.key, tc.md5, "a", t0, ledger.Proceed)
			if got := get(t, l, tc.key); got.Key != tc.key {
				t.Errorf("record key %v, want %v", got.Key, tc.key)
			}
		})
	}
}

func testLocks(t *testing.T, l *ledger.Ledger) {
	const name = "refresh/ventas_diarias_sku"
	lock := func(step, owner string, at time.Time, want bool) {
		t.Helper()
		if got, err := l.Lock(t.Context(), name, owner, at, time.Minute); err != nil || got != want {
			t.Fatalf("%s: Lock = %v, %v; want %v", step, got, err, want)
		}
	}
	unlock := func(owner string) {
		t.Helper()
		if err := l.Unlock(t.Context(), name, owner); err != nil {
			t.Fatal(err)
		}
	}
	lock("free lock is taken", "a", t0, true)
	lock("held by another", "b", t0.Add(30*time.Second), false)
	lock("holder extends it", "a", t0.Add(40*time.Second), true)
	lock("expired lease is taken over", "b", t0.Add(2*time.Minute), true)
	unlock("a")
	lock("old holder cannot release it", "c", t0.Add(2*time.Minute+time.Second), false)
	unlock("b")
	lock("released by its holder, free again", "c", t0.Add(2*time.Minute+2*time.Second), true)
}

// testReleaseLeases: a process killed mid-attempt leaves a live lease and
// a held lock. Without proof of its death the next claimant waits for the
// lease to expire (production); ReleaseLeases, called by a process that
// alone opens the store, frees both at once and leaves finished records
// alone.
func testReleaseLeases(t *testing.T, l *ledger.Ledger) {
	ctx := t.Context()
	const lockName = "refresh/ventas_diarias_sku"
	claimAs(t, l, key1, md5A, "killed", t0, ledger.Proceed)
	if ok, err := l.Lock(ctx, lockName, "killed", t0, 5*time.Minute); err != nil || !ok {
		t.Fatalf("killed run's Lock = %v, %v", ok, err)
	}
	done := finish(t, l, claimAs(t, l, key2, md5B, "other", t0, ledger.Proceed).Record, ledger.Done, t0)

	restart := t0.Add(time.Minute)
	claimAs(t, l, key1, md5A, "next", restart, ledger.Busy)
	if ok, err := l.Lock(ctx, lockName, "next", restart, 5*time.Minute); err != nil || ok {
		t.Fatalf("Lock of a live lock = %v, %v; want false", ok, err)
	}

	const why = "abandoned: its process died"
	n, err := l.ReleaseLeases(ctx, restart, why)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("ReleaseLeases released %d, want 2 (a record and a lock)", n)
	}
	next := claimAs(t, l, key1, md5A, "next", restart, ledger.Proceed)
	if next.Previous == nil || next.Previous.State != ledger.Failed || next.Previous.Owner != "killed" || next.Previous.Reason != why {
		t.Errorf("Previous = %+v, want the killed attempt, FAILED with reason %q", next.Previous, why)
	}
	if ok, err := l.Lock(ctx, lockName, "next", restart, 5*time.Minute); err != nil || !ok {
		t.Errorf("Lock after ReleaseLeases = %v, %v; want true", ok, err)
	}
	if got := get(t, l, key2); got.State != ledger.Done || !got.FinishedAt.Equal(done.FinishedAt) {
		t.Errorf("finished record after ReleaseLeases: %+v, want it unchanged", got)
	}
}
