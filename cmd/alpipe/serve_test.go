package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/localapi"
)

func TestServeBannerShowsTheClock(t *testing.T) {
	got := clockBanner(clock.Virtual(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)))
	if want := "clock: virtual, at 2026-03-14 17:00 UTC; it moves only with alpipe tick --now T"; got != want {
		t.Errorf("virtual banner = %q, want %q", got, want)
	}
	if got := clockBanner(clock.Wall()); !strings.Contains(got, "wall clock") {
		t.Errorf("wall banner = %q", got)
	}
}

// TestFunctionRoutesMatchTheFunctions: the client reaches the functions at
// localapi's names; the wiring table is where a function's name is given.
// This is where a drift would show.
func TestFunctionRoutesMatchTheFunctions(t *testing.T) {
	got := []string{localapi.IngestCSV, localapi.AggregateOrders, localapi.AdvanceWatermark, localapi.FinalizedType}
	want := []string{functions.IngestCSVName, functions.AggregateOrdersName, functions.AdvanceWatermarkName, functions.FinalizedType}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("function names (-functions +localapi):\n%s", diff)
	}
}

// TestServeLogFormat: JSON for Cloud Logging when stderr is not a terminal
// (the README's background serve flooded the terminal), text on request.
func TestServeLogFormat(t *testing.T) {
	tests := []struct {
		name, format, want string
	}{
		{name: "default off a terminal is JSON", format: "", want: `"message":"hello"`},
		{name: "text", format: "text", want: "msg=hello"},
		{name: "json", format: "json", want: `"severity":"INFO"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "log"))
			if err != nil {
				t.Fatal(err)
			}
			l, err := serveLogger(tt.format, f)
			if err != nil {
				t.Fatal(err)
			}
			l.Info("hello")
			f.Close()
			b, _ := os.ReadFile(f.Name())
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("log %q lacks %q", b, tt.want)
			}
		})
	}
}
