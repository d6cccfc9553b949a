package main

import (
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
)

func TestServeBannerShowsTheClock(t *testing.T) {
	got := clockBanner(local.VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)))
	if want := "clock: virtual, at 2026-03-14 17:00 UTC; it moves only with alpipe tick --now T"; got != want {
		t.Errorf("virtual banner = %q, want %q", got, want)
	}
	if got := clockBanner(local.WallClock()); !strings.Contains(got, "wall clock") {
		t.Errorf("wall banner = %q", got)
	}
}
