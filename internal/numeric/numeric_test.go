package numeric

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	maxDec = Dec(math.MaxInt64)
	minDec = Dec(math.MinInt64)
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		comma bool
		want  Dec
		err   error
	}{
		{name: "integer", in: "3", want: 3 * unit},
		{name: "price", in: "89.90", want: 89_900_000_000},
		{name: "negative", in: "-0.05", want: -50_000_000},
		{name: "plus sign", in: "+0.5", want: 500_000_000},
		{name: "no integer part", in: ".5", want: 500_000_000},
		{name: "no fraction digits", in: "5.", want: 5 * unit},
		{name: "negative zero", in: "-0", want: 0},
		{name: "leading zeros", in: "0000000000000000000000089.9", want: 89_900_000_000},
		{name: "nine decimals", in: "0.000000001", want: 1},
		{name: "trailing zeros past the scale", in: "1.50000000000000", want: 1_500_000_000},
		{name: "max", in: "9223372036.854775807", want: maxDec},
		{name: "min", in: "-9223372036.854775808", want: minDec},
		{name: "decimal comma", in: "89,90", comma: true, want: 89_900_000_000},
		{name: "decimal comma negative", in: "-0,5", comma: true, want: -500_000_000},
		{name: "integer with comma allowed", in: "12", comma: true, want: 12 * unit},

		{name: "empty", in: "", err: ErrSyntax},
		{name: "sign only", in: "-", err: ErrSyntax},
		{name: "point only", in: ".", err: ErrSyntax},
		{name: "sign and point", in: "+.", err: ErrSyntax},
		{name: "two signs", in: "+-1", err: ErrSyntax},
		{name: "two points", in: "1.2.3", err: ErrSyntax},
		{name: "comma when not allowed", in: "89,90", err: ErrSyntax},
		{name: "point when comma is the separator", in: "89.90", comma: true, err: ErrSyntax},
		{name: "thousands and comma", in: "1.089,90", comma: true, err: ErrSyntax},
		{name: "two commas", in: "1,2,3", comma: true, err: ErrSyntax},
		{name: "exponent", in: "1e3", err: ErrSyntax},
		{name: "spaces", in: " 1", err: ErrSyntax},
		{name: "trailing space", in: "1 ", err: ErrSyntax},
		{name: "underscore", in: "1_000", err: ErrSyntax},
		{name: "currency", in: "89.90€", err: ErrSyntax},
		{name: "non-ascii digit", in: "٣", err: ErrSyntax},
		{name: "ten decimals", in: "0.0000000001", err: ErrPrecision},
		{name: "max plus one unit", in: "9223372036.854775808", err: ErrOverflow},
		{name: "min minus one unit", in: "-9223372036.854775809", err: ErrOverflow},
		{name: "integer too large", in: "9223372037", err: ErrOverflow},
		{name: "far too large", in: "123456789012345678901234567890", err: ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in, tt.comma)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("Parse(%q, %v) = %d, %v; want %d, %v", tt.in, tt.comma, got, err, tt.want, tt.err)
			}
			gotB, errB := ParseBytes([]byte(tt.in), tt.comma)
			if gotB != got || !errors.Is(errB, tt.err) {
				t.Errorf("ParseBytes differs from Parse: %d, %v", gotB, errB)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		in   Dec
		want string
	}{
		{name: "zero", in: 0, want: "0"},
		{name: "integer", in: 179 * unit, want: "179"},
		{name: "trailing zeros dropped", in: 179_800_000_000, want: "179.8"},
		{name: "small negative", in: -50_000_000, want: "-0.05"},
		{name: "smallest", in: 1, want: "0.000000001"},
		{name: "smallest negative", in: -1, want: "-0.000000001"},
		{name: "max", in: maxDec, want: "9223372036.854775807"},
		{name: "min", in: minDec, want: "-9223372036.854775808"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := string(tt.in.AppendText([]byte("x="))); got != "x="+tt.want {
				t.Errorf("AppendText = %q", got)
			}
			back, err := Parse(tt.want, false)
			if err != nil || back != tt.in {
				t.Errorf("Parse(String()) = %d, %v", back, err)
			}
		})
	}
}

