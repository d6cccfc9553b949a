package window_test

import (
	"math/rand/v2"
	"testing"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// BenchmarkTickCell is the pure work of a tick per open (window, key) whose
// orders are spread over 8 partial sums, when the trigger runs.
func BenchmarkTickCell(b *testing.B) {
	s := window.Defaults()
	shards := make([]window.Partial, 8)
	for i := range shards {
		shards[i] = part(ms("100", 3, 4), true, 1, "17:50", "17:49", "17:50")
	}
	st := state(1, ms("100", 3, 4), "")
	wm, now := clk("17:40"), clk("17:52")
	for b.Loop() {
		c, err := window.Combine(st, shards)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.OnTick(cellWK, st, c, wm, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream plays a 200-event random stream through the in-test
// driver (JSON round trip of every document included).
func BenchmarkStream(b *testing.B) {
	spec := window.Defaults()
	events := windowtest.Stream(rand.New(rand.NewPCG(1, 1)), spec, windowtest.StreamConfig{})
	for b.Loop() {
		d := newDriver(spec)
		for _, e := range events {
			if _, err := d.apply(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}
