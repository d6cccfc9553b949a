package status_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/stream"
)

// fakeStream answers a fixed status, as a processor whose state holds
// cells the ticks cannot process would.
type fakeStream struct{ status []stream.AggregationStatus }

func (f fakeStream) Status(context.Context, time.Time) ([]stream.AggregationStatus, error) {
	return f.status, nil
}
func (fakeStream) DeadLettersPending(context.Context) (int, error) { return 0, nil }

// TestStatusFailingCells: the status report lists every window the ticks
// cannot process with its extent, since when, the error and the document
// to repair (a previous layout's cell with its key too), and says nothing
// about failing windows when there are none.
func TestStatusFailingCells(t *testing.T) {
	w := time.Date(2026, 3, 15, 6, 0, 0, 0, time.UTC)
	win := stream.FailingWindow{
		Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/state/20260315T060000Z_0",
		WindowStart: w, WindowEnd: w.Add(time.Hour), Since: w.Add(70 * time.Minute),
		Error: "decode window: layout 9 found,\nthis binary reads layouts 1 to 3",
	}
	cell := stream.FailingWindow{
		Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/windows/20260315T070000Z_es",
		WindowStart: w.Add(time.Hour), WindowEnd: w.Add(2 * time.Hour), Key: "es", Since: w.Add(80 * time.Minute),
		Error: "decode cell: layout 9 found",
	}
	doc := stream.FailingWindow{Aggregation: "ventas_hora_pais", Path: "aggregations/ventas_hora_pais/state/garbage", Error: "not a state path"}
	tests := []struct {
		name      string
		failing   []stream.FailingWindow
		wantLines string // the report's failing section, "" for none
	}{
		{name: "none", failing: nil, wantLines: ""},
		{name: "one window", failing: []stream.FailingWindow{win}, wantLines: `  failing: 1 window the ticks cannot process (every other window goes on; these are retried at every tick):
    2026-03-15 06:00 to 07:00 UTC since 2026-03-15 07:10 UTC: decode window: layout 9 found, this binary reads layouts 1 to 3
      document aggregations/ventas_hora_pais/state/20260315T060000Z_0
`},
		{name: "a window, a previous layout's cell and a document without a window", failing: []stream.FailingWindow{win, cell, doc}, wantLines: `  failing: 3 windows the ticks cannot process (every other window goes on; these are retried at every tick):
    2026-03-15 06:00 to 07:00 UTC since 2026-03-15 07:10 UTC: decode window: layout 9 found, this binary reads layouts 1 to 3
      document aggregations/ventas_hora_pais/state/20260315T060000Z_0
    2026-03-15 07:00 to 08:00 UTC es since 2026-03-15 07:20 UTC: decode cell: layout 9 found
      document aggregations/ventas_hora_pais/windows/20260315T070000Z_es
    aggregations/ventas_hora_pais/state/garbage: not a state path
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := status.Sources{
				Stream: fakeStream{[]stream.AggregationStatus{{Aggregation: "ventas_hora_pais", Failing: tt.failing}}},
				Now:    func() time.Time { return morning },
			}
			rep := status.BuildReport(context.Background(), src, status.Options{})
			if len(rep.Stream) != 1 || len(rep.Stream[0].Failing) != len(tt.failing) {
				t.Fatalf("report stream %+v, want %d failing cells", rep.Stream, len(tt.failing))
			}
			var buf bytes.Buffer
			if err := status.WriteText(&buf, rep); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			start := strings.Index(got, "  failing: ")
			if tt.wantLines == "" {
				if start >= 0 || strings.Contains(got, "failing") {
					t.Errorf("report mentions failing cells when there are none:\n%s", got)
				}
				return
			}
			if start < 0 {
				t.Fatalf("report lacks the failing cells:\n%s", got)
			}
			end := strings.Index(got[start:], "\n\n")
			if end < 0 {
				end = len(got) - start
			} else {
				end++
			}
			if diff := cmp.Diff(tt.wantLines, got[start:start+end]); diff != "" {
				t.Errorf("failing section (-want +got):\n%s\nwhole report:\n%s", diff, got)
			}
		})
	}
}
