package docstoretest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

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
	errs := make(chan error, contenders)
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
				if err := tx.Set(doc(fmt.Sprintf("attempts/g%02d-%d", g, attempt), `{}`)); err != nil {
					return err
				}
				c.N++
				b, _ := json.Marshal(c)
				return tx.Set(docstore.Doc{Path: "counter/c", Data: b})
			})
			last[g] = attempt
			if err != nil {
				errs <- fmt.Errorf("goroutine %d: %w", g, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
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
	docs, err := s.List(t.Context(), "attempts")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Path)
	}
	if diff := diffStrings(want, got); diff != "" {
		t.Errorf("attempt markers (-want +got): only committed attempts may leave one\n%s", diff)
	}
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
