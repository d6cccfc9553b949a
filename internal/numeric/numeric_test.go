package numeric

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// nanos is the Dec of s units of 10^-9, for the tests' wide literals; ""
// (a row that wants an error) is the zero Dec.
func nanos(t testing.TB, s string) Dec {
	t.Helper()
	if s == "" {
		return Dec{}
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad literal %q", s)
	}
	return fromBig(t, n)
}

const (
	maxText = "99999999999999999999999999999.999999999"
	maxNano = "99999999999999999999999999999999999999"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		comma bool
		want  string // units of 10^-9
		err   error
	}{
		{name: "integer", in: "3", want: "3000000000"},
		{name: "price", in: "89.90", want: "89900000000"},
		{name: "negative", in: "-0.05", want: "-50000000"},
		{name: "plus sign", in: "+0.5", want: "500000000"},
		{name: "no integer part", in: ".5", want: "500000000"},
		{name: "no fraction digits", in: "5.", want: "5000000000"},
		{name: "negative zero", in: "-0", want: "0"},
		{name: "leading zeros", in: "0000000000000000000000000000000000089.9", want: "89900000000"},
		{name: "nine decimals", in: "0.000000001", want: "1"},
		{name: "trailing zeros past the scale", in: "1.50000000000000", want: "1500000000"},
		{name: "old int64 max", in: "9223372036.854775807", want: "9223372036854775807"},
		{name: "nine thousand millions", in: "9000000000", want: "9000000000000000000"},
		{name: "nineteen integer digits", in: "9999999999999999999.5", want: "9999999999999999999500000000"},
		{name: "twenty integer digits", in: "18446744073709551616", want: "18446744073709551616000000000"},
		{name: "max", in: maxText, want: maxNano},
		{name: "min", in: "-" + maxText, want: "-" + maxNano},
		{name: "max without decimals", in: "99999999999999999999999999999", want: "99999999999999999999999999999000000000"},
		{name: "decimal comma", in: "89,90", comma: true, want: "89900000000"},
		{name: "decimal comma negative", in: "-0,5", comma: true, want: "-500000000"},
		{name: "integer with comma allowed", in: "12", comma: true, want: "12000000000"},

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
		{name: "syntax after many digits", in: "1234567890123456789012345x", err: ErrSyntax},
		{name: "ten decimals", in: "0.0000000001", err: ErrPrecision},
		{name: "thirty integer digits", in: "100000000000000000000000000000", err: ErrOverflow},
		{name: "min minus one integer", in: "-100000000000000000000000000000", err: ErrOverflow},
		{name: "far too large", in: "123456789012345678901234567890123456789012345", err: ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := nanos(t, tt.want)
			got, err := Parse(tt.in, tt.comma)
			if !errors.Is(err, tt.err) || got != want {
				t.Errorf("Parse(%q, %v) = %s, %v; want %s, %v", tt.in, tt.comma, got, err, want, tt.err)
			}
			gotB, errB := Parse([]byte(tt.in), tt.comma)
			if gotB != got || !errors.Is(errB, tt.err) {
				t.Errorf("Parse of bytes differs from Parse of a string: %s, %v", gotB, errB)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name  string
		nanos string
		want  string
	}{
		{name: "zero", nanos: "0", want: "0"},
		{name: "integer", nanos: "179000000000", want: "179"},
		{name: "trailing zeros dropped", nanos: "179800000000", want: "179.8"},
		{name: "small negative", nanos: "-50000000", want: "-0.05"},
		{name: "smallest", nanos: "1", want: "0.000000001"},
		{name: "smallest negative", nanos: "-1", want: "-0.000000001"},
		{name: "old int64 min", nanos: "-9223372036854775808", want: "-9223372036.854775808"},
		{name: "a quotient with an inner zero block", nanos: "10000000000000000000000000000", want: "10000000000000000000"},
		{name: "above 2^64 units", nanos: "18446744073709551617", want: "18446744073.709551617"},
		{name: "max", nanos: maxNano, want: maxText},
		{name: "min", nanos: "-" + maxNano, want: "-" + maxText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := nanos(t, tt.nanos)
			got := []string{in.String(), string(in.AppendText([]byte("x="))), string(in.AppendNanos(nil))}
			if diff := cmp.Diff([]string{tt.want, "x=" + tt.want, tt.nanos}, got); diff != "" {
				t.Errorf("String, AppendText after x=, AppendNanos (-want +got):\n%s", diff)
			}
		})
	}
}

var limit, _ = new(big.Int).SetString(maxNano, 10)

