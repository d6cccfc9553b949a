package window_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

func BenchmarkWindowOf(b *testing.B) {
	s := window.Defaults()
	t := ts("2026-03-14T18:42:00+01:00")
	for b.Loop() {
		t = t.Add(time.Second)
		_ = s.WindowOf(t)
	}
}

// BenchmarkAccept is the pure work of one order transaction.
func BenchmarkAccept(b *testing.B) {
	s := window.Defaults()
	o := order("P-000123", "ES", "2026-03-14T17:42:00Z", "179.80", 2)
	wm, now := ts("2026-03-14T17:30:00Z"), ts("2026-03-14T17:51:00Z")
	var sh window.Partial
	st := window.PaneState{NextIndex: 1}
	for b.Loop() {
		var err error
		if sh, err = s.Accept(sh, st, o, wm, now); err != nil {
			b.Fatal(err)
		}
		sh.Measures = window.Measures{}
	}
}

// BenchmarkTickCell is the pure work of a tick per open (window, key) when
// the key's orders are spread over 8 partial sums and the trigger runs.
// (State layout 3 keeps one sum per key, so its tick combines one.)
func BenchmarkTickCell(b *testing.B) {
	s := window.Defaults()
	shards := make([]window.Partial, 8)
	for i := range shards {
		shards[i] = window.Partial{Measures: ms("100", 3, 4), OnTime: true, Epoch: 1,
			PendingSince: ts("2026-03-14T17:50:00Z"), MaxEventTime: ts("2026-03-14T17:49:00Z"), LastAccepted: ts("2026-03-14T17:50:00Z")}
	}
	st := window.PaneState{NextIndex: 1, Emitted: ms("100", 3, 4)}
	wm, now := ts("2026-03-14T17:40:00Z"), ts("2026-03-14T17:52:00Z")
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
