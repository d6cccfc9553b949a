package render

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestJSONStyle: one style for every --format json. tick used to print Go
// field names and nanoseconds ("Lag": 600000000000).
func TestJSONStyle(t *testing.T) {
	type inner struct {
		Importe numeric.Dec
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{
			name: "tick result: snake_case, RFC 3339, seconds",
			in: stream.TickResult{
				Now:          time.Date(2026, 3, 14, 18, 30, 0, 0, time.UTC),
				Aggregations: []stream.AggregationTick{{Aggregation: "ventas_hora_pais", Lag: 10 * time.Minute, OpenWindows: 3}},
			},
			want: `"now": "2026-03-14T18:30:00Z"|"aggregation": "ventas_hora_pais"|"lag_seconds": 600|"open_windows": 3|"watermark_before": null|"dead_letters_pending": 0`,
		},
		{
			name: "NUMERIC is an exact string",
			in:   inner{Importe: numeric.FromNanos(8990000000)},
			want: `"importe": "8.99"`,
		},
		{
			name: "field order is declaration order",
			in:   struct{ Zeta, Alpha int }{1, 2},
			want: "{\n  \"zeta\": 1,\n  \"alpha\": 2\n}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := JSON(&out, tt.in); err != nil {
				t.Fatal(err)
			}
			for _, w := range strings.Split(tt.want, "|") {
				if !strings.Contains(out.String(), w) {
					t.Errorf("JSON lacks %s:\n%s", w, out.String())
				}
			}
			for _, bad := range []string{`"Lag"`, `"Now"`, "600000000000"} {
				if strings.Contains(out.String(), bad) {
					t.Errorf("JSON has %s:\n%s", bad, out.String())
				}
			}
		})
	}
}

func TestSnake(t *testing.T) {
	got := []string{}
	for _, s := range []string{"PedidoID", "WatermarkBefore", "CRC32C", "MD5", "DeadLettersPending", "Lag", "MessageID", "HTTPStatus"} {
		got = append(got, snake(s))
	}
	want := []string{"pedido_id", "watermark_before", "crc32c", "md5", "dead_letters_pending", "lag", "message_id", "http_status"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snake (-want +got):\n%s", diff)
	}
}

