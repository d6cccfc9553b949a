package stream_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
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

// BenchmarkSessionTick measures the CPU a minute's tick of
// sesiones_cliente spends at the modelled worst case (tools/cost): 5,600
// customers with an open session each, held in the default parts, and 35
// new customers' orders since the last tick (50,000 a day), so that every
// part is read, folded and written; and beside it with 100 open customers
// in one part. It reports the process's CPU time (getrusage) per tick,
// store included.
func BenchmarkSessionTick(b *testing.B) {
	for _, open := range []int{100, 5600} {
		b.Run(strconv.Itoa(open)+"-open", func(b *testing.B) { benchSessionTick(b, open) })
	}
}

func benchSessionTick(b *testing.B, open int) {
	ctx := context.Background()
	s := windowtest.SessionSpec()
	st := newBoltStore(b)
	p := newProcessor(b, st, nopSink{}, s)
	now := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	seq := 0
	handle := func(n int, event time.Time) {
		for n > 0 {
			var pushes []stream.Push
			for range min(n, stream.MaxBatchOrders) {
				seq++
				pushes = append(pushes, stream.Push{Now: now, Delivery: customerDelivery("S-"+strconv.Itoa(seq), "C-"+strconv.Itoa(seq), event)})
			}
			mustHandleBatch(b, p, pushes)
			n -= len(pushes)
		}
	}
	handle(open, now.Add(-time.Minute))
	mustTick(b, p, now)
	parts, err := st.List(ctx, "aggregations/"+s.Name+"/sessions")
	if err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		now = now.Add(time.Minute)
		handle(35, now.Add(-30*time.Second))
		runtime.GC() // not the handling's garbage
		before := cpuTime(b)
		b.StartTimer()
		tr := mustTick(b, p, now)
		cpu += cpuTime(b) - before
		if len(tr.Aggregations[0].Panes) < 35 {
			b.Fatalf("%d panes, want the new orders' EARLY panes", len(tr.Aggregations[0].Panes))
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/tick")
	b.ReportMetric(float64(len(parts)), "parts")
}

// cpuTime is the CPU the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
