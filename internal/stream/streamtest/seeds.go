package streamtest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// The suite's hand-written stories share the seed stories' day and zone.
var spain = windowtest.Spain

func at(hhmmss string) time.Time { return windowtest.At(hhmmss) }

func tick(now string) windowtest.MultiEvent { return windowtest.TickAt(now) }

// seedFates are the processor's answers to each delivery of a seed story, in
// order, by the story's ID: the reference model has no notion of a duplicate.
func seedFates() map[string][]stream.Fate {
	const (
		A = stream.Accepted
		D = stream.Duplicate
		T = stream.TooLate
	)
	return map[string][]stream.Fate{
		"metro":                        {A, A, D, A},
		"late-and-too-late":            {A, A, T},
		"late-and-too-late-discarding": {A, A, T},
		"late-delay":                   {A, A, A},
		"only-late":                    {A, A},
		"duplicates":                   {A, D, D, D, D},
		"no-order-yet":                 {A},
	}
}

func testSeeds(t *testing.T, en env) {
	fates := seedFates()
	for _, tt := range windowtest.Seeds() {
		t.Run(tt.Name, func(t *testing.T) {
			wantFates, ok := fates[tt.ID]
			if !ok {
				t.Fatalf("no fates for seed story %q in seedFates", tt.ID)
			}
			spec := window.Defaults()
			if tt.Change != nil {
				tt.Change(&spec)
			}
			r := newRig(t, en, spec)
			model := windowtest.NewMulti(spec)
			var fates []stream.Fate
			var w time.Time
			for i, e := range tt.Events {
				res, tr, err := r.step(t, model, i, e)
				if err != nil {
					t.Fatalf("event %d: Tick: %v", i, err)
				}
				if e.Kind == windowtest.Deliver {
					fates = append(fates, res.Fate())
				} else {
					w = tr.Aggregations[0].Watermark
				}
			}
			if diff := cmp.Diff(wantFates, fates); diff != "" {
				t.Errorf("fates (-want +got):\n%s", diff)
			}
			got := r.panes()
			windowtest.SortPanes(got)
			if diff := cmp.Diff(tt.Panes, got); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.Drops, r.drops(spec.Name)); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
			if !w.Equal(tt.Watermark) {
				t.Errorf("W = %s, want %s", w.In(spain), tt.Watermark)
			}
			if err := model.CheckPanes(spec.Name, got); err != nil {
				t.Errorf("invariants: %v", err)
			}
			r.clean()
		})
	}
}
