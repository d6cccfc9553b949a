package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/aggregation"
)

func TestTickProblems(t *testing.T) {
	half := Tick{
		Interval: 30 * time.Second,
		Queue:    "projects/alpipe-dev-example/locations/europe-west1/queues/alpipe-ticks",
		URL:      "https://alpipe-watermark-123456789012.europe-west1.run.app",
		Invoker:  "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com",
	}
	decl := func(file string, e, ld time.Duration) aggregation.Declaration {
		return aggregation.Declaration{File: file, EarlyDelay: e, LateDelay: ld}
	}
	for _, tc := range []struct {
		name string
		tick Tick
		ds   []aggregation.Declaration
		want []string // substrings, one per problem
	}{
		{name: "default minute", tick: Tick{Interval: time.Minute}, ds: []aggregation.Declaration{decl("declarations/a.json", time.Minute, time.Minute)}},
		{name: "early 0s at any interval", tick: Tick{Interval: time.Minute}, ds: []aggregation.Declaration{decl("declarations/a.json", 0, time.Minute)}},
		{name: "half minute, 30s delays", tick: half, ds: []aggregation.Declaration{decl("declarations/a.json", 30*time.Second, 30*time.Second)}},
		{name: "30s delays on a minute deployment", tick: Tick{Interval: time.Minute},
			ds:   []aggregation.Declaration{decl("declarations/a.json", 30*time.Second, 30*time.Second)},
			want: []string{"declarations/a.json: early_delay 30s is shorter than TICK_INTERVAL=1m,", "declarations/a.json: late_delay 30s is shorter"}},
		{name: "other interval", tick: Tick{Interval: 15 * time.Second}, want: []string{"TICK_INTERVAL=15s: want 1m"}},
		{name: "half minute without a queue", tick: Tick{Interval: 30 * time.Second, URL: half.URL, Invoker: half.Invoker}, want: []string{"needs TICK_QUEUE"}},
		{name: "queue on a minute deployment", tick: Tick{Interval: time.Minute, Queue: half.Queue}, want: []string{"TICK_INTERVAL=1m schedules no follow-up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.tick.problems(tc.ds)
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	if diff := cmp.Diff(time.Minute, TickDeadline); diff != "" {
		t.Errorf("TickDeadline (-want +got):\n%s", diff)
	}
}
