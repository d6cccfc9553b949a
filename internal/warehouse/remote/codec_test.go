package remote

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// allTypes has one NULLABLE column of every type, so each case below sets
// one cell and leaves the others NULL.
var allTypes = warehouse.Table{Name: "all_types", Schema: []warehouse.Field{
	{Name: "s", Type: warehouse.String, Mode: "NULLABLE"},
	{Name: "i", Type: warehouse.Int64, Mode: "NULLABLE"},
	{Name: "n", Type: warehouse.Numeric, Mode: "NULLABLE"},
	{Name: "d", Type: warehouse.Date, Mode: "NULLABLE"},
	{Name: "t", Type: warehouse.Timestamp, Mode: "NULLABLE"},
}}

func mustCodec(t testing.TB, tbl warehouse.Table) *codec {
	t.Helper()
	c, err := newCodec(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cells is a row of allTypes with the given cells set and the rest NULL.
func cells(set map[string]warehouse.Value) []warehouse.Value {
	row := make([]warehouse.Value, len(allTypes.Schema))
	for i, f := range allTypes.Schema {
		v, ok := set[f.Name]
		if !ok {
			v = warehouse.NullValue()
		}
		row[i] = v
	}
	return row
}

func str(s string) map[string]warehouse.Value {
	return map[string]warehouse.Value{"s": warehouse.StringValue(s)}
}
func i64(n int64) map[string]warehouse.Value {
	return map[string]warehouse.Value{"i": warehouse.IntValue(n)}
}
func day(n int32) map[string]warehouse.Value {
	return map[string]warehouse.Value{"d": warehouse.DateValue(n)}
}
func tim(t time.Time) map[string]warehouse.Value {
	return map[string]warehouse.Value{"t": warehouse.TimeValue(t)}
}

func dec(t testing.TB, s string) map[string]warehouse.Value {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]warehouse.Value{"n": warehouse.DecValue(d)}
}

func instant(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRowRoundTrip(t *testing.T) {
	c := mustCodec(t, allTypes)
	tests := []struct {
		name string
		row  []warehouse.Value
		want []warehouse.Value // nil: the row itself
		line string            // the wire form, when it is worth pinning
	}{
		{name: "all NULL", row: cells(nil), line: "[null,null,null,null,null]"},
		{name: "empty string is not NULL", row: cells(str("")), line: `["",null,null,null,null]`},
		{name: "string that reads null", row: cells(str("null"))},
		{name: "quotes, backslashes and slashes", row: cells(str(`a "b" \c\ /d/`)), line: `["a \"b\" \\c\\ /d/",null,null,null,null]`},
		{name: "control characters", row: cells(str("\x00\x01\t\n\r\x1f\x7f")), line: `["\u0000\u0001\t\n\r\u001f` + "\x7f" + `",null,null,null,null]`},
		{name: "multi-byte runes", row: cells(str("Ñandú 🏔️ ß ÿ \u2028 \ufeff"))},
		{name: "500 two-byte runes", row: cells(str(strings.Repeat("ñ", 500)))},
		{name: "invalid UTF-8 travels as base64", row: cells(str("a\xffb\xc3")), line: `[{"base64":"Yf9iww=="},null,null,null,null]`},
		{name: "a lone surrogate's bytes", row: cells(str("\xed\xa0\x80"))},
		{name: "int64 zero", row: cells(i64(0))},
		{name: "int64 max", row: cells(i64(math.MaxInt64)), line: "[null,9223372036854775807,null,null,null]"},
		{name: "int64 min", row: cells(i64(math.MinInt64)), line: "[null,-9223372036854775808,null,null,null]"},
		{name: "int64 beyond a double's exact range", row: cells(i64(1<<53 + 1))},
		{name: "numeric zero", row: cells(dec(t, "0"))},
		{name: "numeric smallest step", row: cells(dec(t, "0.000000001")), line: `[null,null,"0.000000001",null,null]`},
		{name: "numeric negative step", row: cells(dec(t, "-0.000000001"))},
		{name: "numeric past int64", row: cells(dec(t, "9223372036.854775808"))},
		{name: "numeric max", row: cells(dec(t, "99999999999999999999999999999.999999999")), line: `[null,null,"99999999999999999999999999999.999999999",null,null]`},
		{name: "numeric min", row: cells(dec(t, "-99999999999999999999999999999.999999999"))},
		{name: "numeric trailing zeros", row: cells(dec(t, "89.900")), line: `[null,null,"89.9",null,null]`},
		{name: "date epoch", row: cells(day(0))},
		{name: "date before the epoch", row: cells(day(-1))},
		{name: "date min int32", row: cells(day(math.MinInt32))},
		{name: "date max int32", row: cells(day(math.MaxInt32))},
		{name: "date 2026-03-14", row: cells(day(20526)), line: "[null,null,null,20526,null]"},
		{name: "timestamp with microseconds", row: cells(tim(instant(t, "2026-03-15T02:00:00.123456Z"))), line: "[null,null,null,null,1773540000123456]"},
		{name: "timestamp just before the epoch", row: cells(tim(instant(t, "1969-12-31T23:59:59.999999Z")))},
		{name: "timestamp year 1", row: cells(tim(instant(t, "0001-01-01T00:00:00Z")))},
		{name: "timestamp year 9999", row: cells(tim(instant(t, "9999-12-31T23:59:59.999999Z")))},
		{name: "timestamp min int64 microseconds", row: cells(tim(time.UnixMicro(math.MinInt64)))},
		{name: "timestamp max int64 microseconds", row: cells(tim(time.UnixMicro(math.MaxInt64)))},
		{name: "timestamp in another zone keeps its instant", row: cells(map[string]warehouse.Value{"t": {Time: time.Date(2026, 3, 15, 3, 0, 0, 0, time.FixedZone("CET", 3600))}}),
			want: cells(tim(instant(t, "2026-03-15T02:00:00Z")))},
		{name: "nanoseconds are floored to microseconds, as the warehouses keep them", row: cells(tim(instant(t, "2026-03-15T02:00:00.123456789Z"))),
			want: cells(tim(instant(t, "2026-03-15T02:00:00.123456Z")))},
		{name: "nanoseconds before the epoch floor too", row: cells(tim(instant(t, "1969-12-31T23:59:59.9999999Z"))),
			want: cells(tim(instant(t, "1969-12-31T23:59:59.999999Z")))},
		{name: "every column set", row: cells(map[string]warehouse.Value{
			"s": warehouse.StringValue("x"), "i": warehouse.IntValue(-7), "n": warehouse.DecValue(numeric.FromNanos(179_800_000_000)),
			"d": warehouse.DateValue(-719162), "t": warehouse.TimeValue(time.Unix(0, 1000)),
		}), line: `["x",-7,"179.8",-719162,1]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := c.appendRow(nil, tc.row)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if line[len(line)-1] != '\n' {
				t.Fatalf("line %q does not end with a newline", line)
			}
			line = line[:len(line)-1]
			if tc.line != "" && string(line) != tc.line {
				t.Errorf("wire form:\n got %s\nwant %s", line, tc.line)
			}
			if !json.Valid(line) {
				t.Errorf("line %s is not valid JSON", line)
			}
			got := make([]warehouse.Value, len(allTypes.Schema))
			if _, err := c.decodeRow(line, got, false); err != nil {
				t.Fatalf("decode %s: %v", line, err)
			}
			want := tc.want
			if want == nil {
				want = tc.row
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip of %s (-want +got)\n%s", line, diff)
			}
		})
	}
}

func TestIDRowRoundTrip(t *testing.T) {
	c := mustCodec(t, allTypes)
	tests := []struct {
		name string
		row  warehouse.Row
	}{
		{"pane identity with slashes", warehouse.Row{ID: "wt1/2026-03-14T18:00:00Z/ES/0", Values: cells(i64(3))}},
		{"empty ID", warehouse.Row{ID: "", Values: cells(nil)}},
		{"ID that is not UTF-8", warehouse.Row{ID: "m\xff", Values: cells(str("x"))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, err := c.appendIDRow(nil, tc.row)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			vals := make([]warehouse.Value, len(allTypes.Schema))
			id, err := c.decodeRow(line[:len(line)-1], vals, true)
			if err != nil {
				t.Fatalf("decode %s: %v", line, err)
			}
			if diff := cmp.Diff(tc.row, warehouse.Row{ID: id, Values: vals}); diff != "" {
				t.Errorf("round trip of %s (-want +got)\n%s", line, diff)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	c := mustCodec(t, allTypes)
	tests := []struct {
		name string
		row  []warehouse.Value
		want string
	}{
		{"too few values", []warehouse.Value{warehouse.StringValue("x")}, "1 values for the 5 columns of all_types"},
		{"too many values", append(cells(nil), warehouse.NullValue()), "6 values for the 5 columns"},
		{"timestamp beyond int64 microseconds", cells(tim(time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC))), "column t: timestamp"},
		{"timestamp before int64 microseconds", cells(tim(time.Date(-300000, 1, 1, 0, 0, 0, 0, time.UTC))), "outside the range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.appendRow(nil, tc.row)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	c := mustCodec(t, allTypes)
	tests := []struct {
		name string
		line string
		want string
	}{
		{"empty line", ``, "JSON array"},
		{"an object", `{"s":"x"}`, "JSON array"},
		{"too few values", `[null,null]`, "2 values for the 5 columns"},
		{"too many values", `[null,null,null,null,null,null]`, "more values than the 5 columns"},
		{"trailing bytes", `[null,null,null,null,null]x`, "trailing bytes"},
		{"unterminated array", `[null,null,null,null,null`, "expected ']'"},
		{"string for an INT64", `[null,"1",null,null,null]`, "column i: expected an integer"},
		{"float for an INT64", `[null,1.5,null,null,null]`, "expected ','"},
		{"INT64 overflow", `[null,9223372036854775808,null,null,null]`, "column i: integer out of range"},
		{"INT64 underflow", `[null,-9223372036854775809,null,null,null]`, "integer out of range"},
		{"huge integer", `[null,99999999999999999999999,null,null,null]`, "integer out of range"},
		{"bare minus", `[null,-,null,null,null]`, "expected an integer"},
		{"number for a NUMERIC", `[null,null,1.5,null,null]`, "column n: expected a string"},
		{"NUMERIC with ten decimals", `[null,null,"0.0000000001",null,null]`, "more than 9 decimal places"},
		{"NUMERIC out of range", `[null,null,"100000000000000000000000000000",null,null]`, "outside NUMERIC's range"},
		{"NUMERIC with a comma", `[null,null,"89,90",null,null]`, "not a decimal number"},
		{"DATE as text", `[null,null,null,"2026-03-14",null]`, "column d: expected an integer"},
		{"DATE beyond int32", `[null,null,null,2147483648,null]`, "DATE 2147483648 days is out of range"},
		{"TIMESTAMP as text", `[null,null,null,null,"2026-03-14T00:00:00Z"]`, "column t: expected an integer"},
		{"unterminated string", `["abc`, "unterminated string"},
		{"raw control character", "[\"a\x01b\",null,null,null,null]", "control character"},
		{"bad escape", `["a\qb",null,null,null,null]`, "column s: string at byte"},
		{"bad base64", `[{"base64":"***"},null,null,null,null]`, "base64"},
		{"unknown object", `[{"hex":"00"},null,null,null,null]`, `expected a string or {"base64":...}`},
		{"a number for a STRING", `[1,null,null,null,null]`, "column s: expected a string"},
		{"nul is not null", `[nul,null,null,null,null]`, "expected a string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := make([]warehouse.Value, len(allTypes.Schema))
			_, err := c.decodeRow([]byte(tc.line), row, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decode %s: got error %v, want one containing %q", tc.line, err, tc.want)
			}
		})
	}
}

func TestEndLine(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    int64
		wantErr bool
	}{
		{name: "zero rows", line: `{"end":0}`, want: 0},
		{name: "many rows", line: `{"end":8000000}`, want: 8_000_000},
		{name: "negative", line: `{"end":-1}`, wantErr: true},
		{name: "no count", line: `{"end":}`, wantErr: true},
		{name: "text count", line: `{"end":"3"}`, wantErr: true},
		{name: "trailing bytes", line: `{"end":3}x`, wantErr: true},
		{name: "other key", line: `{"rows":3}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEnd([]byte(tc.line))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseEnd(%s) error %v, want error %v", tc.line, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("parseEnd(%s) = %d, want %d", tc.line, got, tc.want)
			}
		})
	}
	if got := string(appendEnd(nil, 42)); got != "{\"end\":42}\n" {
		t.Errorf("appendEnd(42) = %q", got)
	}
}

func TestCodecRejectsUnknownType(t *testing.T) {
	_, err := newCodec(warehouse.Table{Name: "x", Schema: []warehouse.Field{{Name: "f", Type: "FLOAT64"}}})
	if err == nil || !strings.Contains(err.Error(), `unsupported type "FLOAT64"`) {
		t.Errorf("got %v, want an unsupported type error", err)
	}
}

// Every declared table is encodable, so a new column type cannot slip into
// a schema file without the wire format learning it.
func TestEveryTableHasACodec(t *testing.T) {
	for _, tbl := range warehouse.Tables() {
		t.Run(tbl.Name, func(t *testing.T) {
			if _, err := newCodec(tbl); err != nil {
				t.Error(err)
			}
		})
	}
}

func FuzzStringRoundTrip(f *testing.F) {
	for _, s := range []string{"", "null", `"`, `\`, "\x00", "\xff", "ñ", "\u2028", "a\"b\\c\nd", "\xed\xa0\x80", "{\"base64\":\"AA==\"}"} {
		f.Add(s)
	}
	c := mustCodec(f, allTypes)
	f.Fuzz(func(t *testing.T, s string) {
		line, err := c.appendRow(nil, cells(str(s)))
		if err != nil {
			t.Fatal(err)
		}
		line = line[:len(line)-1]
		if !json.Valid(line) {
			t.Fatalf("%q encodes as invalid JSON %s", s, line)
		}
		got := make([]warehouse.Value, len(allTypes.Schema))
		if _, err := c.decodeRow(line, got, false); err != nil {
			t.Fatalf("decode %s: %v", line, err)
		}
		if got[0].Str != s || got[0].Null {
			t.Fatalf("%q came back as %+v", s, got[0])
		}
	})
}

// The server decodes every row of a body into one reused buffer, keeping a
// string that equals the previous row's: each row must still come out as
// it was sent, whatever the row before it held.
func TestDecodeIntoAReusedRow(t *testing.T) {
	c := mustCodec(t, allTypes)
	seq := []struct {
		name string
		row  []warehouse.Value
	}{
		{"a string", cells(str("ES"))},
		{"the same string", cells(str("ES"))},
		{"NULL after it", cells(nil)},
		{"the empty string after NULL", cells(str(""))},
		{"NULL after the empty string", cells(nil)},
		{"another string", cells(map[string]warehouse.Value{"s": warehouse.StringValue("PT"), "i": warehouse.IntValue(1)})},
		{"NULL int after a set one", cells(str("PT"))},
	}
	dst := make([]warehouse.Value, len(allTypes.Schema))
	for _, step := range seq {
		line, err := c.appendRow(nil, step.row)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.decodeRow(line[:len(line)-1], dst, false); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.row, dst); diff != "" {
			t.Errorf("%s (-want +got)\n%s", step.name, diff)
		}
	}
}
