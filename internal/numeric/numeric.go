// Package numeric holds exact decimal amounts over the whole range of
// BigQuery NUMERIC (precision 38, scale 9). Money never passes through
// float64: it is parsed from text, computed exactly and written back as a
// decimal string, which BigQuery accepts for NUMERIC without loss.
//
// A Dec is a signed 128-bit integer of 10^-9 units in two words (math/bits).
// shopspring/decimal and cockroachdb/apd carry a big.Int, so every parsed
// amount would allocate on the CSV hot path; a Dec is comparable with ==
// and its zero value is 0. Every operation checks NUMERIC's range and
// reports ErrOverflow instead of wrapping, so a value BigQuery could not
// store is rejected where it arises rather than failing a load later.
package numeric

import (
	"encoding/json"
	"errors"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// Scale is the number of fractional digits kept, as in BigQuery NUMERIC.
const Scale = 9

// Precision is the number of significant digits NUMERIC keeps.
const Precision = 38

const unit = 1_000_000_000 // 10^Scale

// maxHi:maxLo is 10^38-1, the largest NUMERIC value in units.
const (
	maxHi = 0x4b3b4ca85a86c47a
	maxLo = 0x098a223fffffffff
)

// maxIntPart is the largest integer part NUMERIC holds: 29 nines.
var maxIntPart = Dec{hi: 0x1431e0fae, lo: 0x6d7217ca9fffffff} // 10^29-1

// Dec is an exact decimal: the value is the signed 128-bit integer hi:lo
// divided by 10^9. The zero value is 0; == compares values.
type Dec struct {
	hi, lo uint64
}

var (
	// ErrSyntax reports text that is not a plain decimal number.
	ErrSyntax = errors.New("not a decimal number")
	// ErrPrecision reports more fractional digits than NUMERIC keeps.
	ErrPrecision = errors.New("more than 9 decimal places")
	// ErrOverflow reports a value outside BigQuery NUMERIC's range.
	ErrOverflow = errors.New("outside NUMERIC's range of ±99999999999999999999999999999.999999999")
)

// Max is the largest NUMERIC value, 99999999999999999999999999999.999999999.
func Max() Dec { return Dec{hi: maxHi, lo: maxLo} }

// Min is the smallest NUMERIC value, -Max().
func Min() Dec { return Max().Neg() }

// FromNanos returns n units of 10^-9: FromNanos(1) is 0.000000001.
func FromNanos(n int64) Dec {
	return Dec{hi: uint64(n >> 63), lo: uint64(n)} //nolint:gosec // sign extension
}

// FromInt returns n as a Dec; every int64 is within range.
func FromInt(n int64) Dec {
	d, _ := Dec{lo: unit}.MulInt(n)
	return d
}

func (d Dec) BigNanos() *big.Int {
	m := d.abs()
	b := new(big.Int).SetUint64(m.hi)
	b.Lsh(b, 64)
	b.Or(b, new(big.Int).SetUint64(m.lo))
	if d.Sign() < 0 {
		b.Neg(b)
	}
	return b
}

func FromBigNanos(n *big.Int) (Dec, error) {
	a := new(big.Int).Abs(n)
	if a.BitLen() > 127 {
		return Dec{}, ErrOverflow
	}
	lo := new(big.Int).And(a, new(big.Int).SetUint64(^uint64(0))).Uint64()
	hi := new(big.Int).Rsh(a, 64).Uint64()
	d := Dec{hi: hi, lo: lo}
	if !d.inRange() {
		return Dec{}, ErrOverflow
	}
	if n.Sign() < 0 {
		d = d.Neg()
	}
	return d, nil
}

func (d Dec) Sign() int {
	switch {
	case d.hi>>63 != 0:
		return -1
	case d.hi == 0 && d.lo == 0:
		return 0
	}
	return 1
}

func (d Dec) IsZero() bool { return d == Dec{} }

// Equal reports d == o, for go-cmp, which cannot see the unexported words.
func (d Dec) Equal(o Dec) bool { return d == o }

func (d Dec) Cmp(o Dec) int {
	// Flipping the sign bit orders two's complement as unsigned.
	dh, oh := d.hi^1<<63, o.hi^1<<63
	switch {
	case dh < oh || dh == oh && d.lo < o.lo:
		return -1
	case d == o:
		return 0
	}
	return 1
}

// Neg returns -d; every NUMERIC value's negation is one.
func (d Dec) Neg() Dec {
	lo, borrow := bits.Sub64(0, d.lo, 0)
	hi, _ := bits.Sub64(0, d.hi, borrow)
	return Dec{hi: hi, lo: lo}
}

func (d Dec) abs() Dec {
	if d.hi>>63 != 0 {
		return d.Neg()
	}
	return d
}

// inRange reports whether d, read as an unsigned magnitude, is at most 10^38-1.
func (d Dec) inRange() bool {
	return d.hi < maxHi || d.hi == maxHi && d.lo <= maxLo
}

func (d Dec) Add(o Dec) (Dec, error) {
	lo, carry := bits.Add64(d.lo, o.lo, 0)
	hi, _ := bits.Add64(d.hi, o.hi, carry)
	// Two NUMERIC values of one sign can sum past 2^127 and wrap: the true
	// sum is below 2e38 in magnitude, so a wrapped one reads as 2^128 minus
	// it, above 1.4e38, which the range check refuses too.
	sum := Dec{hi: hi, lo: lo}
	if !sum.abs().inRange() {
		return Dec{}, ErrOverflow
	}
	return sum, nil
}

func (d Dec) Sub(o Dec) (Dec, error) {
	return d.Add(o.Neg())
}

// MulInt returns d*n exactly, or ErrOverflow.
func (d Dec) MulInt(n int64) (Dec, error) {
	if d.hi == 0 && n > 0 {
		// The common case: one multiplication.
		hi, lo := bits.Mul64(d.lo, uint64(n))
		p := Dec{hi: hi, lo: lo}
		if hi >= maxHi && !p.inRange() {
			return Dec{}, ErrOverflow
		}
		return p, nil
	}
	if d.IsZero() || n == 0 {
		return Dec{}, nil
	}
	m := d.abs()
	un := uint64(n) //nolint:gosec // magnitude taken below
	if n < 0 {
		un = -un
	}
	c1, lo := bits.Mul64(m.lo, un)
	c2, hi := bits.Mul64(m.hi, un)
	hi, c3 := bits.Add64(hi, c1, 0)
	p := Dec{hi: hi, lo: lo}
	if c2 != 0 || c3 != 0 || !p.inRange() {
		return Dec{}, ErrOverflow
	}
	if (d.hi>>63 != 0) != (n < 0) {
		p = p.Neg()
	}
	return p, nil
}

// Mul returns d*o when the product is a NUMERIC value: ErrPrecision when
// it needs more than 9 decimal places, ErrOverflow when it is too large.
func (d Dec) Mul(o Dec) (Dec, error) {
	a, b := d.abs(), o.abs()
	// The 256-bit product of the magnitudes, w3 most significant.
	h00, l00 := bits.Mul64(a.lo, b.lo)
	h01, l01 := bits.Mul64(a.lo, b.hi)
	h10, l10 := bits.Mul64(a.hi, b.lo)
	h11, l11 := bits.Mul64(a.hi, b.hi)
	w0 := l00
	w1, c := bits.Add64(h00, l01, 0)
	w2, c2 := bits.Add64(h01, l11, c)
	w3 := h11 + c2
	w1, c = bits.Add64(w1, l10, 0)
	w2, c2 = bits.Add64(w2, h10, c)
	w3 += c2
	// Divide by 10^9 from the top word down.
	var r uint64
	var q [4]uint64
	for i, w := range [4]uint64{w3, w2, w1, w0} {
		q[i], r = bits.Div64(r, w, unit)
	}
	p := Dec{hi: q[2], lo: q[3]}
	if q[0] != 0 || q[1] != 0 || !p.inRange() {
		return Dec{}, ErrOverflow
	}
	if r != 0 {
		return Dec{}, ErrPrecision
	}
	if (d.hi>>63 != 0) != (o.hi>>63 != 0) {
		p = p.Neg()
	}
	return p, nil
}

// smallInt bounds the integer part kept in one word: ten times it plus a
// digit still fits a uint64.
const smallInt = (1<<64 - 1 - 9) / 10

// Parse reads a decimal such as "89.90", "-3", "+0.5" or ".5", a byte
// slice without allocating; with comma, ',' is the decimal separator
// instead of '.'. Exponents, thousands separators and spaces are rejected:
// normalising those is the caller's.
//
// It keeps the integer part in one word while it fits, as a 64-bit decimal
// would, and in two words checked against NUMERIC's 29 integer digits beyond.
func Parse[T string | []byte](s T, comma bool) (Dec, error) {
	if len(s) == 0 {
		return Dec{}, ErrSyntax
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
	var w Dec // the integer part once it passed one word
	wide := false
	fracDigits, digits, seenSep := 0, false, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d := uint64(c - '0')
			digits = true
			if seenSep {
				if fracDigits == Scale {
					if d != 0 {
						return Dec{}, ErrPrecision
					}
					continue // trailing zeros beyond the scale are harmless
				}
				frac = frac*10 + d
				fracDigits++
				continue
			}
			if !wide {
				if intPart <= smallInt {
					intPart = intPart*10 + d
					continue
				}
				w, wide = Dec{lo: intPart}, true
			}
			// w <= 10^29 here, so ten times it plus a digit fits.
			h, l := bits.Mul64(w.lo, 10)
			l, carry := bits.Add64(l, d, 0)
			w = Dec{hi: w.hi*10 + h + carry, lo: l}
			if w.Cmp(maxIntPart) > 0 {
				return Dec{}, ErrOverflow
			}
		case (c == '.' && !comma) || (c == ',' && comma):
			if seenSep {
				return Dec{}, ErrSyntax
			}
			seenSep = true
		default:
			return Dec{}, ErrSyntax
		}
	}
	if !digits {
		return Dec{}, ErrSyntax
	}
	for n := fracDigits; n < Scale; n++ {
		frac *= 10
	}
	if !wide {
		w = Dec{lo: intPart}
	}
	// w <= 10^29-1, so w*10^9 + frac <= 10^38-1: in range.
	h, lo := bits.Mul64(w.lo, unit)
	lo, carry := bits.Add64(lo, frac, 0)
	v := Dec{hi: w.hi*unit + h + carry, lo: lo}
	if neg {
		v = v.Neg()
	}
	return v, nil
}