// TestRoundTrip checks String and Parse against each other on random values
// over the whole range.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100_000; i++ {
		d := Dec(rng.Int64())
		if i%2 == 0 {
			d = -d
		}
		if i%3 == 0 {
			d /= Dec(rng.Int64N(unit) + 1) // short values too
		}
		s := d.String()
		back, err := Parse(s, false)
		if err != nil || back != d {
			t.Fatalf("Parse(%q) = %d, %v; want %d", s, back, err, d)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() {
		var buf [32]byte
		_ = Dec(123456789).AppendText(buf[:0])
		_, _ = ParseBytes([]byte("89,90"), true)
	}); allocs != 0 {
		t.Errorf("AppendText and ParseBytes allocate %.1f times", allocs)
	}
}

// exact computes a Dec operation with big integers: the reference.
func exact(op string, a, b int64) (Dec, bool) {
	x, y := big.NewInt(a), big.NewInt(b)
	var r big.Int
	switch op {
	case "+":
		r.Add(x, y)
	case "-":
		r.Sub(x, y)
	case "*":
		r.Mul(x, y)
	}
	if !r.IsInt64() {
		return 0, false
	}
	return Dec(r.Int64()), true
}

func TestArithmetic(t *testing.T) {
	tests := []struct {
		name string
		op   string
		a    Dec
		b    int64 // a Dec for + and -, a count for MulInt
		want Dec
		err  error
	}{
		{name: "add", op: "+", a: 89_900_000_000, b: 10_100_000_000, want: 100 * unit},
		{name: "add negative", op: "+", a: 5, b: -7, want: -2},
		{name: "add zero to max", op: "+", a: maxDec, b: 0, want: maxDec},
		{name: "add overflow", op: "+", a: maxDec, b: 1, err: ErrOverflow},
		{name: "add underflow", op: "+", a: minDec, b: -1, err: ErrOverflow},
		{name: "add min and max", op: "+", a: minDec, b: math.MaxInt64, want: -1},
		{name: "sub", op: "-", a: 100 * unit, b: 10_100_000_000, want: 89_900_000_000},
		{name: "sub overflow", op: "-", a: maxDec, b: -1, err: ErrOverflow},
		{name: "sub underflow", op: "-", a: minDec, b: 1, err: ErrOverflow},
		{name: "sub min from zero", op: "-", a: 0, b: math.MinInt64, err: ErrOverflow},
		{name: "sub min from -1", op: "-", a: -1, b: math.MinInt64, want: maxDec},
		{name: "mul price by quantity", op: "*", a: 89_900_000_000, b: 2, want: 179_800_000_000},
		{name: "mul by zero", op: "*", a: maxDec, b: 0, want: 0},
		{name: "mul zero", op: "*", a: 0, b: math.MinInt64, want: 0},
		{name: "mul negative", op: "*", a: -1_500_000_000, b: 3, want: -4_500_000_000},
		{name: "mul overflow", op: "*", a: maxDec/2 + 1, b: 2, err: ErrOverflow},
		{name: "mul min by -1", op: "*", a: minDec, b: -1, err: ErrOverflow},
		{name: "mul -1 by min", op: "*", a: -1, b: math.MinInt64, err: ErrOverflow},
		{name: "mul 1 by min", op: "*", a: 1, b: math.MinInt64, want: minDec},
		{name: "mul huge count", op: "*", a: 2, b: math.MaxInt64, err: ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Dec
			var err error
			switch tt.op {
			case "+":
				got, err = tt.a.Add(Dec(tt.b))
			case "-":
				got, err = tt.a.Sub(Dec(tt.b))
			case "*":
				got, err = tt.a.MulInt(tt.b)
			}
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("%d %s %d = %d, %v; want %d, %v", tt.a, tt.op, tt.b, got, err, tt.want, tt.err)
			}
		})
	}
}