// randomBig draws values over the whole range in units: magnitudes of every
// bit length alike, and NUMERIC's bounds and their neighbours often.
func randomBig(rng *rand.Rand) *big.Int {
	var n *big.Int
	switch rng.IntN(6) {
	case 0:
		n = new(big.Int).Sub(limit, big.NewInt(rng.Int64N(3)))
	case 1:
		n = big.NewInt(rng.Int64N(1 << 20))
	default:
		n = new(big.Int).SetUint64(rng.Uint64())
		n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(rng.Uint64()))
		n.Rsh(n, uint(rng.IntN(128)))
		for n.Cmp(limit) > 0 {
			n.Rsh(n, 1)
		}
	}
	if rng.IntN(2) == 0 {
		n.Neg(n)
	}
	return n
}

func fromBig(t testing.TB, n *big.Int) Dec {
	t.Helper()
	d, err := FromBigNanos(n)
	if err != nil {
		t.Fatalf("FromBigNanos(%s): %v", n, err)
	}
	return d
}

// TestRoundTrip checks String, Parse and the big.Int conversions against
// each other on random values over the whole range.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		n := randomBig(rng)
		d := fromBig(t, n)
		if got := d.BigNanos(); got.Cmp(n) != 0 {
			t.Fatalf("BigNanos(FromBigNanos(%s)) = %s", n, got)
		}
		s := d.String()
		back, err := Parse(s, false)
		if err != nil || back != d {
			t.Fatalf("Parse(%q) = %s, %v; want %s", s, back, err, d)
		}
		want := new(big.Rat).SetFrac(n, big.NewInt(unit)) // String read by math/big
		if got, ok := new(big.Rat).SetString(s); !ok || got.Cmp(want) != 0 {
			t.Fatalf("%s is not %s", s, want.RatString())
		}
	}
	if allocs := testing.AllocsPerRun(100, func() {
		var buf [48]byte
		_ = Max().AppendText(buf[:0])
		_, _ = Parse([]byte("89,90"), true)
		_, _ = Parse([]byte(maxText), false)
	}); allocs != 0 {
		t.Errorf("AppendText and Parse of bytes allocate %.1f times", allocs)
	}
}

var plainDecimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$`)

// FuzzParse checks that whatever Parse accepts prints back to a text that
// parses to the same value, and that it agrees with math/big on the value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "89.90", "-0.05", maxText, "-" + maxText, "100000000000000000000000000000", "1.0000000000", "18446744073709551616.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s, false)
		// big.Rat also reads fractions ("1/3") and exponents: it is the
		// oracle only for plain decimals.
		r, ok := new(big.Rat).SetString(s)
		ok = ok && plainDecimal.MatchString(s)
		if err != nil {
			if ok && errors.Is(err, ErrOverflow) {
				if m := new(big.Rat).Abs(r); m.Cmp(new(big.Rat).SetFrac(limit, big.NewInt(unit))) <= 0 {
					t.Fatalf("Parse(%q) overflows, but %s is in range", s, m.RatString())
				}
			}
			return
		}
		back, err := Parse(d.String(), false)
		if err != nil || back != d {
			t.Fatalf("Parse(String(Parse(%q))) = %s, %v; want %s", s, back, err, d)
		}
		if got := new(big.Rat).SetFrac(d.BigNanos(), big.NewInt(unit)); !ok || got.Cmp(r) != 0 {
			t.Fatalf("Parse(%q) = %s, big.Rat says %v", s, d, r)
		}
	})
}

func TestArithmetic(t *testing.T) {
	tests := []struct {
		name string
		op   string
		a    string // units
		b    string // units for + - x, a count for MulInt
		want string
		err  error
	}{
		{name: "add", op: "+", a: "89900000000", b: "10100000000", want: "100000000000"},
		{name: "add negative", op: "+", a: "5", b: "-7", want: "-2"},
		{name: "add past int64", op: "+", a: "9000000000000000000", b: "9000000000000000000", want: "18000000000000000000"},
		{name: "add zero to max", op: "+", a: maxNano, b: "0", want: maxNano},
		{name: "add overflow at the bound", op: "+", a: maxNano, b: "1", err: ErrOverflow},
		{name: "add max to max wraps no int128", op: "+", a: maxNano, b: maxNano, err: ErrOverflow},
		{name: "add min to min", op: "+", a: "-" + maxNano, b: "-" + maxNano, err: ErrOverflow},
		{name: "add underflow", op: "+", a: "-" + maxNano, b: "-1", err: ErrOverflow},
		{name: "add min and max", op: "+", a: "-" + maxNano, b: maxNano, want: "0"},
		{name: "sub", op: "-", a: "100000000000", b: "10100000000", want: "89900000000"},
		{name: "sub overflow", op: "-", a: maxNano, b: "-1", err: ErrOverflow},
		{name: "sub underflow", op: "-", a: "-" + maxNano, b: "1", err: ErrOverflow},
		{name: "sub min from -1", op: "-", a: "-1", b: "-" + maxNano, want: "99999999999999999999999999999999999998"},
		{name: "mul price by quantity", op: "*", a: "89900000000", b: "2", want: "179800000000"},
		{name: "mul by zero", op: "*", a: maxNano, b: "0", want: "0"},
		{name: "mul zero", op: "*", a: "0", b: "-9223372036854775808", want: "0"},
		{name: "mul negative", op: "*", a: "-1500000000", b: "3", want: "-4500000000"},
		{name: "mul to the bound", op: "*", a: "11111111111111111111111111111111111111", b: "9", want: maxNano},
		{name: "mul one past the bound", op: "*", a: "50000000000000000000000000000000000000", b: "2", err: ErrOverflow},
		{name: "mul past 2^128", op: "*", a: maxNano, b: "9223372036854775807", err: ErrOverflow},
		{name: "mul min int64", op: "*", a: "-1", b: "-9223372036854775808", want: "9223372036854775808"},
		{name: "dec times dec", op: "x", a: "89900000000", b: "2500000000", want: "224750000000"},
		{name: "dec times dec negative", op: "x", a: "-1500000000", b: "1500000000", want: "-2250000000"},
		{name: "dec times dec too precise", op: "x", a: "1", b: "1", err: ErrPrecision},
		{name: "dec times dec at the bound", op: "x", a: maxNano, b: "1000000000", want: maxNano},
		{name: "dec times dec overflow", op: "x", a: maxNano, b: "1000000001", err: ErrOverflow},
		{name: "dec times dec far past 2^128", op: "x", a: maxNano, b: maxNano, err: ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := nanos(t, tt.a)
			var got Dec
			var err error
			switch tt.op {
			case "+":
				got, err = a.Add(nanos(t, tt.b))
			case "-":
				got, err = a.Sub(nanos(t, tt.b))
			case "x":
				got, err = a.Mul(nanos(t, tt.b))
			case "*":
				n, perr := strconv.ParseInt(tt.b, 10, 64)
				if perr != nil {
					t.Fatalf("bad count: %v", perr)
				}
				got, err = a.MulInt(n)
			}
			if want := nanos(t, tt.want); !errors.Is(err, tt.err) || got != want {
				t.Errorf("%s %s %s = %s, %v; want %s, %v", tt.a, tt.op, tt.b, got.AppendNanos(nil), err, tt.want, tt.err)
			}
		})
	}
}

// TestArithmeticAgainstBig compares Add, Sub, MulInt, Mul and Cmp with
// math/big on random operands over the whole range, many at the bounds:
// an operation fails exactly when math/big's result leaves NUMERIC.
func TestArithmeticAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	counts := []int64{0, 1, -1, 2, -2, 9, 10, math.MaxInt64, math.MinInt64, 1 << 32, 3037000499}
	inRange := func(r *big.Int) bool { return new(big.Int).Abs(r).Cmp(limit) <= 0 }
	for range 200_000 {
		x, y := randomBig(rng), randomBig(rng)
		a, b := fromBig(t, x), fromBig(t, y)
		n := counts[rng.IntN(len(counts))]
		if rng.IntN(2) == 0 {
			n = int64(rng.Uint64() >> rng.IntN(64)) //nolint:gosec // any int64
		}
		check := func(op string, got Dec, err error, want *big.Int, exact bool) {
			t.Helper()
			switch {
			case !exact:
				if !errors.Is(err, ErrPrecision) && !errors.Is(err, ErrOverflow) {
					t.Fatalf("%s %s %s: %v, want ErrPrecision", x, op, y, err)
				}
			case !inRange(want):
				if !errors.Is(err, ErrOverflow) {
					t.Fatalf("%s %s %s (n %d) = %s, %v; want ErrOverflow", x, op, y, n, got, err)
				}
			case err != nil || got.BigNanos().Cmp(want) != 0:
				t.Fatalf("%s %s %s (n %d) = %s, %v; want %s", x, op, y, n, got.AppendNanos(nil), err, want)
			}
		}
		got, err := a.Add(b)
		check("+", got, err, new(big.Int).Add(x, y), true)
		got, err = a.Sub(b)
		check("-", got, err, new(big.Int).Sub(x, y), true)
		got, err = a.MulInt(n)
		check("*n", got, err, new(big.Int).Mul(x, big.NewInt(n)), true)
		q, r := new(big.Int).QuoRem(new(big.Int).Mul(x, y), big.NewInt(unit), new(big.Int))
		got, err = a.Mul(b)
		check("x", got, err, q, r.Sign() == 0 || !inRange(q))
		if got, want := a.Cmp(b), x.Cmp(y); got != want {
			t.Fatalf("Cmp(%s, %s) = %d, want %d", x, y, got, want)
		}
		if a.Sign() != x.Sign() {
			t.Fatalf("Sign(%s) = %d", x, a.Sign())
		}
	}
}

func TestBoundsAndConstructors(t *testing.T) {
	_, over := FromBigNanos(new(big.Int).Add(limit, big.NewInt(1))) // 10^38
	_, far := FromBigNanos(new(big.Int).Lsh(big.NewInt(1), 200))
	got := []any{Max().String(), Min().String(), over, far, Dec{} == FromNanos(0) && Dec{}.IsZero(),
		Dec{}.String(), FromInt(42).String(), FromInt(-3).String(),
		FromInt(math.MaxInt64).String(), FromInt(math.MinInt64).String()}
	want := []any{maxText, "-" + maxText, ErrOverflow, ErrOverflow, true,
		"0", "42", "-3",
		"9223372036854775807", "-9223372036854775808"}
	if diff := cmp.Diff(want, got, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Max, Min, FromBigNanos(10^38 and 2^200), the zero value, FromInt (-want +got):\n%s", diff)
	}
}

func TestJSON(t *testing.T) {
	type line struct {
		Importe Dec  `json:"importe"`
		Precio  *Dec `json:"precio,omitempty"`
	}
	price := FromNanos(89_900_000_000)
	for _, tt := range []struct {
		in   line
		want string
	}{
		{line{Importe: FromNanos(179_800_000_000), Precio: &price}, `{"importe":"179.8","precio":"89.9"}`},
		{line{}, `{"importe":"0"}`},
		{line{Importe: Min()}, `{"importe":"-` + maxText + `"}`},
	} {
		if b, err := json.Marshal(tt.in); err != nil || string(b) != tt.want {
			t.Errorf("Marshal = %s, %v; want %s", b, err, tt.want)
		}
	}
	unmarshal := []struct {
		name    string
		start   line // the value unmarshalled into
		in      string
		want    line
		wantErr string // the error's text, which names the value sent
	}{
		{name: "string", in: `{"importe":"179.80"}`, want: line{Importe: FromNanos(179_800_000_000)}},
		{name: "state of the int64 version", in: `{"importe":"-9223372036.854775808"}`, want: line{Importe: FromNanos(math.MinInt64)}},
		{name: "bare number, never through float64", in: `{"importe":` + maxText + `}`, want: line{Importe: Max()}},
		{name: "escaped string", in: `{"importe":"1.5"}`, want: line{Importe: FromNanos(1_500_000_000)}},
		{name: "null leaves the value alone", start: line{Importe: FromNanos(7)},
			in: `{"importe":null,"precio":null}`, want: line{Importe: FromNanos(7)}},
		{name: "null pointer field stays nil", in: `{"importe":"1","precio":null}`, want: line{Importe: FromNanos(unit)}},
		{name: "pointer field", in: `{"importe":"1","precio":"89.9"}`, want: line{Importe: FromNanos(unit), Precio: &price}},
		{name: "exponent refused", in: `{"importe":1e3}`, wantErr: `1e3 is not a decimal number`},
		{name: "empty string refused", in: `{"importe":""}`, wantErr: `"" is not a decimal number`},
		{name: "comma refused", in: `{"importe":"89,90"}`, wantErr: `"89,90" is not a decimal number`},
		{name: "too precise refused", in: `{"importe":"0.0000000001"}`, wantErr: `"0.0000000001" has more than 9 decimal places`},
		{name: "out of range refused", in: `{"importe":"100000000000000000000000000000"}`, wantErr: `"100000000000000000000000000000" is outside NUMERIC's range of ±99999999999999999999999999999.999999999`},
		{name: "boolean refused", in: `{"importe":true}`, wantErr: `true is not a decimal number`},
	}
	for _, tt := range unmarshal {
		t.Run("unmarshal "+tt.name, func(t *testing.T) {
			got := tt.start
			gotErr := ""
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([]any{tt.want, tt.wantErr}, []any{got, gotErr}); diff != "" {
				t.Errorf("Unmarshal(%s): value and error (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// BenchmarkAppendText is the cost of writing a price in a staged row.
func BenchmarkAppendText(b *testing.B) {
	var ds []Dec
	for _, s := range []string{"64.50", "129", "19.95", "-1234567.123456789"} {
		d, err := Parse(s, false)
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d)
	}
	buf := make([]byte, 0, 64)
	for i := 0; b.Loop(); i++ {
		buf = ds[i%len(ds)].AppendText(buf[:0])
	}
}
