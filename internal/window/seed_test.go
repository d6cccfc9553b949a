package window_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestSeedScenarios plays the specification's stories through the driver,
// logging each step to a golden file in testdata/seeds/ named by the story's ID.
func TestSeedScenarios(t *testing.T) {
	for _, tt := range windowtest.Seeds() {
		t.Run(tt.Name, func(t *testing.T) {
			spec := window.Defaults()
			if tt.Change != nil {
				tt.Change(&spec)
			}
			drv := newDriver(spec)
			a := drv.aggs[0]
			model := windowtest.NewMulti(spec)
			var log strings.Builder
			for i, e := range tt.Events {
				model.Apply(e)
				seen, wmBefore := len(drv.seen), a.ws.Watermark
				panes, err := drv.apply(e)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				logEvent(&log, spec, e, wmBefore, seen == len(drv.seen), a, panes)
			}
			got := a.panes
			windowtest.SortPanes(got)
			if diff := cmp.Diff(tt.Panes, got); diff != "" {
				t.Errorf("panes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.Drops, a.drops); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
			if w := a.ws.Watermark; !w.Equal(tt.Watermark) {
				t.Errorf("W = %s, want %s", w.In(windowtest.Spain), tt.Watermark)
			}
			modelPanes := model.Panes(spec.Name)
			windowtest.SortPanes(modelPanes)
			if diff := cmp.Diff(tt.Panes, modelPanes); diff != "" {
				t.Errorf("the reference model disagrees with the story (-want +model):\n%s", diff)
			}
			if diff := cmp.Diff(tt.Drops, model.Drops(spec.Name)); diff != "" {
				t.Errorf("the reference model's drops disagree with the story (-want +model):\n%s", diff)
			}
			if err := model.CheckPanes(spec.Name, got); err != nil {
				t.Errorf("invariants: %v", err)
			}
			golden(t, filepath.Join("testdata", "seeds", tt.ID+".golden"), log.String())
		})
	}
}

// logEvent renders one step of a story for people: what happened to the
// message or the watermark, and the panes it emitted.
func logEvent(b *strings.Builder, spec window.Spec, e windowtest.MultiEvent, wmBefore time.Time, dup bool, a *aggDocs, panes []window.Pane) {
	clock := func(t time.Time) string {
		if t.IsZero() {
			return "-inf"
		}
		return t.In(windowtest.Spain).Format("15:04:05")
	}
	switch e.Kind {
	case windowtest.Tick:
		fmt.Fprintf(b, "%s tick           W %s -> %s\n", clock(e.Now), clock(wmBefore), clock(a.ws.Watermark))
	case windowtest.Deliver:
		o := e.Order
		w := spec.WindowOf(o.EventTime)
		fate := spec.Classify(w, wmBefore).String()
		switch {
		case dup:
			fate = "duplicate"
		case a.fates[windowtest.OrderWindow{PedidoID: o.PedidoID, WindowStart: w.Start}] == windowtest.Dropped:
			fate = "dropped (too_late)"
		}
		fmt.Fprintf(b, "%s deliver %-4s %s %s made %s window %s: %s\n", clock(e.Now), e.MessageID, o.PedidoID, o.Pais,
			clock(o.EventTime), w.Start.In(windowtest.Spain).Format("15:04"), fate)
	}
	for _, p := range panes {
		fmt.Fprintf(b, "           pane %s %-7s importe=%s pedidos=%d unidades=%d W=%s\n",
			p.ID(), p.Timing, p.Measures.Importe, p.Measures.Pedidos, p.Measures.Unidades, clock(p.Watermark))
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
