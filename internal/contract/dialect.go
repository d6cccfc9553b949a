package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Dialect is how a feed's files are written: CSV syntax, numbers and dates.
// It is declared, never guessed per row (only SniffDelimiter chooses).
type Dialect struct {
	delimiters []byte // candidates, in declared order; the first is the default
	quote      byte
	thousands  byte // 0: no grouping accepted
	dates      []dateLayout
}

func (f *Feed) Quote() byte { return f.dialect.quote }

// SniffDelimiter picks the declared delimiter that occurs most often outside
// quotes in a file's header line (the first declared on a tie). Rows are
// never looked at: a value holding a semicolon must not change the split.
func (f *Feed) SniffDelimiter(header []byte) byte {
	ds := f.dialect.delimiters
	if len(ds) == 1 {
		return ds[0]
	}
	if i := bytes.IndexByte(header, '\n'); i >= 0 {
		header = header[:i]
	}
	best, bestN := ds[0], 0
	for _, d := range ds {
		n, quoted := 0, false
		for _, c := range header {
			switch {
			case c == f.dialect.quote:
				quoted = !quoted
			case c == d && !quoted:
				n++
			}
		}
		if n > bestN {
			best, bestN = d, n
		}
	}
	return best
}

// delimiterDecl is "delimiter": ";" or "delimiter": [",", ";"].
type delimiterDecl []string

func (d *delimiterDecl) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*d = delimiterDecl{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New(`delimiter: want a string or a list of strings, e.g. [",", ";"]`)
	}
	*d = many
	return nil
}

func compileDialect(d declaration) (Dialect, error) {
	dl := Dialect{quote: '"'}
	if d.Quote != "" {
		if len(d.Quote) != 1 || !strings.Contains(`"'`, d.Quote) {
			return Dialect{}, fmt.Errorf(`quote %q: want "\"" or "'"`, d.Quote)
		}
		dl.quote = d.Quote[0]
	}
	if len(d.Delimiter) == 0 {
		if d.Delimiter != nil {
			return Dialect{}, errors.New("delimiter: empty list")
		}
		dl.delimiters = []byte{','}
	}
	for _, s := range d.Delimiter {
		if len(s) != 1 || !strings.Contains(",;\t|", s) {
			return Dialect{}, fmt.Errorf(`delimiter %q: want one of ",", ";", "\t", "|"`, s)
		}
		if bytes.IndexByte(dl.delimiters, s[0]) >= 0 {
			return Dialect{}, fmt.Errorf("delimiter %q: listed twice", s)
		}
		dl.delimiters = append(dl.delimiters, s[0])
	}
	switch d.ThousandsSeparator {
	case "":
	case ".", " ", "'":
		dl.thousands = d.ThousandsSeparator[0]
	default:
		return Dialect{}, fmt.Errorf(`thousands_separator %q: want ".", " " or "'"`, d.ThousandsSeparator)
	}
	var err error
	if dl.dates, err = compileDateFormats(d.DateFormats); err != nil {
		return Dialect{}, err
	}
	return dl, nil
}

// ISODate is the date format every feed reads first.
const ISODate = "YYYY-MM-DD"

// dateLayout is a compiled fixed-width date format such as DD/MM/YYYY.
type dateLayout struct {
	text       string
	y, m, d    int // offsets of the year (4 digits), month and day (2 digits)
	sep1, sep2 int // offsets of the separators, -1 when the format has none
	sep        byte
	width      int
}

// compileDateFormats checks a date_formats list, which must start with
// YYYY-MM-DD: ISO dates are always read first.
func compileDateFormats(formats []string) ([]dateLayout, error) {
	if formats == nil {
		return nil, nil
	}
	if len(formats) == 0 || formats[0] != ISODate {
		return nil, fmt.Errorf("date_formats: must start with %q (ISO dates are always tried first)", ISODate)
	}
	var out []dateLayout
	seen := map[string]bool{ISODate: true}
	for _, s := range formats[1:] {
		l, err := compileDateLayout(s)
		if err != nil {
			return nil, fmt.Errorf("date_formats: %w", err)
		}
		if seen[s] {
			return nil, fmt.Errorf("date_formats: %q listed twice", s)
		}
		seen[s] = true
		for _, o := range out {
			if o.width == l.width && o.sep == l.sep && o.y == l.y {
				// DD/MM/YYYY next to MM/DD/YYYY: 03/04/2026 would be read
				// as whichever comes first, silently.
				return nil, fmt.Errorf("date_formats: %q and %q are ambiguous", o.text, s)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// compileDateLayout reads a format made of YYYY, MM and DD, once each, with
// one separator among / - . between them, or none (YYYYMMDD).
func compileDateLayout(s string) (dateLayout, error) {
	l := dateLayout{text: s, y: -1, m: -1, d: -1, sep1: -1, sep2: -1}
	bad := fmt.Errorf("%q: want YYYY, MM and DD once each, separated by one of / - . or by nothing", s)
	seps := 0
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "YYYY") && l.y < 0:
			l.y = i
			i += 4
		case strings.HasPrefix(s[i:], "MM") && l.m < 0:
			l.m = i
			i += 2
		case strings.HasPrefix(s[i:], "DD") && l.d < 0:
			l.d = i
			i += 2
		case strings.IndexByte("/-.", s[i]) >= 0 && (l.sep == 0 || l.sep == s[i]) && seps < 2:
			l.sep = s[i]
			if seps == 0 {
				l.sep1 = i
			} else {
				l.sep2 = i
			}
			seps++
			i++
		default:
			return dateLayout{}, bad
		}
	}
	if l.y < 0 || l.m < 0 || l.d < 0 || (seps != 0 && seps != 2) {
		return dateLayout{}, bad
	}
	l.width = len(s)
	return l, nil
}

func (l *dateLayout) parse(b []byte) (int32, bool) {
	if len(b) != l.width || (l.sep1 >= 0 && (b[l.sep1] != l.sep || b[l.sep2] != l.sep)) {
		return 0, false
	}
	y, ok1 := digits(b[l.y : l.y+4])
	m, ok2 := digits(b[l.m : l.m+2])
	d, ok3 := digits(b[l.d : l.d+2])
	if !ok1 || !ok2 || !ok3 || y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// DateFormats returns the date formats the feed reads, ISO first.
func (f *Feed) DateFormats() []string {
	out := []string{ISODate}
	for _, l := range f.dialect.dates {
		out = append(out, l.text)
	}
	return out
}

// ungroup appends v without the thousands separators of its integer part
// ("1.234.567,89" -> "1234567,89"); false when not grouped in threes.
func ungroup(dst []byte, v []byte, sep byte) ([]byte, bool) {
	i := 0
	if len(v) > 0 && (v[0] == '-' || v[0] == '+') {
		dst = append(dst, v[0])
		i = 1
	}
	end := bytes.IndexByte(v, ',')
	if end < 0 {
		end = len(v)
	}
	intPart := v[i:end]
	group := 0
	first := true
	for k, c := range intPart {
		if c == sep {
			if (first && (group == 0 || group > 3)) || (!first && group != 3) || k == len(intPart)-1 {
				return dst, false
			}
			first = false
			group = 0
			continue
		}
		dst = append(dst, c)
		group++
	}
	if !first && group != 3 {
		return dst, false
	}
	return append(dst, v[end:]...), true
}
