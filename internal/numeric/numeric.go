// Package numeric holds exact decimal amounts with the scale of BigQuery
// NUMERIC (9 fractional digits) as scaled 64-bit integers.
//
// Money never passes through float64: it is parsed from text into a Dec,
// added and multiplied exactly, and written back as a decimal string, which is
// how BigQuery's JSON load and streaming APIs accept NUMERIC without loss.
//
// A Dec covers ±9,223,372,036.854775807. That is far beyond any order line,
// daily SKU total or hourly country total of the shop; every operation that
// could leave the range reports ErrOverflow instead of wrapping, so an
// impossible figure is rejected with a reason rather than silently corrupted.
package numeric

import (
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"strconv"
)

// Scale is the number of fractional digits kept, as in BigQuery NUMERIC.
const Scale = 9

const unit = 1_000_000_000 // 10^Scale

// Dec is an exact decimal: the value is int64(d) / 10^9.
type Dec int64

var (
	// ErrSyntax reports text that is not a plain decimal number.
	ErrSyntax = errors.New("not a decimal number")
	// ErrPrecision reports more fractional digits than NUMERIC keeps.
	ErrPrecision = errors.New("more than 9 decimal places")
	// ErrOverflow reports a value outside the range a Dec can hold.
	ErrOverflow = errors.New("decimal out of range")
)

// Parse reads a decimal such as "89.90", "-3", "+0.5" or ".5". When comma is
// true a single ',' is accepted as the decimal separator instead of '.'
// (the Spanish ERP writes "89,90"). Exponents, thousands separators and
// surrounding spaces are rejected: normalising those is the caller's choice.
func Parse(s string, comma bool) (Dec, error) {
	return parse(s, comma)
}

// ParseBytes is Parse for a byte slice, without allocating.
func ParseBytes(b []byte, comma bool) (Dec, error) {
	return parse(b, comma)
}

func parse[T string | []byte](s T, comma bool) (Dec, error) {
	if len(s) == 0 {
		return 0, ErrSyntax
	}
	i := 0
	neg := false
	switch s[0] {
	case '-':
		neg = true
		i++
	case '+':
		i++
	}
	var intPart, frac uint64
	intDigits, fracDigits := 0, 0
	seenSep := false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d := uint64(c - '0')
			if seenSep {
				if fracDigits == Scale {
					if d != 0 {
						return 0, ErrPrecision
					}
					continue // trailing zeros beyond the scale are harmless
				}
				frac = frac*10 + d
				fracDigits++
				continue
			}
			if intPart > (math.MaxInt64/unit)/10+1 {
				return 0, ErrOverflow
			}
			intPart = intPart*10 + d
			intDigits++
		case (c == '.' && !comma) || (c == ',' && comma):
			if seenSep {
				return 0, ErrSyntax
			}
			seenSep = true
		default:
			return 0, ErrSyntax
		}
	}
	if intDigits == 0 && fracDigits == 0 {
		return 0, ErrSyntax
	}
	for n := fracDigits; n < Scale; n++ {
		frac *= 10
	}
	hi, lo := bits.Mul64(intPart, unit)
	if hi != 0 {
		return 0, ErrOverflow
	}
	total, carry := bits.Add64(lo, frac, 0)
	if carry != 0 {
		return 0, ErrOverflow
	}
	if neg {
		if total > 1<<63 {
			return 0, ErrOverflow
		}
		return Dec(-int64(total)), nil //nolint:gosec // range checked above
	}
	if total > math.MaxInt64 {
		return 0, ErrOverflow
	}
	return Dec(total), nil
}

// FromInt returns n as a Dec.
func FromInt(n int64) (Dec, error) {
	return Dec(0).AddMul(1, n)
}

// Add returns d+o or ErrOverflow.
func (d Dec) Add(o Dec) (Dec, error) {
	s := d + o
	if (s > d) != (o > 0) {
		return 0, ErrOverflow
	}
	return s, nil
}

// Sub returns d-o or ErrOverflow.
func (d Dec) Sub(o Dec) (Dec, error) {
	s := d - o
	if (s < d) != (o > 0) {
		return 0, ErrOverflow
	}
	return s, nil
}

// MulInt returns d*n exactly, or ErrOverflow.
func (d Dec) MulInt(n int64) (Dec, error) {
	if d == 0 || n == 0 {
		return 0, nil
	}
	p := d * Dec(n)
	if p/Dec(n) != d || (d == -1 && n == math.MinInt64) || (n == -1 && d == math.MinInt64) {
		return 0, ErrOverflow
	}
	return p, nil
}

// AddMul returns d + unitsOf(m)*n where m counts whole units, used to build
// a Dec from an integer without a separate conversion path.
func (d Dec) AddMul(m, n int64) (Dec, error) {
	whole, err := Dec(unit).MulInt(m)
	if err != nil {
		return 0, err
	}
	p, err := whole.MulInt(n)
	if err != nil {
		return 0, err
	}
	return d.Add(p)
}

// String renders the shortest exact decimal: "179.8", "-0.05", "0".
func (d Dec) String() string {
	var buf [32]byte
	return string(d.AppendText(buf[:0]))
}

// AppendText appends String's form of d to b without allocating.
func (d Dec) AppendText(b []byte) []byte {
	v := uint64(d)
	if d < 0 {
		b = append(b, '-')
		v = uint64(-d) //nolint:gosec // two's complement gives MinInt64's magnitude
	}
	b = strconv.AppendUint(b, v/unit, 10)
	frac := v % unit
	if frac == 0 {
		return b
	}
	var digits [Scale]byte
	n := Scale
	for i := Scale - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	for n > 0 && digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// MarshalJSON writes d as a JSON string, the lossless form for NUMERIC.
func (d Dec) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '"')
	b = d.AppendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string ("179.80") or a bare JSON number
// token (179.80) and parses its text exactly, never through float64. JSON
// null is a no-op, as encoding/json expects of every Unmarshaler, so that a
// null NUMERIC leaves the field (or a nil *Dec) alone instead of failing the
// whole document.
func (d *Dec) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) >= 2 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	v, err := ParseBytes(b, false)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
