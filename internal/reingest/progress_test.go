package reingest_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
)

func TestProgressETA(t *testing.T) {
	tests := []struct {
		name string
		p    reingest.Progress
		want time.Duration
		ok   bool
	}{
		{name: "still counting", p: reingest.Progress{Total: -1, Done: 3, Elapsed: time.Second}},
		{name: "nothing done yet", p: reingest.Progress{Total: 4, TotalBytes: 400, Elapsed: time.Second}},
		{name: "by bytes", p: reingest.Progress{Total: 10, TotalBytes: 1000, Done: 2, DoneBytes: 250, WorkBytes: 250, Elapsed: 10 * time.Second}, want: 30 * time.Second, ok: true},
		{name: "skipped bytes count as done, not as rate", p: reingest.Progress{Total: 10, TotalBytes: 1000, Done: 4, DoneBytes: 500, WorkBytes: 250, Elapsed: 10 * time.Second}, want: 20 * time.Second, ok: true},
		{name: "empty objects: by count", p: reingest.Progress{Total: 4, Done: 2, Elapsed: 10 * time.Second}, want: 10 * time.Second, ok: true},
		{name: "finished", p: reingest.Progress{Total: 4, Done: 4, Elapsed: time.Minute}, want: 0, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.p.ETA()
			if got != tt.want || ok != tt.ok {
				t.Errorf("ETA() = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestProgressPrinter(t *testing.T) {
	obj := objects.Attrs{Bucket: "b", Name: "exportaciones/2026/03/14/p.csv", Generation: 7, Size: 100}
	done := &reingest.Outcome{Object: obj, Record: ledger.Record{State: ledger.Done, Counts: ledger.Counts{Read: 1500, Loaded: 1497, Quarantined: 3}}}
	skipped := &reingest.Outcome{Object: obj, Skipped: true, Record: ledger.Record{State: ledger.Duplicate}}
	failed := &reingest.Outcome{Object: obj, Err: errors.New("load into lineas_pedido:\n  timeout")}
	at := reingest.Progress{Total: 8, TotalBytes: 800, Done: 2, DoneBytes: 200, WorkBytes: 200, Rows: 3000, Elapsed: 2 * time.Second}
	tests := []struct {
		name    string
		tty     bool
		updates []reingest.Progress
		want    string
	}{
		{
			name: "log lines, one per object",
			updates: []reingest.Progress{
				with(at, done), with(at, nil), with(at, skipped), with(at, failed),
			},
			want: "backfill 2/8 gs://b/exportaciones/2026/03/14/p.csv#7 DONE rows 1,500 loaded 1,497 quarantined 3 (1,500 rows/s, ETA 6s)\n" +
				"backfill 2/8 gs://b/exportaciones/2026/03/14/p.csv#7 skipped: already DUPLICATE (1,500 rows/s, ETA 6s)\n" +
				"backfill 2/8 gs://b/exportaciones/2026/03/14/p.csv#7 FAILED: load into lineas_pedido: timeout (1,500 rows/s, ETA 6s)\n",
		},
		{
			name:    "only skips so far: no rate, no ETA",
			updates: []reingest.Progress{{Total: 8, TotalBytes: 800, Done: 1, DoneBytes: 100, Elapsed: 30 * time.Millisecond, Last: skipped}},
			want:    "backfill 1/8 gs://b/exportaciones/2026/03/14/p.csv#7 skipped: already DUPLICATE\n",
		},
		{
			name:    "log lines while the count is unknown",
			updates: []reingest.Progress{{Total: -1, Done: 1, Rows: 1500, Elapsed: time.Second, Last: done}},
			want:    "backfill 1/? gs://b/exportaciones/2026/03/14/p.csv#7 DONE rows 1,500 loaded 1,497 quarantined 3 (1,500 rows/s, ETA ?)\n",
		},
		{
			name:    "terminal line",
			tty:     true,
			updates: []reingest.Progress{with(at, done)},
			want:    "\r[######------------------] 2/8 objects  3,000 rows  1,500 rows/s  ETA 6s\n",
		},
		{
			name:    "terminal line: throttled updates, the last drawn on finish",
			tty:     true,
			updates: []reingest.Progress{{Total: -1, Done: 1, Rows: 10, Elapsed: time.Second}, {Total: -1, Done: 2, Rows: 20, Elapsed: time.Second}},
			want:    "\r1 object (listing...)  10 rows  10 rows/s  ETA ?\r2 objects (listing...)  20 rows  20 rows/s  ETA ?\n",
		},
		{
			name:    "terminal line while listing",
			tty:     true,
			updates: []reingest.Progress{{Total: -1, Done: 1234, Rows: 1234567, Elapsed: time.Second}},
			want:    "\r1,234 objects (listing...)  1,234,567 rows  1,234,567 rows/s  ETA ?\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := reingest.NewProgressPrinter(&buf, tt.tty)
			for _, u := range tt.updates {
				p.Update(u)
			}
			p.Finish()
			if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func with(p reingest.Progress, last *reingest.Outcome) reingest.Progress {
	p.Last = last
	return p
}
