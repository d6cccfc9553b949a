package warehouse_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestNewStatementChecksParameters: a statement received by name (the
// remote wire) must match its read's declaration exactly.
func TestNewStatementChecksParameters(t *testing.T) {
	ts := func(s string) warehouse.Param {
		v, _ := time.Parse(time.RFC3339, s)
		return warehouse.Param{ParamSpec: warehouse.ParamSpec{Name: "since", Type: warehouse.Timestamp}, Values: []warehouse.Value{warehouse.TimeValue(v)}}
	}
	tests := []struct {
		name    string
		read    string
		params  []warehouse.Param
		wantErr string
	}{
		{name: "as declared", read: "discard_counts", params: []warehouse.Param{ts("2026-03-14T00:00:00Z")}},
		{name: "unknown read", read: "drop_tables", wantErr: `no named read "drop_tables"`},
		{name: "missing parameter", read: "discard_counts", wantErr: "0 parameters, want 1"},
		{name: "wrong type", read: "discard_counts", params: []warehouse.Param{{ParamSpec: warehouse.ParamSpec{Name: "since", Type: warehouse.String}, Values: []warehouse.Value{warehouse.StringValue("yesterday")}}},
			wantErr: "parameter since is STRING (array false), want TIMESTAMP (array false)"},
		{name: "two values for a scalar", read: "discard_counts", params: []warehouse.Param{{ParamSpec: warehouse.ParamSpec{Name: "since", Type: warehouse.Timestamp}, Values: []warehouse.Value{{}, {}}}},
			wantErr: "parameter since has 2 values, want 1"},
		{name: "a NULL", read: "discard_counts", params: []warehouse.Param{{ParamSpec: warehouse.ParamSpec{Name: "since", Type: warehouse.Timestamp}, Values: []warehouse.Value{warehouse.NullValue()}}},
			wantErr: "parameter since holds a NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := warehouse.NewStatement(tt.read, tt.params)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewStatement = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name() != tt.read {
				t.Errorf("Name = %q, want %q", s.Name(), tt.read)
			}
		})
	}
}

// TestInline: DuckDB's rendering writes each parameter as a literal of its
// type, quotes doubled, and an array as a list ("(NULL)" when empty).
func TestInline(t *testing.T) {
	at := time.Date(2026, 3, 14, 18, 0, 0, 123456000, time.UTC)
	tests := []struct {
		name   string
		read   string
		params []warehouse.Param
		want   []string
	}{
		{name: "scalars", read: "newest_windows", params: []warehouse.Param{
			{ParamSpec: warehouse.ParamSpec{Name: "aggregation", Type: warehouse.String}, Values: []warehouse.Value{warehouse.StringValue("o'brien")}},
			{ParamSpec: warehouse.ParamSpec{Name: "start_time", Type: warehouse.Timestamp}, Values: []warehouse.Value{warehouse.TimeValue(at)}},
			{ParamSpec: warehouse.ParamSpec{Name: "end_time", Type: warehouse.Timestamp}, Values: []warehouse.Value{warehouse.TimeValue(at)}},
			{ParamSpec: warehouse.ParamSpec{Name: "any_key", Type: warehouse.Int64}, Values: []warehouse.Value{warehouse.IntValue(0)}},
			{ParamSpec: warehouse.ParamSpec{Name: "keys", Type: warehouse.String, Array: true}, Values: []warehouse.Value{warehouse.StringValue("ES"), warehouse.StringValue("PT")}},
			{ParamSpec: warehouse.ParamSpec{Name: "max_windows", Type: warehouse.Int64}, Values: []warehouse.Value{warehouse.IntValue(-3)}},
		}, want: []string{"aggregation = 'o''brien'", "window_start >= TIMESTAMP '2026-03-14 18:00:00.123456'", "(0 = 1 OR pais IN ('ES', 'PT'))", "LIMIT (-3)"}},
		{name: "an empty array", read: "panes", params: []warehouse.Param{
			{ParamSpec: warehouse.ParamSpec{Name: "aggregation", Type: warehouse.String}, Values: []warehouse.Value{warehouse.StringValue("a")}},
			{ParamSpec: warehouse.ParamSpec{Name: "starts", Type: warehouse.Timestamp, Array: true}},
		}, want: []string{"window_start IN (NULL)"}},
		{name: "a date", read: "day_orders", params: []warehouse.Param{
			{ParamSpec: warehouse.ParamSpec{Name: "day", Type: warehouse.Date}, Values: []warehouse.Value{warehouse.DateValue(warehouse.DateOf(at))}},
		}, want: []string{"fecha = DATE '2026-03-14'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := warehouse.NewStatement(tt.read, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			sql := s.Inline()
			if strings.Contains(sql, "@") {
				t.Errorf("a parameter is left:\n%s", sql)
			}
			for _, w := range tt.want {
				if !strings.Contains(sql, w) {
					t.Errorf("lacks %q:\n%s", w, sql)
				}
			}
		})
	}
}

