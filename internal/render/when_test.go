package render

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDuration: one duration format for people; status used to print Go's
// "6302h43m3s behind" where the dashboard said "262d 13h".
func TestDuration(t *testing.T) {
	for sec, want := range DurationTable(t) {
		if got := Duration(time.Duration(sec) * time.Second); got != want {
			t.Errorf("Duration(%ds) = %q, want %q", sec, got, want)
		}
	}
}

// DurationTable reads testdata/durations.txt.
func DurationTable(t *testing.T) map[int64]string {
	t.Helper()
	f, err := os.Open("testdata/durations.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int64]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, text, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("durations.txt: %q: %v", line, err)
		}
		out[n] = text
	}
	return out
}

// TestWhen: people read a date, hours and minutes, and the zone; never
// Go's zero time.
func TestWhen(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{name: "UTC", in: time.Date(2026, 12, 2, 7, 34, 21, 0, time.UTC), want: "2026-12-02 07:34 UTC"},
		{name: "other zone shown in UTC", in: time.Date(2026, 3, 14, 19, 10, 0, 0, time.FixedZone("CET", 3600)), want: "2026-03-14 18:10 UTC"},
		{name: "zero", in: time.Time{}, want: "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := When(tt.in); got != tt.want {
				t.Errorf("When = %q, want %q", got, tt.want)
			}
		})
	}
}
