package stream_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

func hotDelivery(id string, event time.Time) order.Delivery {
	return delivery(id, event,
		`"pais":"ES","importe_total":"1.25","lineas":[{"sku":"A","cantidad":2,"precio_unitario":"0.625"}]`)
}

// TestHandleBatchSplitsAtTransactionLimits hands one batch more orders than
// one transaction may write (each order writes its dedup record), with
// duplicates inside it: it takes more than one transaction, every order
// counts exactly once, and the pane holds them all.
func TestHandleBatchSplitsAtTransactionLimits(t *testing.T) {
	p := newProcessor(t, newBoltStore(t), nopSink{}, window.Defaults())
	now := at(18, 30)
	const distinct = 700
	var pushes []stream.Push
	for i := range distinct {
		d := hotDelivery(fmt.Sprintf("P-%04d", i), now.Add(-time.Minute))
		pushes = append(pushes, stream.Push{Delivery: d, Now: now})
		if i%7 == 0 {
			pushes = append(pushes, stream.Push{Delivery: d, Now: now}) // redelivered into the same batch
		}
	}
	res, err := p.HandleBatch(t.Context(), pushes)
	if err != nil {
		t.Fatal(err)
	}
	fates := map[stream.Fate]int{}
	for _, r := range res {
		fates[r.Fate()]++
	}
	if diff := cmp.Diff(map[stream.Fate]int{stream.Accepted: distinct, stream.Duplicate: len(pushes) - distinct}, fates); diff != "" {
		t.Errorf("fates (-want +got):\n%s", diff)
	}
	if b := res[0].Batch; b.Deliveries != len(pushes) || b.Transactions < 2 || b.Transactions > 3 {
		t.Errorf("batch %+v, want %d deliveries in 2 or 3 transactions", b, len(pushes))
	}
	tr, err := p.Tick(t.Context(), now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if ps := tr.Aggregations[0].Panes; len(ps) != 1 || ps[0].Measures.Pedidos != distinct || ps[0].Measures.Unidades != 2*distinct {
		t.Fatalf("panes %+v, want one holding %d orders", ps, distinct)
	}
}

// TestBatchAnswersEveryDeliveryWithItsBatch sends concurrent deliveries
// through a batching processor: they share batches, a failed batch fails
// every delivery in it (so that Pub/Sub redelivers them all), and the
// redeliveries then count each order once.
func TestBatchAnswersEveryDeliveryWithItsBatch(t *testing.T) {
	store := streamtest.NewRecorder(newBoltStore(t))
	p := newProcessorWith(t, store, nopSink{}, []window.Spec{window.Defaults()},
		stream.WithBatching(200*time.Millisecond, 50))
	now := at(18, 30)
	send := func(n int) ([]stream.Result, []error) {
		res, errs := make([]stream.Result, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				res[i], errs[i] = p.Handle(t.Context(), hotDelivery(fmt.Sprintf("P-%03d", i), now.Add(-time.Minute)), now)
			})
		}
		wg.Wait()
		return res, errs
	}
	store.FailGets(func(string) bool { return true })
	if _, errs := send(120); slices.Contains(errs, nil) {
		t.Fatalf("deliveries succeeded while the store was down: %v", errs)
	}
	store.FailGets(nil)
	res, errs := send(120)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	batches := map[string]int{}
	for _, r := range res {
		if r.Fate() != stream.Accepted {
			t.Errorf("order %s: %s", r.PedidoID, r.Fate())
		}
		batches[r.Batch.ID]++
	}
	if len(batches) > 60 {
		t.Errorf("120 concurrent deliveries made %d batches, want them to share batches", len(batches))
	}
	for id, n := range batches {
		if n > 50 {
			t.Errorf("batch %s held %d deliveries, more than the 50 allowed", id, n)
		}
	}
	res, errs = send(120)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Fate() != stream.Duplicate {
			t.Errorf("redelivered order %s: %s, want a duplicate", r.PedidoID, r.Fate())
		}
	}
	tr, err := p.Tick(t.Context(), now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if ps := tr.Aggregations[0].Panes; len(ps) != 1 || ps[0].Measures.Pedidos != 120 {
		t.Fatalf("panes %+v, want one holding 120 orders", ps)
	}
}

func TestMaxClockSkewOption(t *testing.T) {
	p := newProcessorWith(t, newBoltStore(t), nopSink{}, []window.Spec{window.Defaults()},
		stream.WithMaxClockSkew(time.Hour))
	now := at(18, 30)
	for _, tc := range []struct {
		name  string
		ahead time.Duration
		want  stream.Fate
	}{
		{"an hour ahead", time.Hour, stream.Accepted},
		{"an hour and a second ahead", time.Hour + time.Second, stream.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := p.Handle(t.Context(), hotDelivery("P-"+tc.name, now.Add(tc.ahead)), now)
			if err != nil || res.Fate() != tc.want {
				t.Errorf("%+v, %v; want %s", res, err, tc.want)
			}
		})
	}
}
