package window_test

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

func dec(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

func ms(importe string, pedidos, unidades int64) window.Measures {
	return window.Measures{Importe: dec(importe), Pedidos: pedidos, Unidades: unidades}
}

func TestOrderMeasures(t *testing.T) {
	tests := []struct {
		name       string
		importe    string
		quantities []int64
		want       window.Measures
		wantErr    error
	}{
		{name: "seed order", importe: "179.80", quantities: []int64{2}, want: ms("179.8", 1, 2)},
		{name: "several lines", importe: "0.01", quantities: []int64{1, 3, 5}, want: ms("0.01", 1, 9)},
		{name: "no lines", importe: "10", want: ms("10", 1, 0)},
		{name: "quantities overflow", importe: "1", quantities: []int64{math.MaxInt64, 1}, wantErr: window.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := window.OrderMeasures(dec(tt.importe), tt.quantities...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMeasuresAddSub(t *testing.T) {
	big := window.Measures{Importe: numeric.Max(), Pedidos: math.MaxInt64, Unidades: math.MaxInt64}
	tests := []struct {
		name   string
		a, b   window.Measures
		add    window.Measures
		sub    window.Measures
		addErr string
		subErr string
	}{
		{name: "exact decimals", a: ms("89.90", 1, 2), b: ms("0.10", 1, 1), add: ms("90", 2, 3), sub: ms("89.8", 0, 1)},
		{name: "zero", a: ms("0", 0, 0), b: ms("0", 0, 0), add: ms("0", 0, 0), sub: ms("0", 0, 0)},
		{name: "sub below zero is allowed", a: ms("1", 1, 1), b: ms("2", 2, 2), add: ms("3", 3, 3), sub: ms("-1", -1, -1)},
		{name: "importe overflows", a: window.Measures{Importe: numeric.Max()}, b: ms("0.000000001", 0, 0),
			sub:    ms("99999999999999999999999999999.999999998", 0, 0),
			addErr: "importe 99999999999999999999999999999.999999999 + 0.000000001: measure out of range: outside NUMERIC's range"},
		{name: "importe underflows on sub", a: window.Measures{Importe: numeric.Min()}, b: ms("0.000000001", 0, 0),
			add:    ms("-99999999999999999999999999999.999999998", 0, 0),
			subErr: "importe -99999999999999999999999999999.999999999 - 0.000000001: measure out of range: outside NUMERIC's range"},
		{name: "importe past the old int64 range", a: ms("9000000000", 1, 0), b: ms("9000000000", 1, 0),
			add: ms("18000000000", 2, 0), sub: ms("0", 0, 0)},
		{name: "pedidos overflow", a: window.Measures{Pedidos: math.MaxInt64}, b: ms("0", 1, 0),
			sub: window.Measures{Pedidos: math.MaxInt64 - 1}, addErr: "pedidos 9223372036854775807 + 1: measure out of range"},
		{name: "unidades overflow", a: window.Measures{Unidades: math.MaxInt64}, b: ms("0", 0, 1),
			sub: window.Measures{Unidades: math.MaxInt64 - 1}, addErr: "unidades 9223372036854775807 + 1: measure out of range"},
		{name: "sub of the minimum cannot negate", a: ms("0", 0, 0), b: window.Measures{Pedidos: math.MinInt64},
			add: window.Measures{Pedidos: math.MinInt64}, subErr: "pedidos 0 - -9223372036854775808: measure out of range"},
		{name: "pedidos underflow on sub", a: window.Measures{Pedidos: -2}, b: big,
			addErr: "", add: window.Measures{Importe: numeric.Max(), Pedidos: math.MaxInt64 - 2, Unidades: math.MaxInt64},
			subErr: "pedidos -2 - 9223372036854775807: measure out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			add, err := tt.a.Add(tt.b)
			checkErr(t, "Add", err, tt.addErr)
			if err == nil {
				if diff := cmp.Diff(tt.add, add); diff != "" {
					t.Errorf("Add (-want +got):\n%s", diff)
				}
			}
			sub, err := tt.a.Sub(tt.b)
			checkErr(t, "Sub", err, tt.subErr)
			if err == nil {
				if diff := cmp.Diff(tt.sub, sub); diff != "" {
					t.Errorf("Sub (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func checkErr(t *testing.T, op string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error %v", op, err)
	case want != "" && err == nil:
		t.Errorf("%s: no error, want %q", op, want)
	case want != "" && !errors.Is(err, window.ErrOverflow):
		t.Errorf("%s: error %v is not ErrOverflow", op, err)
	case want != "" && !contains(err.Error(), want):
		t.Errorf("%s: error %q, want it to contain %q", op, err, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
