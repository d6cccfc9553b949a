package stream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

// countingStore counts committed transactions' document reads and writes.
type countingStore struct {
	docstore.Store
	mu                 sync.Mutex
	txs, reads, writes int
}

type cost struct{ Transactions, Reads, Writes int }

func (s *countingStore) take() cost {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := cost{s.txs, s.reads, s.writes}
	s.txs, s.reads, s.writes = 0, 0, 0
	return c
}

func (s *countingStore) RunTx(ctx context.Context, fn func(context.Context, docstore.Tx) error) error {
	var reads, writes int
	err := s.Store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		reads, writes = 0, 0
		return fn(ctx, countingTx{Tx: tx, reads: &reads, writes: &writes})
	})
	if err == nil {
		s.mu.Lock()
		s.txs, s.reads, s.writes = s.txs+1, s.reads+reads, s.writes+writes
		s.mu.Unlock()
	}
	return err
}

type countingTx struct {
	docstore.Tx
	reads, writes *int
}

func (t countingTx) Get(paths ...string) ([]docstore.Doc, error) {
	*t.reads += len(paths)
	return t.Tx.Get(paths...)
}
func (t countingTx) Set(d docstore.Doc) error { *t.writes++; return t.Tx.Set(d) }
func (t countingTx) Delete(path string) error { *t.writes++; return t.Tx.Delete(path) }

// TestOrderCost pins what an order costs in the store with both shipped
// aggregations (the figures doc.go gives and docs/cost.md counts): one
// transaction; 2 watermarks, 1 dedup record and (delta + cell) per cell
// read; 1 dedup record and 1 delta per cell written; during the upgrade
// window, one more read per order (the legacy record). The first order of
// a process also reads the dedup control document once.
func TestOrderCost(t *testing.T) {
	ctx := context.Background()
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	body := func(id string, skus ...string) order.Delivery {
		lines := ""
		for i, s := range skus {
			if i > 0 {
				lines += ","
			}
			lines += `{"sku":"` + s + `","cantidad":1,"precio_unitario":"1.00"}`
		}
		return order.Delivery{Format: "push", Message: order.Message{MessageID: "m-" + id,
			Data:       []byte(`{"pedido_id":"` + id + `","pais":"ES","importe_total":"9.00","lineas":[` + lines + `]}`),
			Attributes: map[string]string{order.EventTimeAttribute: at(17, 5).Format(time.RFC3339Nano)}}}
	}
	tests := []struct {
		name   string
		legacy bool // the store holds a watermark of the previous layout
		later  time.Duration
		skus   []string
		want   cost
	}{
		// cells: 1 (pais) + 4 windows x k SKUs
		{name: "one SKU", skus: []string{"A"}, want: cost{Transactions: 1, Reads: 3 + 2*5, Writes: 1 + 5}},
		{name: "two SKUs", skus: []string{"A", "B"}, want: cost{Transactions: 1, Reads: 3 + 2*9, Writes: 1 + 9}},
		{name: "one SKU during the upgrade window", legacy: true, skus: []string{"A"}, want: cost{Transactions: 1, Reads: 4 + 2*5, Writes: 1 + 5}},
		{name: "one SKU after the upgrade window", legacy: true, later: stream.DedupRetention + stream.LegacyDedupMargin,
			skus: []string{"A"}, want: cost{Transactions: 1, Reads: 3 + 2*5, Writes: 1 + 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &countingStore{Store: newBoltStore(t)}
			if tt.legacy {
				loadFixture(t, st, "testdata/upgrade/layout1.json")
			}
			p, err := stream.New(st, streamtest.NewSink(), []window.Spec{window.Defaults(), skuSpec()}, streamtest.IsCountry, logging.Discard())
			if err != nil {
				t.Fatal(err)
			}
			// The first order of the process also reads (and on a new
			// store creates) the control document.
			if _, err := p.Handle(ctx, body("C-0", tt.skus...), at(17, 10)); err != nil {
				t.Fatal(err)
			}
			st.take()
			res, err := p.Handle(ctx, body("C-1", tt.skus...), at(17, 10).Add(tt.later))
			if err != nil || res.Fate() != stream.Accepted {
				t.Fatalf("%+v %v", res, err)
			}
			if diff := cmp.Diff(tt.want, st.take()); diff != "" {
				t.Errorf("cost of an order (-want +got):\n%s", diff)
			}
		})
	}
}
