package contract

import (
	"encoding/binary"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// parseInt reads an optional sign and decimal digits without the string
// strconv.ParseInt needs. ok is false on a syntax error, inRange when the
// value does not fit an int64.
func parseInt(b []byte) (n int64, ok, inRange bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	if i == len(b) {
		return 0, false, false
	}
	var u uint64
	const limit = 1 << 63
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		d := uint64(c - '0')
		if u > (limit-d)/10 {
			// Keep scanning: a syntax error elsewhere is the better reason.
			for i++; i < len(b); i++ {
				if b[i] < '0' || b[i] > '9' {
					return 0, false, false
				}
			}
			return 0, true, false
		}
		u = u*10 + d
	}
	if neg {
		return -int64(u), true, true //nolint:gosec // u <= 1<<63 and two's complement gives MinInt64
	}
	if u > limit-1 {
		return 0, true, false
	}
	return int64(u), true, true
}

var isoDate, _ = compileDateLayout(ISODate)

// parseDate reads a real calendar date written YYYY-MM-DD, within BigQuery's
// DATE range (0001-01-01 to 9999-12-31), as days since 1970-01-01.
func parseDate(b []byte) (int32, bool) { return isoDate.parse(b) }

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is Howard Hinnant's days_from_civil for the proleptic
// Gregorian calendar; time.Date would do, at several times the cost.
func daysFromCivil(y, m, d int) int32 {
	if m <= 2 {
		y--
	}
	era := y / 400 // y >= 0 here: years start at 1
	yoe := y - era*400
	mp := (m + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int32(era*146097 + doe - 719468) //nolint:gosec // |days| < 3e6
}

// appendCase appends b with its letters mapped by f, ASCII ones in from..to
// by flipping their case bit until the first non-ASCII byte.
func appendCase(dst, b []byte, from, to byte, f func(rune) rune) []byte {
	i := 0
	for ; i < len(b) && b[i] < utf8.RuneSelf; i++ {
		c := b[i]
		if from <= c && c <= to {
			c ^= 0x20
		}
		dst = append(dst, c)
	}
	for b = b[i:]; len(b) > 0; {
		r, n := utf8.DecodeRune(b)
		dst = utf8.AppendRune(dst, f(r))
		b = b[n:]
	}
	return dst
}

// cutRunes returns the prefix of b holding at most n runes; it cuts between
// UTF-8 sequences, never inside one. b is valid UTF-8.
func cutRunes(b []byte, n int) []byte {
	if len(b) <= n {
		return b // n bytes hold at least n runes
	}
	for i := range b {
		if utf8.RuneStart(b[i]) {
			if n == 0 {
				return b[:i]
			}
			n--
		}
	}
	return b
}

// charset decodes a single-byte encoding to UTF-8 by a table built from
// x/text's charmap: its Transformer costs an allocation per call.
type charset struct {
	name  string
	code  string // reject code for a byte the code page leaves undefined
	table [256]rune
}

// A charset added here is accepted by compile: name it in its error message
// (declaration.go) too.
var charsets = map[string]*charset{
	Windows1252: newCharset(Windows1252, CodeInvalidCP1252, charmap.Windows1252),
	// ISO-8859-1 defines all 256 bytes: its reject code is never given.
	ISO88591: newCharset(ISO88591, "invalid_iso88591", charmap.ISO8859_1),
}

func newCharset(name, code string, cm *charmap.Charmap) *charset {
	c := &charset{name: name, code: code}
	for i := range c.table {
		c.table[i] = cm.DecodeByte(byte(i))
	}
	return c
}

// append appends b transcoded to UTF-8. ok is false when b holds a byte the
// code page does not define (charmap decodes those to U+FFFD).
func (cs *charset) append(dst, b []byte) ([]byte, bool) {
	for _, c := range b {
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			continue
		}
		r := cs.table[c]
		if r == utf8.RuneError {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, true
}

// plainText reports whether b is ASCII without NUL bytes, 8 bytes at a
// time: a byte is 0 or >= 0x80 only if the high bit of x|(x-0x01..01) is
// set in it (a borrow may flag its neighbour too: a false "no").
func plainText(b []byte) bool {
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x|(x-0x0101010101010101))&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c == 0 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