// TestArithmeticAgainstBig compares Add, Sub and MulInt with math/big on
// random operands, many of them near the edges.
func TestArithmeticAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	edge := []int64{0, 1, -1, 2, -2, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 32, -(1 << 32), 3037000499, 3037000500}
	pick := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return edge[rng.IntN(len(edge))]
		case 1:
			return rng.Int64N(1<<40) - 1<<39
		}
		return int64(rng.Uint64())
	}
	for i := 0; i < 200_000; i++ {
		a, b := pick(), pick()
		for _, op := range []string{"+", "-", "*"} {
			var got Dec
			var err error
			switch op {
			case "+":
				got, err = Dec(a).Add(Dec(b))
			case "-":
				got, err = Dec(a).Sub(Dec(b))
			case "*":
				got, err = Dec(a).MulInt(b)
			}
			want, ok := exact(op, a, b)
			if ok != (err == nil) || (ok && got != want) {
				t.Fatalf("%d %s %d = %d, %v; want %d (in range: %v)", a, op, b, got, err, want, ok)
			}
			if err != nil && !errors.Is(err, ErrOverflow) {
				t.Fatalf("%d %s %d: error %v, want ErrOverflow", a, op, b, err)
			}
		}
	}
}

func TestFromIntAndAddMul(t *testing.T) {
	tests := []struct {
		name string
		got  func() (Dec, error)
		want Dec
		err  error
	}{
		{name: "from int", got: func() (Dec, error) { return FromInt(42) }, want: 42 * unit},
		{name: "from negative int", got: func() (Dec, error) { return FromInt(-3) }, want: -3 * unit},
		{name: "from largest int", got: func() (Dec, error) { return FromInt(9223372036) }, want: 9223372036 * unit},
		{name: "from too large int", got: func() (Dec, error) { return FromInt(9223372037) }, err: ErrOverflow},
		{name: "add mul", got: func() (Dec, error) { return Dec(500_000_000).AddMul(2, 3) }, want: 6_500_000_000},
		{name: "add mul overflow in the product", got: func() (Dec, error) { return Dec(0).AddMul(1<<20, 1<<20) }, err: ErrOverflow},
		{name: "add mul overflow in the sum", got: func() (Dec, error) { return maxDec.AddMul(1, 1) }, err: ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("= %d, %v; want %d, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	type line struct {
		Importe Dec  `json:"importe"`
		Precio  *Dec `json:"precio,omitempty"`
	}
	price := Dec(89_900_000_000)
	marshal := []struct {
		name string
		in   line
		want string
	}{
		{name: "string form", in: line{Importe: 179_800_000_000, Precio: &price}, want: `{"importe":"179.8","precio":"89.9"}`},
		{name: "zero", in: line{}, want: `{"importe":"0"}`},
		{name: "min", in: line{Importe: minDec}, want: `{"importe":"-9223372036.854775808"}`},
	}
	for _, tt := range marshal {
		t.Run("marshal "+tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("Marshal = %s, want %s", b, tt.want)
			}
		})
	}
	unmarshal := []struct {
		name    string
		in      string
		want    line
		wantErr bool
	}{
		{name: "string", in: `{"importe":"179.80"}`, want: line{Importe: 179_800_000_000}},
		{name: "bare number, never through float64", in: `{"importe":9223372036.854775807}`, want: line{Importe: maxDec}},
		{name: "escaped string", in: `{"importe":"\u0031.5"}`, want: line{Importe: 1_500_000_000}},
		{name: "null leaves the value alone", in: `{"importe":null,"precio":null}`, want: line{}},
		{name: "null pointer field stays nil", in: `{"importe":"1","precio":null}`, want: line{Importe: unit}},
		{name: "pointer field", in: `{"importe":"1","precio":"89.9"}`, want: line{Importe: unit, Precio: &price}},
		{name: "exponent refused", in: `{"importe":1e3}`, wantErr: true},
		{name: "empty string refused", in: `{"importe":""}`, wantErr: true},
		{name: "comma refused", in: `{"importe":"89,90"}`, wantErr: true},
		{name: "too precise refused", in: `{"importe":"0.0000000001"}`, wantErr: true},
		{name: "boolean refused", in: `{"importe":true}`, wantErr: true},
	}
	for _, tt := range unmarshal {
		t.Run("unmarshal "+tt.name, func(t *testing.T) {
			var got line
			err := json.Unmarshal([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Unmarshal(%s) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	t.Run("null keeps a previous value", func(t *testing.T) {
		d := Dec(7)
		if err := d.UnmarshalJSON([]byte("null")); err != nil || d != 7 {
			t.Errorf("UnmarshalJSON(null) = %v, value %d; want a no-op", err, d)
		}
	})
}
