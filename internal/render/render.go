// Package render is the one renderer of the CLI, the demo and the engines'
// lines, so that a value reads the same wherever it appears: money always
// with its scale (179.80, never 179.8). It imports no engine (stream,
// window), so that the engines can print with it.
package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// When writes t for people, in UTC and saying so; the zero time, which
// means "never" or "unknown" wherever it is kept, is "-".
func When(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Duration is the one way a duration reads for people (the dashboard's
// assets/dashboard.js writes the same): 262d 13h, 2h05m, 4m05s, 42s, 0s.
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

// Short writes a duration as the declarations do: 1h, not Go's 1h0m0s.
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

func Thousands[T ~int | ~int64](n T) string {
	return GroupDigits(strconv.FormatInt(int64(n), 10))
}

// Counted: 1 pane, 1,200 panes.
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}

func GroupDigits(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// Scaled pads a decimal string to cents (179.8 -> 179.80) without rounding
// away a digit (1234567.125 stays). Every NUMERIC column is DECIMAL(38,9) in
// both warehouses, which answer with the shortest exact decimal ("179.8"):
// no type carries the scale an amount is written in.
func Scaled(v string) string {
	if v == "" || v == "NULL" {
		return v
	}
	i, f, _ := strings.Cut(v, ".")
	return i + "." + f + strings.Repeat("0", max(0, 2-len(f)))
}

func Money(d numeric.Dec) string { return Scaled(d.String()) }

// OneLine keeps a recorded reason (which may quote message text, with its
// line ends) on one line of a report.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip is OneLine cut to n runes (so an accented letter is never cut in two),
// ending in "..." when cut.
func Clip(s string, n int) string {
	s = OneLine(s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-3]) + "..."
	}
	return s
}
