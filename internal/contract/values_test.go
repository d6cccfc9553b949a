package contract

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/language"
)

func TestParseInt(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		want        int64
		ok, inRange bool
	}{
		{name: "zero", in: "0", want: 0, ok: true, inRange: true},
		{name: "plain", in: "42", want: 42, ok: true, inRange: true},
		{name: "plus", in: "+7", want: 7, ok: true, inRange: true},
		{name: "minus", in: "-2", want: -2, ok: true, inRange: true},
		{name: "leading zeros", in: "007", want: 7, ok: true, inRange: true},
		{name: "max", in: "9223372036854775807", want: math.MaxInt64, ok: true, inRange: true},
		{name: "min", in: "-9223372036854775808", want: math.MinInt64, ok: true, inRange: true},
		{name: "max plus one", in: "9223372036854775808", ok: true},
		{name: "min minus one", in: "-9223372036854775809", ok: true},
		{name: "huge", in: "99999999999999999999999", ok: true},
		{name: "huge then letter is a syntax error", in: "99999999999999999999999x"},
		{name: "empty", in: ""},
		{name: "sign only", in: "-"},
		{name: "decimal", in: "1.0"},
		{name: "decimal comma", in: "1,0"},
		{name: "exponent", in: "1e3"},
		{name: "space", in: " 1"},
		{name: "double sign", in: "--1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok, inRange := parseInt([]byte(tt.in))
			if ok != tt.ok || inRange != tt.inRange || (ok && inRange && n != tt.want) {
				t.Errorf("parseInt(%q) = %d, %v, %v; want %d, %v, %v", tt.in, n, ok, inRange, tt.want, tt.ok, tt.inRange)
			}
			if want, err := strconv.ParseInt(tt.in, 10, 64); err == nil && (!ok || !inRange || n != want) {
				t.Errorf("strconv accepts %q as %d", tt.in, want)
			}
		})
	}
}

// TestParseDateEveryDay checks every calendar day of 1600..2400 against the
// time package, leap rules included.
func TestParseDateEveryDay(t *testing.T) {
	d := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2401, 1, 1, 0, 0, 0, 0, time.UTC)
	for ; d.Before(end); d = d.AddDate(0, 0, 1) {
		s := d.Format(time.DateOnly)
		days, ok := parseDate([]byte(s))
		if !ok || int64(days) != d.Unix()/86400 {
			t.Fatalf("parseDate(%q) = %d, %v; want %d", s, days, ok, d.Unix()/86400)
		}
	}
}

// TestCountries checks the list against x/text's region data, which also
// knows the reserved and withdrawn codes we refuse.
func TestCountries(t *testing.T) {
	codes := strings.Fields(iso3166Alpha2)
	if len(codes) != 249 {
		t.Errorf("%d codes, want the 249 assigned ones", len(codes))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if seen[c] {
			t.Errorf("%s listed twice", c)
		}
		seen[c] = true
		r, err := language.ParseRegion(c)
		if err != nil || !r.IsCountry() {
			t.Errorf("%s: x/text does not know it as a country (%v)", c, err)
		}
		if country([]byte(c)) != c || !IsCountry(c) {
			t.Errorf("country(%q) = %q, IsCountry %v", c, country([]byte(c)), IsCountry(c))
		}
	}
	var refused []string
	for _, c := range []string{"UK", "EU", "XK", "XX", "YU", "AN", "ZZ", "es", "E", "ESP", "", "É"} {
		if country([]byte(c)) != "" || IsCountry(c) {
			refused = append(refused, c)
		}
	}
	if diff := cmp.Diff([]string(nil), refused); diff != "" {
		t.Errorf("codes that should be refused (-want +got):\n%s", diff)
	}
}
