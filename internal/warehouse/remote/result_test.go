package remote

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func TestResultRoundTrip(t *testing.T) {
	many := make([][]string, 5000) // more than one write buffer
	for i := range many {
		many[i] = []string{strings.Repeat("x", i%40), "NULL"}
	}
	tests := []struct {
		name string
		res  warehouse.Result
	}{
		{"zero value", warehouse.Result{}},
		{"no rows is not nil rows", warehouse.Result{Columns: []string{"n"}, Rows: [][]string{}}},
		{"NULL and the empty string differ", warehouse.Result{Columns: []string{"a", "b"}, Rows: [][]string{{"NULL", ""}}}},
		{"exact decimals and instants", warehouse.Result{Columns: []string{"importe", "t"}, Rows: [][]string{
			{"9346829005.778232596", "2026-03-15T02:00:00.123456Z"}, {"-0.000000001", "0001-01-01T00:00:00Z"},
		}}},
		{"text that needs escaping", warehouse.Result{Columns: []string{`"quoted"`}, Rows: [][]string{{"línea 1\nlínea 2\r\n\t\x00 <&> \\ \u2028 🏔️"}}}},
		{"a BLOB that is not UTF-8", warehouse.Result{Columns: []string{"b"}, Rows: [][]string{{"\xff\xfe\x00"}, {"ok"}}}},
		{"a nil row", warehouse.Result{Columns: []string{"a"}, Rows: [][]string{nil, {}}}},
		{"many rows", warehouse.Result{Columns: []string{"s", "n"}, Rows: many}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeResult(&buf, tc.res); err != nil {
				t.Fatal(err)
			}
			got, err := readResult(&buf)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if diff := cmp.Diff(tc.res, got); diff != "" {
				t.Errorf("round trip (-want +got)\n%s", diff)
			}
		})
	}
}

func TestReadResultRejects(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"not JSON", "Internal Server Error"},
		{"a number for a cell", `{"columns":["a"],"rows":[[1]]}`},
		{"an object without base64", `{"columns":["a"],"rows":[[{"hex":"00"}]]}`},
		{"bad base64", `{"columns":["a"],"rows":[[{"base64":"***"}]]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if res, err := readResult(strings.NewReader(tc.body)); err == nil {
				t.Errorf("read %s: got %+v, want an error", tc.body, res)
			}
		})
	}
}
