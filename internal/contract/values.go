package contract

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// parseInt reads an optional sign and decimal digits. ok is false on a
// syntax error, inRange false when the value does not fit an int64.
// strconv.ParseInt would need a string, i.e. an allocation per value.
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

// parseDate reads a real calendar date written YYYY-MM-DD, within BigQuery's
// DATE range (0001-01-01 to 9999-12-31), as days since 1970-01-01.
func parseDate(b []byte) (int32, bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(b[0:4])
	m, ok2 := digits(b[5:7])
	d, ok3 := digits(b[8:10])
	if !ok1 || !ok2 || !ok3 || y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

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

// appendUpper and appendLower append b with letters converted, ASCII first.
func appendUpper(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf {
			return appendMapped(dst, b[i:], unicode.ToUpper)
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func appendLower(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf {
			return appendMapped(dst, b[i:], unicode.ToLower)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func appendMapped(dst, b []byte, f func(rune) rune) []byte {
	for len(b) > 0 {
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

// cp1252 maps each Windows-1252 byte to its rune. The five bytes the code
// page leaves undefined map to utf8.RuneError.
var cp1252 = func() (t [256]rune) {
	for i := range t {
		t[i] = charmap.Windows1252.DecodeByte(byte(i))
	}
	return t
}()

// appendCP1252 appends b transcoded from Windows-1252 to UTF-8. ok is false
// when b holds a byte the code page does not define.
func appendCP1252(dst, b []byte) ([]byte, bool) {
	for _, c := range b {
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			continue
		}
		r := cp1252[c]
		if r == utf8.RuneError {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, true
}

// isASCII reports whether b needs no transcoding.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
