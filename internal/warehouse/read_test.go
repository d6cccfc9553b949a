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

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestInline: DuckDB's rendering writes each parameter as a literal of its
// type, quotes doubled, and an array as a list ("(NULL)" when empty).
func TestInline(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 3, 14, 18, 0, 0, 123456000, time.UTC)
	tests := []struct {
		name string
		read func(r warehouse.Reader)
		want []string
	}{
		{name: "scalars", read: func(r warehouse.Reader) {
			warehouse.ReadNewestWindows(ctx, r, warehouse.NewestWindows{Aggregation: "o'brien", From: at, Until: at, Keys: []string{"ES", "PT"}, Windows: -3})
		}, want: []string{"aggregation = 'o''brien'", "window_start >= TIMESTAMP '2026-03-14 18:00:00.123456'", "(0 = 1 OR pais IN ('ES', 'PT'))", "LIMIT (-3)"}},
		{name: "an empty array", read: func(r warehouse.Reader) { warehouse.ReadPanes(ctx, r, warehouse.VentasHoraPais, "a", nil) },
			want: []string{"window_start IN (NULL)"}},
		{name: "a date", read: func(r warehouse.Reader) { warehouse.ReadDayOrders(ctx, r, warehouse.DateOf(at)) },
			want: []string{"fecha = DATE '2026-03-14'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &statementReader{}
			tt.read(r) // the answer has not the read's columns: only the statement matters
			sql := r.got.Inline()
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

// TestParamText: the text of each parameter type, money exactly.
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
		{name: "timestamp", typ: warehouse.Timestamp, v: warehouse.TimeValue(time.Date(2026, 3, 14, 18, 0, 0, 123456789, time.UTC)),
			text: "2026-03-14T18:00:00.123456Z"},
	}
	for _, tt := range tests {
		if text := warehouse.FormatParam(tt.typ, tt.v); text != tt.text {
			t.Errorf("%s: FormatParam = %q, want %q", tt.name, text, tt.text)
		}
	}
}

// TestNamedReadsFirstUseIsRaceFree: the first uses of the named reads may
// come from goroutines at once. A first use happens once per process, so
// the test runs them in a child of its own binary (built with -race when
// the test is) and fails on its race report or crash.
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

// firstUsesMade is what the child prints, so a child that ran nothing fails.
const firstUsesMade = "first uses made"

// firstUsesAtOnce makes every kind of first use of the registry together.
func firstUsesAtOnce() {
	const view = "ventas_sku_hora_movil" // any declared view: its reads are built on first use
	uses := []func(){
		func() { warehouse.ViewKey(view) },
		func() { warehouse.ViewListing(view) },
		func() { warehouse.ReadPanes(context.Background(), nil, view, "a", nil) },
		func() { warehouse.NamedQueries() },
		func() { warehouse.ReadListing(context.Background(), nil, warehouse.ListView+":"+view) },
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, use := range uses {
		wg.Go(func() {
			defer func() { recover() }() // a nil Reader: only the lookup matters
			<-start
			use()
		})
	}
	close(start)
	wg.Wait()
}
