package dashboard_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/stream"
)

// TestMonitorReadsTheLogContract: the panel's figures come from the lines
// the log-based metrics count (terraform/logging_metrics.tf), written as
// the stream and the ingester write them, on the server's clock.
func TestMonitorReadsTheLogContract(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	m := dashboard.NewMonitor(func() time.Time { return now })
	var out, all strings.Builder
	// all is the whole log, DEBUG lines too, which a second Monitor reads
	// back as another process's output (ObserveLine).
	both := slog.NewMultiHandler(logging.New(&out, slog.LevelInfo).Handler(), logging.New(&all, slog.LevelDebug).Handler())
	log := slog.New(m.Handler(both)).With("function", "alpipe")
	m2 := dashboard.NewMonitor(func() time.Time { return now })
	feed := func() {
		for line := range strings.SplitSeq(strings.TrimSpace(all.String()), "\n") {
			m2.ObserveLine([]byte(line))
		}
		all.Reset()
	}
	ctx := context.Background()
	const agg = "ventas_hora_pais"
	accepted := func(id string) {
		log.DebugContext(ctx, "order handled", "pedido_id", id, "aggregation", agg, "fate", stream.Accepted)
	}
	accepted("P-1")
	accepted("P-2")
	log.DebugContext(ctx, "order handled", "pedido_id", "P-2", "aggregation", "ventas_sku_hora_movil", "fate", stream.Accepted)
	log.InfoContext(ctx, "order handled", "pedido_id", "P-3", "aggregation", agg, "fate", stream.TooLate)
	log.InfoContext(ctx, "message dead-lettered", "pedido_id", "P-4", "fate", stream.Invalid, "reason", `invalid: importe_total "x" is not a decimal number`, "duplicate", false)
	log.InfoContext(ctx, "message dead-lettered", "pedido_id", "P-4", "fate", stream.Invalid, "reason", `invalid: importe_total "x" is not a decimal number`, "duplicate", true)
	log.WarnContext(ctx, "file done", "state", "DONE", "redelivered", false, "rows_read", int64(10), "rows_quarantined", int64(3), "reason", "")
	log.ErrorContext(ctx, "file rejected", "state", "REJECTED", "redelivered", false, "rows_read", int64(0), "rows_quarantined", int64(0), "reason", "empty object")

	feed()
	now = now.Add(85 * time.Minute) // 18:25: the tick folds the orders of 17:00
	w := time.Date(2026, 3, 14, 18, 15, 0, 0, time.UTC)
	log.InfoContext(ctx, "tick", "aggregation", agg, "busy", false, "watermark", w, "watermark_lag_seconds", now.Sub(w).Seconds())
	feed()
	now = now.Add(2 * time.Minute) // a page read two minutes later

	got := m.Read(agg, now.Add(-24*time.Hour), now)
	ten, twelve := int64(600), int64(720)
	want := []dashboard.MinuteSample{
		{At: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC), Accepted: 2, TooLate: 1, DeadLetters: 1},
		{At: time.Date(2026, 3, 14, 18, 25, 0, 0, time.UTC), FreshnessSeconds: &ten, SystemLagSeconds: 85 * 60},
		{At: time.Date(2026, 3, 14, 18, 27, 0, 0, time.UTC), FreshnessSeconds: &twelve},
	}
	if diff := cmp.Diff(want, got.Minutes); diff != "" {
		t.Errorf("minutes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]dashboard.HourSample{{At: time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC), FilesLoaded: 1, RowsQuarantined: 3}}, got.Hours); diff != "" {
		t.Errorf("hours (-want +got):\n%s", diff)
	}
	if len(got.Errors) != 1 || got.Errors[0].Text != "file rejected function=alpipe state=REJECTED redelivered=false rows_read=0 rows_quarantined=0 reason=empty object" {
		t.Errorf("errors = %+v, want the one ERROR line with its fields", got.Errors)
	}
	// The same lines read from JSON text give the same panel, but for the
	// error line's time, which the text keeps to the nanosecond.
	fromText := m2.Read(agg, now.Add(-24*time.Hour), now)
	if diff := cmp.Diff(got, fromText, cmpopts.IgnoreFields(dashboard.ErrorLine{}, "Logged")); diff != "" {
		t.Errorf("read from the JSON lines (-direct +text):\n%s", diff)
	}
	if got.Backlog != nil || got.BacklogNote == "" {
		t.Errorf("backlog = %+v, note %q: want none, and the note saying why", got.Backlog, got.BacklogNote)
	}
	// The observer asks for the DEBUG lines, but the log still gets only
	// what its level lets through.
	if strings.Contains(out.String(), `"severity":"DEBUG"`) || !strings.Contains(out.String(), `"message":"tick"`) {
		t.Errorf("log lines passed on:\n%s", out.String())
	}
}

// TestMonitorIsBounded: a server left running keeps MonitorMinutes minutes
// and MonitorErrors lines, the newest.
func TestMonitorIsBounded(t *testing.T) {
	now := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	m := dashboard.NewMonitor(func() time.Time { return now })
	log := slog.New(m.Handler(slog.DiscardHandler))
	for i := range dashboard.MonitorMinutes + 100 {
		log.Error("tick failed", "error", fmt.Sprint("attempt ", i))
		log.Debug("order handled", "aggregation", "a", "fate", "accepted")
		now = now.Add(time.Minute)
	}
	got := m.Read("a", time.Time{}, now)
	if n := len(got.Minutes); n != dashboard.MonitorMinutes+1 { // and the current minute
		t.Errorf("%d minutes kept, want %d and the current one", n, dashboard.MonitorMinutes)
	}
	if n := len(got.Errors); n != dashboard.MonitorErrors || got.Errors[0].Text != fmt.Sprint("tick failed error=attempt ", dashboard.MonitorMinutes+99) {
		t.Errorf("%d errors kept, the newest %q; want %d, newest first", n, got.Errors[0].Text, dashboard.MonitorErrors)
	}
}

type backlogFunc func(context.Context) (dashboard.Backlog, error)

func (f backlogFunc) Backlog(ctx context.Context) (dashboard.Backlog, error) { return f(ctx) }

// TestMonitorBacklog: where a Pub/Sub tells the backlog, the panel shows
// it instead of the note; where it cannot be read, the page says why.
func TestMonitorBacklog(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	m := dashboard.NewMonitor(func() time.Time { return now })
	src := dashboard.Source{Monitor: m, Now: func() time.Time { return now },
		Backlog: backlogFunc(func(context.Context) (dashboard.Backlog, error) {
			return dashboard.Backlog{Undelivered: 7, OldestUnackedAgeSeconds: 90}, nil
		})}
	snap := dashboard.TakeFiltered(context.Background(), src, dashboard.Filter{})
	if snap.Monitor == nil || snap.Monitor.Backlog == nil || *snap.Monitor.Backlog != (dashboard.Backlog{Undelivered: 7, OldestUnackedAgeSeconds: 90}) || snap.Monitor.BacklogNote != "" {
		t.Errorf("monitor = %+v, want the backlog read", snap.Monitor)
	}
	src.Backlog = backlogFunc(func(context.Context) (dashboard.Backlog, error) {
		return dashboard.Backlog{}, fmt.Errorf("emulator down")
	})
	snap = dashboard.TakeFiltered(context.Background(), src, dashboard.Filter{})
	if got := snap.Errors["backlog"]; got != "read the backlog: emulator down" {
		t.Errorf("errors = %v, want the backlog's", snap.Errors)
	}
}