// String renders the shortest exact decimal: "179.8", "-0.05", "0".
func (d Dec) String() string {
	var buf [48]byte
	return string(d.AppendText(buf[:0]))
}

// AppendText appends String's form of d to b without allocating.
func (d Dec) AppendText(b []byte) []byte {
	if d.hi>>63 != 0 {
		b = append(b, '-')
	}
	m := d.abs()
	var frac uint64
	if m.hi == 0 {
		// Below 2^64 units a division by a constant is a multiplication,
		// where the 128-bit one costs a hardware divide.
		b = strconv.AppendUint(b, m.lo/unit, 10)
		frac = m.lo % unit
	} else {
		qhi, rhi := m.hi/unit, m.hi%unit
		var qlo uint64
		qlo, frac = bits.Div64(rhi, m.lo, unit)
		b = appendUint128(b, qhi, qlo)
	}
	if frac == 0 {
		return b
	}
	n := Scale
	for frac%10 == 0 {
		frac /= 10
		n--
	}
	var digits [Scale]byte
	for i := n - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// AppendNanos appends d in units of 10^-9 as a decimal integer: the
// unscaled form, which DuckDB parses as a HUGEINT faster than a DECIMAL.
func (d Dec) AppendNanos(b []byte) []byte {
	if d.hi>>63 != 0 {
		b = append(b, '-')
	}
	m := d.abs()
	return appendUint128(b, m.hi, m.lo)
}

// appendUint128 appends hi:lo in decimal, hi < 10^19 (any NUMERIC
// magnitude: 10^38 / 2^64 is about 5.4e18).
func appendUint128(b []byte, hi, lo uint64) []byte {
	if hi == 0 {
		return strconv.AppendUint(b, lo, 10)
	}
	const e19 = 10_000_000_000_000_000_000
	top, low := bits.Div64(hi, lo, e19)
	b = strconv.AppendUint(b, top, 10)
	var digits [19]byte
	for i := 18; i >= 0; i-- {
		digits[i] = byte('0' + low%10)
		low /= 10
	}
	return append(b, digits[:]...)
}

// MarshalJSON writes d as a JSON string, the lossless form for NUMERIC.
func (d Dec) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '"')
	b = d.AppendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string ("179.80") or a bare number token
// (179.80), parsed exactly, never through float64. null is a no-op, as
// encoding/json expects, leaving the field (or a nil *Dec) alone.
func (d *Dec) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	raw := b
	if len(b) >= 2 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	v, err := Parse(b, false)
	if err != nil {
		return &TextError{Text: strings.ToValidUTF8(string(raw[:min(len(raw), maxQuoted)]), "…"), Err: err}
	}
	*d = v
	return nil
}

// maxQuoted bounds the text a TextError repeats.
const maxQuoted = 64

// TextError is JSON text that is not a NUMERIC value, quoted as sent:
// `"1,5e3" is not a decimal number`. It wraps ErrSyntax, ErrPrecision or
// ErrOverflow.
type TextError struct {
	Text string
	Err  error
}

func (e *TextError) Error() string {
	verb := " is "
	if errors.Is(e.Err, ErrPrecision) {
		verb = " has "
	}
	return e.Text + verb + e.Err.Error()
}

func (e *TextError) Unwrap() error { return e.Err }