// TestParamText: the remote wire's text of each parameter type reads back
// as the same value, money exactly.
func TestParamText(t *testing.T) {
	d, err := numeric.Parse("-99999999999999999999.000000001", false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		typ  warehouse.Type
		v    warehouse.Value
		text string
	}{
		{name: "string", typ: warehouse.String, v: warehouse.StringValue("ñ'\""), text: "ñ'\""},
		{name: "int64", typ: warehouse.Int64, v: warehouse.IntValue(-9223372036854775808), text: "-9223372036854775808"},
		{name: "numeric", typ: warehouse.Numeric, v: warehouse.DecValue(d), text: "-99999999999999999999.000000001"},
		{name: "first date", typ: warehouse.Date, v: warehouse.DateValue(warehouse.FirstDate), text: "0001-01-01"},
		{name: "last date", typ: warehouse.Date, v: warehouse.DateValue(warehouse.LastDate), text: "9999-12-31"},
		{name: "timestamp", typ: warehouse.Timestamp, v: warehouse.TimeValue(time.Date(2026, 3, 14, 18, 0, 0, 123456000, time.UTC)), text: "2026-03-14T18:00:00.123456Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := warehouse.FormatParam(tt.typ, tt.v)
			if text != tt.text {
				t.Errorf("FormatParam = %q, want %q", text, tt.text)
			}
			back, err := warehouse.ParseParam(tt.typ, text)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.v, back, cmp.Comparer(func(a, b numeric.Dec) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNamedReadsFirstUseIsRaceFree: the first uses of the named reads may
// come from any goroutines at once (serve's dashboard refresh racing a
// replay), so the registry they consult must be built once and never
// written after. A first use happens once per process, so the test runs
// them in a fresh child of its own binary (built with -race when the test
// is) and fails on the child's race report or crash.
func TestNamedReadsFirstUseIsRaceFree(t *testing.T) {
	const child = "ALPIPE_WAREHOUSE_FIRST_USE_CHILD"
	if os.Getenv(child) == "1" {
		firstUsesAtOnce()
		fmt.Println(firstUsesMade)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNamedReadsFirstUseIsRaceFree$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), child+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("DATA RACE")) || !bytes.Contains(out, []byte(firstUsesMade)) {
		t.Fatalf("concurrent first uses of the named reads: %v\n%s", err, out)
	}
}

// firstUsesMade is what the child prints, so a child that ran nothing
// does not pass.
const firstUsesMade = "first uses made"

// firstUsesAtOnce makes every kind of first use of the registry together:
// each of the per-view reads (panes, newest windows, listings) and the
// lookups by name.
func firstUsesAtOnce() {
	const view = "ventas_sku_hora_movil" // not ventas_hora_pais, whose listing is static
	uses := []func(){
		func() { warehouse.ViewKey(view) },
		func() { warehouse.ViewListing(view) },
		func() { warehouse.ReadPanes(context.Background(), nil, view, "a", nil) },
		func() { warehouse.NewStatement("panes", nil) },
		func() { warehouse.NamedQueries() },
		func() { warehouse.ReadListing(context.Background(), nil, warehouse.ListView+":"+view) },
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, use := range uses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { recover() }() // a nil Reader: only the lookup matters
			<-start
			use()
		}()
	}
	close(start)
	wg.Wait()
}
