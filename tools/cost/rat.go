package cost

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// Quantities are exact rationals: counts are extrapolated by ratios of
// integers, and money is derived from them without passing through float64.

func ri(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }

func frac(a, b int64) *big.Rat {
	if b == 0 {
		return new(big.Rat)
	}
	return big.NewRat(a, b)
}

func mul(xs ...*big.Rat) *big.Rat {
	r := ri(1)
	for _, x := range xs {
		r.Mul(r, x)
	}
	return r
}

func add(xs ...*big.Rat) *big.Rat {
	r := new(big.Rat)
	for _, x := range xs {
		r.Add(r, x)
	}
	return r
}

func sub(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }

func div(a, b *big.Rat) *big.Rat {
	if b.Sign() == 0 {
		return new(big.Rat)
	}
	return new(big.Rat).Quo(a, b)
}

func maxRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) >= 0 {
		return new(big.Rat).Set(a)
	}
	return new(big.Rat).Set(b)
}

func positive(a *big.Rat) *big.Rat { return maxRat(a, new(big.Rat)) }

// seconds returns d in seconds.
func seconds(d time.Duration) *big.Rat { return frac(int64(d), int64(time.Second)) }

// ceilTo rounds x up to a whole number of steps.
func ceilTo(x, step *big.Rat) *big.Rat {
	q := div(x, step)
	n := new(big.Int).Quo(q.Num(), q.Denom())
	if new(big.Rat).SetInt(n).Cmp(q) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return mul(new(big.Rat).SetInt(n), step)
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	tib = 1 << 40
)

// charge is qty units at price p, rounded half up to the nano-dollar.
func charge(p Price, qty *big.Rat) (numeric.Dec, error) {
	if p.Per <= 0 {
		return numeric.Dec{}, fmt.Errorf("price of %s has no quantity", p.Unit)
	}
	v := mul(qty, new(big.Rat).SetInt(p.Amount.BigNanos()), frac(1, p.Per))
	return roundNanos(v)
}

// roundNanos rounds a count of nano-dollars half up into a Dec.
func roundNanos(v *big.Rat) (numeric.Dec, error) {
	neg := v.Sign() < 0
	a := new(big.Rat).Abs(v)
	a.Add(a, big.NewRat(1, 2))
	n := new(big.Int).Quo(a.Num(), a.Denom())
	if neg {
		n.Neg(n)
	}
	d, err := numeric.FromBigNanos(n)
	if err != nil {
		return numeric.Dec{}, fmt.Errorf("amount %s nano-dollars: %w", v.FloatString(0), err)
	}
	return d, nil
}

func sumDec(ds ...numeric.Dec) (numeric.Dec, error) {
	var t numeric.Dec
	for _, d := range ds {
		var err error
		if t, err = t.Add(d); err != nil {
			return numeric.Dec{}, err
		}
	}
	return t, nil
}

// Money renders d in dollars and cents, rounded half up; an amount that is
// not zero but rounds to it shows as "<$0.01".
func Money(d numeric.Dec) string {
	n := d.BigNanos()
	neg := n.Sign() < 0
	n.Abs(n)
	const cent = 10_000_000 // 1e9 / 100
	cents := new(big.Int).Add(n, big.NewInt(cent/2))
	cents.Quo(cents, big.NewInt(cent))
	if cents.Sign() == 0 && n.Sign() != 0 {
		return "<$0.01"
	}
	dollars, c := new(big.Int).QuoRem(cents, big.NewInt(100), new(big.Int))
	s := "$" + group(dollars.String()) + fmt.Sprintf(".%02d", c.Int64())
	if neg {
		s = "-" + s
	}
	return s
}

// Num renders x with the given decimals and thousands separators.
func Num(x *big.Rat, decimals int) string {
	s := x.FloatString(decimals)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, fracPart, _ := strings.Cut(s, ".")
	out := group(whole)
	if fracPart != "" {
		out += "." + fracPart
	}
	if neg {
		out = "-" + out
	}
	return out
}

func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	lead := len(digits) % 3
	if lead > 0 {
		b.WriteString(digits[:lead])
	}
	for i := lead; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}
