// Package render prints what the CLI and the demo show: query results in
// every format (table, text, csv, json, jsonl), the one JSON style of every
// --format json, and the counts, amounts and times that every line of the
// CLI is written with (stream's lines of ticks and orders too). There is
// one renderer so that a value reads the same wherever it appears; money
// in particular always has its scale (179.80, never 179.8). It imports no
// engine (stream, window), so that the engines can print with it.
package render

import (
	"fmt"
	"strings"
	"time"
)

// WhenLayout is how a time reads for people, always in UTC and saying so:
// "2026-03-14 17:05 UTC". Machine output (JSON, RFC 3339) is JSON's.
const WhenLayout = "2006-01-02 15:04 UTC"

// When writes t for people (WhenLayout); the zero time, which means
// "never" or "unknown" wherever it is kept, is "-", never 0001-01-01.
func When(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(WhenLayout)
}

// Duration is the one way a duration reads for people, in the CLI and on
// the dashboard (assets/dashboard.js, function duration, writes the same):
// two units, the second padded, rounded to the second: 262d 13h, 2h05m,
// 4m05s, 42s, 0s.
func Duration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	sec := int64(d.Round(time.Second) / time.Second)
	days, h, m, s := sec/86400, sec%86400/3600, sec%3600/60, sec%60
	switch {
	case days > 0:
		return fmt.Sprintf("%s%dd %dh", sign, days, h)
	case h > 0:
		return fmt.Sprintf("%s%dh%02dm", sign, h, m)
	case m > 0:
		return fmt.Sprintf("%s%dm%02ds", sign, m, s)
	}
	return fmt.Sprintf("%s%ds", sign, s)
}

// Short writes a duration as the declarations do: 1h, 15m, 1h30m, 1m30s,
// 0s, without Go's trailing zero units.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
