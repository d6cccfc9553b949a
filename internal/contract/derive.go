package contract

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// compute evaluates a derived column into out[at].
func (d *derived) compute(out []warehouse.Value, at int) Reject {
	x, y := &out[d.a], &out[d.b]
	if x.Null || y.Null {
		if d.required {
			return Reject{d.codeReq, d.name + ": required, but an operand of " + d.expr + " is empty"}
		}
		out[at] = warehouse.Value{Null: true}
		return Reject{}
	}
	var ok bool
	v := &out[at]
	if d.typ == warehouse.Int64 {
		var n int64
		if n, ok = intOp(d.op, x.Int, y.Int); ok {
			*v = warehouse.Value{Int: n}
		}
	} else {
		var r numeric.Dec
		if r, ok = d.decimal(x, y); ok {
			*v = warehouse.Value{Dec: r}
		}
	}
	if !ok {
		return Reject{d.codeRange, fmt.Sprintf("%s: %s is out of range or not exact at %d decimals", d.name, d.expr, numeric.Scale)}
	}
	return Reject{}
}

// intOp applies op to two INT64 values, reporting overflow.
func intOp(op byte, a, b int64) (int64, bool) {
	var r numeric.Dec
	var err error
	// Dec arithmetic on raw units is overflow-checked int64 arithmetic,
	// whatever the scale.
	switch op {
	case '*':
		r, err = numeric.Dec(a).MulInt(b)
	case '+':
		r, err = numeric.Dec(a).Add(numeric.Dec(b))
	default:
		r, err = numeric.Dec(a).Sub(numeric.Dec(b))
	}
	return int64(r), err == nil
}

// decimal applies op when at least one operand is NUMERIC.
func (d *derived) decimal(x, y *warehouse.Value) (numeric.Dec, bool) {
	var r numeric.Dec
	var err error
	switch {
	case d.op == '*' && d.ta == warehouse.Int64:
		r, err = y.Dec.MulInt(x.Int)
	case d.op == '*' && d.tb == warehouse.Int64:
		r, err = x.Dec.MulInt(y.Int)
	case d.op == '*':
		return mulDec(x.Dec, y.Dec)
	default:
		a, b := x.Dec, y.Dec
		if d.ta == warehouse.Int64 {
			if a, err = numeric.FromInt(x.Int); err != nil {
				return 0, false
			}
		}
		if d.tb == warehouse.Int64 {
			if b, err = numeric.FromInt(y.Int); err != nil {
				return 0, false
			}
		}
		if d.op == '+' {
			r, err = a.Add(b)
		} else {
			r, err = a.Sub(b)
		}
	}
	return r, err == nil
}

// mulDec multiplies two NUMERIC values exactly: the product must be
// representable with 9 decimals and within range.
func mulDec(a, b numeric.Dec) (numeric.Dec, bool) {
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(abs(a), abs(b))
	const unit = 1_000_000_000
	if hi >= unit {
		return 0, false
	}
	q, rem := bits.Div64(hi, lo, unit)
	if rem != 0 {
		return 0, false
	}
	if neg {
		if q > 1<<63 {
			return 0, false
		}
		return numeric.Dec(-int64(q)), true //nolint:gosec // checked above
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	return numeric.Dec(q), true
}

func abs(d numeric.Dec) uint64 {
	if d < 0 {
		return uint64(-d) //nolint:gosec // MinInt64 gives 1<<63, its magnitude
	}
	return uint64(d)
}