// TestQueryOutput: one renderer for every format. Tables right-align
// numbers with separators; the text table is left-aligned with the values
// as given; money has its scale in all of them; JSON keeps the column
// order, numbers as numbers and NUMERIC as exact strings.
func TestQueryOutput(t *testing.T) {
	res := warehouse.Result{
		Columns: []string{"sku", "unidades", "importe"},
		Rows:    [][]string{{"MOCH-40L-AZ", "1800015", "89.9"}, {"GORRO", "7", "1234567.125"}, {"X", "NULL", "NULL"}},
	}
	kinds := Kinds(res.Columns, []string{"VARCHAR", "BIGINT", "DECIMAL(38,9)"})
	tests := []struct {
		name, format, want string
	}{
		{name: "table", format: "table", want: "" +
			"sku           unidades        importe\n" +
			"MOCH-40L-AZ  1,800,015          89.90\n" +
			"GORRO                7  1,234,567.125\n" +
			"X                    -              -\n"},
		{name: "json", format: "json", want: `[
  {
    "sku": "MOCH-40L-AZ",
    "unidades": 1800015,
    "importe": "89.90"
  },
  {
    "sku": "GORRO",
    "unidades": 7,
    "importe": "1234567.125"
  },
  {
    "sku": "X",
    "unidades": null,
    "importe": null
  }
]
`},
		{name: "text: left-aligned, values as given but money", format: "text", want: "" +
			"sku          unidades  importe\n" +
			"MOCH-40L-AZ  1800015   89.90\n" +
			"GORRO        7         1234567.125\n" +
			"X            -         -\n"},
		{name: "csv", format: "csv", want: "sku,unidades,importe\nMOCH-40L-AZ,1800015,89.90\nGORRO,7,1234567.125\nX,NULL,NULL\n"},
		{name: "jsonl", format: "jsonl", want: `{"sku":"MOCH-40L-AZ","unidades":1800015,"importe":"89.90"}
{"sku":"GORRO","unidades":7,"importe":"1234567.125"}
{"sku":"X","unidades":null,"importe":null}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Result(&out, res, kinds, tt.format); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTextNumbers: quantities get separators, money two decimals, and
// identifiers (generations, line numbers) stay as written.
func TestTextNumbers(t *testing.T) {
	kinds := Kinds([]string{"source_generation", "source_line", "cantidad"}, []string{"BIGINT", "BIGINT", "BIGINT"})
	got := []string{cell("1796130640498135", kinds[0]), cell("1234", kinds[1]), cell("1234", kinds[2]),
		PaneLine(window.Pane{Key: "fr", Measures: window.Measures{Importe: numeric.FromNanos(65400000000), Pedidos: 2, Unidades: 1500}})}
	want := []string{"1796130640498135", "1234", "1,234",
		"pane FR -inf--inf #0         importe=65.40 pedidos=2 unidades=1,500"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMoneyHasItsScale: an amount always shows its cents, and never loses
// a digit it has.
func TestMoneyHasItsScale(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "one decimal", in: "179.8", want: "179.80"},
		{name: "whole", in: "25", want: "25.00"},
		{name: "cents", in: "329.65", want: "329.65"},
		{name: "more digits kept", in: "1234567.125", want: "1234567.125"},
		{name: "negative", in: "-0.5", want: "-0.50"},
		{name: "zero", in: "0", want: "0.00"},
		{name: "NULL", in: "NULL", want: "NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Scaled(tt.in); got != tt.want {
				t.Errorf("Scaled(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if tt.in == "NULL" {
				return
			}
			d, err := numeric.Parse(tt.in, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := Money(d); got != tt.want {
				t.Errorf("Money(%s) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestDuration: one duration format for people; status used to print Go's
// "6302h43m3s behind" where the dashboard said "262d 13h".
func TestDuration(t *testing.T) {
	for sec, want := range DurationTable(t) {
		if got := Duration(time.Duration(sec) * time.Second); got != want {
			t.Errorf("Duration(%ds) = %q, want %q", sec, got, want)
		}
	}
}

// DurationTable reads testdata/durations.txt.
func DurationTable(t *testing.T) map[int64]string {
	t.Helper()
	f, err := os.Open("testdata/durations.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int64]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, text, _ := strings.Cut(line, " ")
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("durations.txt: %q: %v", line, err)
		}
		out[n] = text
	}
	return out
}

// TestWhen: people read a date, hours and minutes, and the zone; never
// Go's zero time.
func TestWhen(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{name: "UTC", in: time.Date(2026, 12, 2, 7, 34, 21, 0, time.UTC), want: "2026-12-02 07:34 UTC"},
		{name: "other zone shown in UTC", in: time.Date(2026, 3, 14, 19, 10, 0, 0, time.FixedZone("CET", 3600)), want: "2026-03-14 18:10 UTC"},
		{name: "zero", in: time.Time{}, want: "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := When(tt.in); got != tt.want {
				t.Errorf("When = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTick: a tick's line (`alpipe tick`, the demo) counts in words that
// agree with the number, with separators; it says how many windows failed
// and lists each with its error on one line (a layout-3 window by its
// extent and state document, a previous layout's cell with its key too); a
// healthy tick says nothing of failing windows, so it prints exactly what
// it did before they existed.
func TestTick(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 25, 0, 0, time.UTC)
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	cell := stream.FailingWindow{Path: "aggregations/ventas_hora_pais/state/20260314T170000Z_0", WindowStart: w, WindowEnd: w.Add(time.Hour),
		Since: now.Add(-time.Minute), Error: "add up: importe overflows"}
	es := stream.FailingWindow{Path: "streams/ventas_hora_pais/windows/20260314T170000Z_es", WindowStart: w, WindowEnd: w.Add(time.Hour),
		Key: "es", Since: now.Add(-5 * time.Minute), Error: "decode: layout 9 found,\n this binary reads layout 1"}
	doc := stream.FailingWindow{Path: "streams/ventas_hora_pais/deltas/garbage", Error: "not a delta path"}
	tests := []struct {
		name string
		tick stream.AggregationTick
		want string
	}{
		{name: "healthy", tick: stream.AggregationTick{Watermark: now.Add(-10 * time.Minute), Expired: 1200},
			want: "17:25:00 tick: watermark 17:15, 0 panes, 1,200 windows expired\n"},
		{name: "failing", tick: stream.AggregationTick{Watermark: now.Add(-10 * time.Minute), Expired: 1, Failing: []stream.FailingWindow{cell}, FailingCells: 2},
			want: "17:25:00 tick: watermark 17:15, 0 panes, 1 window expired, 2 windows failing (retried at every tick)\n" +
				"         failing 17:00-18:00 (aggregations/ventas_hora_pais/state/20260314T170000Z_0) since 2026-03-14 17:24 UTC: add up: importe overflows\n" +
				"         ... and 1 more failing window\n"},
		{name: "one of each", tick: stream.AggregationTick{Watermark: now.Add(-10 * time.Minute), Expired: 1, Failing: []stream.FailingWindow{es}, FailingCells: 1},
			want: "17:25:00 tick: watermark 17:15, 0 panes, 1 window expired, 1 window failing (retried at every tick)\n" +
				"         failing ES 17:00-18:00 (streams/ventas_hora_pais/windows/20260314T170000Z_es) since 2026-03-14 17:20 UTC: decode: layout 9 found, this binary reads layout 1\n"},
		{name: "more failing than reported", tick: stream.AggregationTick{Failing: []stream.FailingWindow{es, doc}, FailingCells: 5},
			want: "17:25:00 tick: watermark -inf, 0 panes, 0 windows expired, 5 windows failing (retried at every tick)\n" +
				"         failing ES 17:00-18:00 (streams/ventas_hora_pais/windows/20260314T170000Z_es) since 2026-03-14 17:20 UTC: decode: layout 9 found, this binary reads layout 1\n" +
				"         failing streams/ventas_hora_pais/deltas/garbage: not a delta path\n" +
				"         ... and 3 more failing windows\n"},
		{name: "busy", tick: stream.AggregationTick{Busy: true},
			want: "17:25:00 tick: another tick holds the lease; nothing done\n"},
	}
	for _, tt := range tests {
		checkTick(t, tt.name, stream.TickResult{Now: now, Aggregations: []stream.AggregationTick{tt.tick}}, tt.want)
	}
}

func checkTick(t *testing.T, name string, res stream.TickResult, want string) {
	t.Run(name, func(t *testing.T) {
		var b bytes.Buffer
		Tick(&b, res)
		if diff := cmp.Diff(want, b.String()); diff != "" {
			t.Errorf("Tick (-want +got):\n%s", diff)
		}
	})
}

// TestTickSeveral: with several aggregations each tick line names its
// aggregation (a busy one too), and each pane line follows its own.
func TestTickSeveral(t *testing.T) {
	now := time.Date(2026, 3, 14, 17, 8, 0, 0, time.UTC)
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	pane := func(key string, start time.Time) window.Pane {
		return window.Pane{Key: key, WindowStart: start, WindowEnd: start.Add(time.Hour), Timing: window.TimingEarly,
			Measures: window.Measures{Importe: numeric.FromNanos(89_900_000_000), Pedidos: 1, Unidades: 1}}
	}
	tests := []struct {
		name string
		res  stream.TickResult
		want string
	}{
		{name: "both ran", res: stream.TickResult{Now: now, Aggregations: []stream.AggregationTick{
			{Aggregation: "ventas_hora_pais", Watermark: now.Add(-13 * time.Minute), Panes: []window.Pane{pane("es", w)}},
			{Aggregation: "ventas_sku_hora_movil", Watermark: now.Add(-13 * time.Minute), Expired: 2,
				Panes: []window.Pane{pane("MOCH-40L-AZ", w.Add(-15*time.Minute)), pane("MOCH-40L-AZ", w)}}}},
			want: "17:08:00 tick ventas_hora_pais: watermark 16:55, 1 pane, 0 windows expired\n" +
				"         pane ES 17:00-18:00 #0 EARLY   importe=89.90 pedidos=1 unidades=1\n" +
				"17:08:00 tick ventas_sku_hora_movil: watermark 16:55, 2 panes, 2 windows expired\n" +
				"         pane MOCH-40L-AZ 16:45-17:45 #0 EARLY   importe=89.90 pedidos=1 unidades=1\n" +
				"         pane MOCH-40L-AZ 17:00-18:00 #0 EARLY   importe=89.90 pedidos=1 unidades=1\n"},
		{name: "one busy", res: stream.TickResult{Now: now, Aggregations: []stream.AggregationTick{
			{Aggregation: "ventas_hora_pais", Busy: true}, {Aggregation: "ventas_sku_hora_movil"}}},
			want: "17:08:00 tick ventas_hora_pais: another tick holds the lease; nothing done\n" +
				"17:08:00 tick ventas_sku_hora_movil: watermark -inf, 0 panes, 0 windows expired\n"},
	}
	for _, tt := range tests {
		checkTick(t, tt.name, tt.res, tt.want)
	}
}

// TestOrderLine: an order's line says its fate and window in the first
// aggregation; every other aggregation has a line of its own naming it,
// with the order's fate there and its windows by key (those too late
// apart). An order writes no pane: panes come with the tick.
func TestOrderLine(t *testing.T) {
	w := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	win := window.Window{Start: w, End: w.Add(time.Hour)}
	// slide is the sliding window (1 h every 15 min) starting m minutes
	// after w.
	slide := func(m int) window.Window {
		s := w.Add(time.Duration(m) * time.Minute)
		return window.Window{Start: s, End: s.Add(time.Hour)}
	}
	tests := []struct {
		name string
		res  stream.Result
		want string
	}{
		{name: "one aggregation", res: stream.Result{PedidoID: "P-1", Aggregations: []stream.Outcome{{Fate: stream.Accepted, Window: win, Key: "ES"}}},
			want: "order P-1       event 2026-03-14T18:02:00+01:00: accepted (window 17:00-18:00 ES)"},
		{name: "two aggregations", res: stream.Result{PedidoID: "P-1", Aggregations: []stream.Outcome{
			{Aggregation: "ventas_hora_pais", Fate: stream.Accepted, Window: win, Key: "ES"},
			{Aggregation: "ventas_sku_hora_movil", Fate: stream.Accepted, Window: win, Key: "FRONTAL-LED",
				Elements: []stream.ElementOutcome{
					{Window: slide(-45), Key: "FRONTAL-LED", Fate: stream.TooLate}, {Window: slide(-30), Key: "FRONTAL-LED", Fate: stream.Accepted},
					{Window: slide(-15), Key: "FRONTAL-LED", Fate: stream.Accepted}, {Window: slide(0), Key: "FRONTAL-LED", Fate: stream.Accepted},
				}}}},
			want: "order P-1       event 2026-03-14T18:02:00+01:00: accepted (window 17:00-18:00 ES)\n" +
				"         ventas_sku_hora_movil: accepted (FRONTAL-LED in 3 windows 16:30-17:30 to 17:00-18:00, too late for window 16:15-17:15)"},
		{name: "second aggregation: several keys, all too late, a line without a SKU", res: stream.Result{PedidoID: "P-2", Aggregations: []stream.Outcome{
			{Aggregation: "ventas_hora_pais", Fate: stream.TooLate, Window: win, Key: "FR"},
			{Aggregation: "ventas_sku_hora_movil", Fate: stream.TooLate, SKUMissing: []int{2}, Elements: []stream.ElementOutcome{
				{Window: slide(-15), Key: "A", Fate: stream.TooLate}, {Window: slide(0), Key: "A", Fate: stream.TooLate},
				{Window: slide(0), Key: "B", Fate: stream.TooLate},
			}}}},
			want: "order P-2       event 2026-03-14T18:02:00+01:00: too_late (window 17:00-18:00 FR)\n" +
				"         ventas_sku_hora_movil: too_late (A too late for 2 windows 16:45-17:45 to 17:00-18:00; B too late for window 17:00-18:00; 1 line without a SKU)"},
		{name: "second aggregation: a duplicate has no elements", res: stream.Result{PedidoID: "P-3", Aggregations: []stream.Outcome{
			{Aggregation: "ventas_hora_pais", Fate: stream.Duplicate, Window: win, Key: "ES"},
			{Aggregation: "ventas_sku_hora_movil", Fate: stream.Duplicate, Window: win, Key: "MOCH-40L-AZ"}}},
			want: "order P-3       event 2026-03-14T18:02:00+01:00: duplicate (window 17:00-18:00 ES)\n" +
				"         ventas_sku_hora_movil: duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, OrderLine(tt.res, "2026-03-14T18:02:00+01:00")); diff != "" {
				t.Errorf("OrderLine (-want +got):\n%s", diff)
			}
		})
	}
}
