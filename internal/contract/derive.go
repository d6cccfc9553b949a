package contract

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

func (d *derived) compute(out []schema.Value, at int) Reject {
	x, y := &out[d.a], &out[d.b]
	if x.Null || y.Null {
		if d.required {
			return Reject{d.codeReq, d.name + ": required, but an operand of " + d.expr + " is empty"}
		}
		out[at] = schema.Value{Null: true}
		return Reject{}
	}
	var ok bool
	v := &out[at]
	if d.typ == schema.Int64 {
		var n int64
		if n, ok = intOp(d.op, x.Int, y.Int); ok {
			*v = schema.Value{Int: n}
		}
	} else {
		var r numeric.Dec
		if r, ok = d.decimal(x, y); ok {
			*v = schema.Value{Dec: r}
		}
	}
	if !ok {
		return Reject{d.codeRange, fmt.Sprintf("%s: %s is out of range or not exact at %d decimals", d.name, d.expr, numeric.Scale)}
	}
	return Reject{}
}

// intOp applies op to two INT64 values, reporting overflow.
func intOp(op byte, a, b int64) (int64, bool) {
	var r int64
	var over bool
	switch op {
	case '*':
		hi, lo := bits.Mul64(uabs(a), uabs(b))
		neg := (a < 0) != (b < 0)
		if hi != 0 || lo > math.MaxInt64+1 || lo == math.MaxInt64+1 && !neg {
			return 0, false
		}
		r = int64(lo) //nolint:gosec // range checked above; MinInt64 wraps to itself
		if neg {
			r = -r
		}
	case '+':
		r = a + b
		over = (r > a) != (b > 0)
	default:
		r = a - b
		over = (r < a) != (b > 0)
	}
	return r, !over
}

func uabs(n int64) uint64 {
	if n < 0 {
		return -uint64(n) //nolint:gosec // MinInt64 gives 1<<63, its magnitude
	}
	return uint64(n)
}

// decimal applies op when at least one operand is NUMERIC.
func (d *derived) decimal(x, y *schema.Value) (numeric.Dec, bool) {
	var r numeric.Dec
	var err error
	switch {
	case d.op == '*' && d.ta == schema.Int64:
		r, err = y.Dec.MulInt(x.Int)
	case d.op == '*' && d.tb == schema.Int64:
		r, err = x.Dec.MulInt(y.Int)
	case d.op == '*':
		// Exact or refused: a product needing more than 9 decimals is not
		// rounded.
		r, err = x.Dec.Mul(y.Dec)
	default:
		a, b := x.Dec, y.Dec
		if d.ta == schema.Int64 {
			a = numeric.FromInt(x.Int)
		}
		if d.tb == schema.Int64 {
			b = numeric.FromInt(y.Int)
		}
		if d.op == '+' {
			r, err = a.Add(b)
		} else {
			r, err = a.Sub(b)
		}
	}
	return r, err == nil
}
