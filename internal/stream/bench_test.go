package stream_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

type nopSink struct{}

func (nopSink) Append(context.Context, string, []warehouse.Row) error { return nil }

// benchDelivery renders order i of a benchmark: keys round-robin, event
// times spread over the ten minutes before now, all in one hourly window.
func benchDelivery(i int64, keys []string, now time.Time) order.Delivery {
	pais := keys[int(i)%len(keys)]
	return delivery("B-"+strconv.FormatInt(i, 10), now.Add(-time.Duration(i%600)*time.Second),
		`"cliente_id":"C-1","pais":"`+pais+`","importe_total":"179.80",`+
			`"lineas":[{"sku":"MOCH-40L-AZ","cantidad":2,"precio_unitario":"89.90"}]`)
}

// BenchmarkHandle measures sustained orders per second through
// Processor.Handle on the embedded store, with as many deliveries in flight
// as a busy Cloud Run instance serves (80 per instance by default), over
// 30 country keys and over one hot key.
func BenchmarkHandle(b *testing.B) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"uniform-30-keys", streamtest.Countries},
		{"hot-key", []string{"ES"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			p := newProcessor(b, newBoltStore(b), nopSink{}, window.Defaults())
			ctx := context.Background()
			now := time.Date(2026, 3, 14, 17, 30, 0, 0, time.UTC)
			var seq atomic.Int64
			b.SetParallelism(40) // x GOMAXPROCS goroutines
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					d := benchDelivery(seq.Add(1), tc.keys, now)
					res, err := p.Handle(ctx, d, now)
					if err != nil {
						b.Error(err)
						return
					}
					if res.Fate() != stream.Accepted {
						b.Errorf("order %s: %s", res.PedidoID, res.Fate())
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orders/s")
		})
	}
}
