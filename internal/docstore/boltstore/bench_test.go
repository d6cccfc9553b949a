package boltstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// BenchmarkRunTx measures small read-modify-write transactions (one Get,
// one Set of ~200 bytes), each fsynced before RunTx returns.
func BenchmarkRunTx(b *testing.B) {
	data := []byte(`{"state":"DONE","counts":{"read":800000,"loaded":799997,"quarantined":3},"owner":"instance-7f3a","attempt":1,"feed":"lineas_pedido","reason":""}`)
	rmw := func(path string) func(context.Context, docstore.Tx) error {
		return func(_ context.Context, tx docstore.Tx) error {
			if _, err := tx.Get(path); err != nil {
				return err
			}
			return tx.Set(docstore.Doc{Path: path, Data: data})
		}
	}
	b.Run("serial", func(b *testing.B) {
		s := newStore(b)
		for i := 0; b.Loop(); i++ {
			if err := s.RunTx(b.Context(), rmw(fmt.Sprintf("ledger/k%d", i%1000))); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
	})
	for _, par := range []int{4, 32} {
		b.Run(fmt.Sprintf("parallel-%dxGOMAXPROCS", par), func(b *testing.B) {
			s := newStore(b)
			var n atomic.Int64
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if err := s.RunTx(context.Background(), rmw(fmt.Sprintf("ledger/k%d", i%1000))); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tx/s")
		})
	}
}
