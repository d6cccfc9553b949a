package render

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestJSONStyle: one style for every --format json. tick used to print Go
// field names and nanoseconds ("Lag": 600000000000); stream's
// TestTickJSON checks a real tick.
func TestJSONStyle(t *testing.T) {
	type inner struct {
		Importe numeric.Dec
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "a tick result's shape: snake_case, RFC 3339, seconds, zero time null", in: struct {
			Now             time.Time
			Lag             time.Duration
			WatermarkBefore time.Time
		}{Now: time.Date(2026, 3, 14, 18, 30, 0, 0, time.UTC), Lag: 10 * time.Minute},
			want: `"now": "2026-03-14T18:30:00Z"|"lag_seconds": 600|"watermark_before": null`},
		{name: "NUMERIC is an exact string", in: inner{Importe: numeric.FromNanos(8990000000)}, want: `"importe": "8.99"`},
		{name: "field order is declaration order", in: struct{ Zeta, Alpha int }{1, 2}, want: "{\n  \"zeta\": 1,\n  \"alpha\": 2\n}"},
		{name: "a nil list is an empty one, never null", in: []time.Time(nil), want: "[]"},
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

// TestFormats: the one way each thing is written for people. JSON keys are
// snake_case; quantities get separators, identifiers (generations, line
// numbers) stay as written; a time is a date, hours and minutes and the
// zone, never Go's zero time; Clip makes one line and cuts in whole letters.
func TestFormats(t *testing.T) {
	kinds := Kinds([]string{"source_generation", "source_line", "cantidad"}, []string{"BIGINT", "BIGINT", "BIGINT"})
	for _, c := range []struct{ name, got, want string }{
		{name: "snake(PedidoID)", got: snake("PedidoID"), want: "pedido_id"},
		{name: "snake(WatermarkBefore)", got: snake("WatermarkBefore"), want: "watermark_before"},
		{name: "snake(CRC32C)", got: snake("CRC32C"), want: "crc32c"},
		{name: "snake(MD5)", got: snake("MD5"), want: "md5"},
		{name: "snake(DeadLettersPending)", got: snake("DeadLettersPending"),
			want: "dead_letters_pending"},
		{name: "snake(Lag)", got: snake("Lag"), want: "lag"},
		{name: "snake(MessageID)", got: snake("MessageID"), want: "message_id"},
		{name: "snake(HTTPStatus)", got: snake("HTTPStatus"), want: "http_status"},
		{name: "cell(generation)", got: cell("1796130640498135", kinds[0]),
			want: "1796130640498135"},
		{name: "cell(line)", got: cell("1234", kinds[1]), want: "1234"},
		{name: "cell(quantity)", got: cell("1234", kinds[2]), want: "1,234"},
		{name: "Short(1h)", got: Short(time.Hour), want: "1h"},
		{name: "Short(15m)", got: Short(15 * time.Minute), want: "15m"},
		{name: "Short(90m)", got: Short(90 * time.Minute), want: "1h30m"},
		{name: "Short(90s)", got: Short(90 * time.Second), want: "1m30s"},
		{name: "Short(0)", got: Short(0), want: "0s"},
		{name: "When(UTC)", got: When(time.Date(2026, 12, 2, 7, 34, 21, 0, time.UTC)),
			want: "2026-12-02 07:34 UTC"},
		{name: "When(CET)",
			got:  When(time.Date(2026, 3, 14, 19, 10, 0, 0, time.FixedZone("CET", 3600))),
			want: "2026-03-14 18:10 UTC"},
		{name: "When(zero)", got: When(time.Time{}), want: "-"},
		{name: "Clip(spaces)", got: Clip("a\n b\t\tc ", 10), want: "a b c"},
		{name: "Clip(short)", got: Clip("abc", 10), want: "abc"},
		{name: "Clip(é x13)", got: Clip(strings.Repeat("é", 13), 10),
			want: strings.Repeat("é", 7) + "..."},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestMoneyHasItsScale: an amount always shows its cents, and never loses
// a digit it has.
func TestMoneyHasItsScale(t *testing.T) {
	for in, want := range map[string]string{"179.8": "179.80", "25": "25.00", "329.65": "329.65", "1234567.125": "1234567.125", "-0.5": "-0.50", "0": "0.00", "NULL": "NULL"} {
		if got := Scaled(in); got != want {
			t.Errorf("Scaled(%q) = %q, want %q", in, got, want)
		}
		if d, err := numeric.Parse(in, false); err == nil && Money(d) != want {
			t.Errorf("Money(%s) = %q, want %q", in, Money(d), want)
		} else if err != nil && in != "NULL" {
			t.Fatal(err)
		}
	}
}

// TestDuration: one duration format for people, the dashboard's too.
func TestDuration(t *testing.T) {
	b, err := os.ReadFile("testdata/durations.txt")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		s, want, _ := strings.Cut(strings.TrimSpace(line), " ")
		sec, err := strconv.ParseInt(s, 10, 64)
		if line == "\n" || strings.HasPrefix(line, "#") {
			continue
		} else if err != nil {
			t.Fatalf("durations.txt: %q: %v", line, err)
		}
		if got := Duration(time.Duration(sec) * time.Second); got != want {
			t.Errorf("Duration(%ds) = %q, want %q", sec, got, want)
		}
	}
}
