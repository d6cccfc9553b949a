package contract

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

func bytesOf(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func bind(t testing.TB, f *Feed, header ...string) *Binding {
	t.Helper()
	if header == nil {
		header = f.Header()
	}
	b, err := f.Bind(bytesOf(header...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func feed(t testing.TB, name string) *Feed {
	t.Helper()
	f, ok := mustDefault(t).Feed(name)
	if !ok {
		t.Fatalf("no feed %s", name)
	}
	return f
}

func dec(t testing.TB, s string) schema.Value {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return schema.DecValue(d)
}

func date(t testing.TB, s string) schema.Value {
	t.Helper()
	d, ok := parseDate([]byte(s))
	if !ok {
		t.Fatalf("bad test date %s", s)
	}
	return schema.DateValue(d)
}

var (
	str  = schema.StringValue
	num  = schema.IntValue
	null = schema.NullValue()
)

// with returns base with field i replaced by v.
func with(base []string, i int, v string) []string {
	out := slices.Clone(base)
	out[i] = v
	return out
}

// edited returns a function giving a copy of base with edit (if any) applied.
func edited(base ...schema.Value) func(edit func(v []schema.Value)) []schema.Value {
	return func(edit func(v []schema.Value)) []schema.Value {
		v := slices.Clone(base)
		if edit != nil {
			edit(v)
		}
		return v
	}
}

type validateCase struct {
	name string
	row  []string
	want Reject
	vals []schema.Value // checked when want is OK
}

func runValidate(t *testing.T, b *Binding, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := make([]schema.Value, b.Feed().Width()+4)
			got := b.Validate(bytesOf(tt.row...), out)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Validate(%q) reject (-want +got):\n%s", tt.row, diff)
			}
			// Every code Validate gives has its metric (see RejectCodes).
			if codes := append(RejectCodes(), b.Feed().RejectCodes()...); !got.OK() && !slices.Contains(codes, got.Code) {
				t.Errorf("reject code %s is not in the RejectCodes %q", got.Code, codes)
			}
			if got.OK() {
				if tt.vals == nil {
					t.Fatal("test case gives no values to check")
				}
				if diff := cmp.Diff(tt.vals, out[:b.Feed().Width()]); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// The rules' rows the golden fixtures show (TestGolden) are not repeated here.
func TestValidateLineasPedido(t *testing.T) {
	b := bind(t, feed(t, "lineas_pedido"))
	// pedido_id linea fecha sku cantidad precio_unitario cliente_id pais
	base := []string{"PED-1", "1", "2026-03-14", "MOCH-40L-AZ", "2", "89,90", "CLI-7", "ES"}
	vals := edited(str("PED-1"), num(1), date(t, "2026-03-14"), str("MOCH-40L-AZ"), num(2),
		dec(t, "89.9"), str("CLI-7"), str("ES"), dec(t, "179.8"))
	runValidate(t, b, []validateCase{
		{name: "valid", row: base, vals: vals(nil)},
		{name: "decimal point also accepted", row: with(base, 5, "89.90"), vals: vals(nil)},
		{name: "price trimmed", row: with(base, 5, " 89,90 "), vals: vals(nil)},
		{name: "price with 9 decimals", row: with(base, 5, "0,000000001"), vals: vals(func(v []schema.Value) { v[5], v[8] = dec(t, "0.000000001"), dec(t, "0.000000002") })},
		{name: "sku trimmed and upper-cased", row: with(base, 3, "  moch-40l-az\t"), vals: vals(nil)},
		{name: "country trimmed and upper-cased", row: with(base, 7, " es "), vals: vals(nil)},
		{name: "ids trimmed", row: with(with(base, 0, " PED-1 "), 6, " CLI-7"), vals: vals(nil)},
		{name: "customer blank is null", row: with(base, 6, "   "), vals: vals(func(v []schema.Value) { v[6] = null })},
		{name: "line and quantity with plus sign", row: with(with(base, 1, "+1"), 4, "+2"), vals: vals(nil)},
		{name: "large exact amount", row: with(with(base, 4, "3"), 5, "3333333,333333333"), vals: vals(func(v []schema.Value) {
			v[4], v[5], v[8] = num(3), dec(t, "3333333.333333333"), dec(t, "9999999.999999999")
		})},

		{name: "encoding checked before rules", row: with(with(base, 2, "2026-02-30"), 6, "\xff"), want: Reject{"invalid_utf8", `column 7 (cliente_id): invalid UTF-8 "\xff"`}},
		{name: "columns checked in order", row: with(with(base, 1, "0"), 4, "-2"), want: Reject{"linea:below_min", "linea: must be >= 1, got 0"}},

		{name: "order id blank", row: with(base, 0, "  "), want: Reject{"pedido_id:required", "pedido_id: required value is empty"}},
		{name: "line not a number", row: with(base, 1, "uno"), want: Reject{"linea:invalid_int", `linea: not an integer "uno"`}},
		{name: "line missing", row: with(base, 1, ""), want: Reject{"linea:required", "linea: required value is empty"}},
		{name: "date day first, a declared format", row: with(base, 2, "14/03/2026"), vals: vals(nil)},
		{name: "date day first, impossible", row: with(base, 2, "30/02/2026"), want: Reject{"fecha:invalid_date", `fecha: invalid date "30/02/2026"`}},
		{name: "date day first, unpadded", row: with(base, 2, "4/3/2026"), want: Reject{"fecha:invalid_date", `fecha: invalid date "4/3/2026"`}},
		{name: "date month first is not declared", row: with(base, 2, "03-14-2026"), want: Reject{"fecha:invalid_date", `fecha: invalid date "03-14-2026"`}},
		{name: "quantity huge", row: with(base, 4, "99999999999999999999"), want: Reject{"cantidad:out_of_range", `cantidad: integer out of range "99999999999999999999"`}},
		{name: "price negative", row: with(base, 5, "-0,01"), want: Reject{"precio_unitario:below_min", "precio_unitario: must be >= 0, got -0.01"}},
		{name: "price grouped twice", row: with(with(base, 4, "1"), 5, "1.234.567,5"), vals: vals(func(v []schema.Value) { v[4], v[5], v[8] = num(1), dec(t, "1234567.5"), dec(t, "1234567.5") })},
		{name: "price grouped without decimals", row: with(with(base, 4, "1"), 5, "1.234.567"), vals: vals(func(v []schema.Value) { v[4], v[5], v[8] = num(1), dec(t, "1234567"), dec(t, "1234567") })},
		{name: "price negative grouped", row: with(base, 5, "-1.089,90"), want: Reject{"precio_unitario:below_min", "precio_unitario: must be >= 0, got -1089.9"}},
		{name: "price grouping not in threes", row: with(base, 5, "10.89,90"), want: Reject{"precio_unitario:invalid_numeric", `precio_unitario: thousands not grouped in threes "10.89,90"`}},
		{name: "price group too long", row: with(base, 5, "1.0899,90"), want: Reject{"precio_unitario:invalid_numeric", `precio_unitario: thousands not grouped in threes "1.0899,90"`}},
		{name: "price grouping after the comma", row: with(base, 5, "1089,900.1"), want: Reject{"precio_unitario:invalid_numeric", `precio_unitario: not a decimal number "1089,900.1"`}},
		{name: "price English grouping", row: with(base, 5, "1,089.90"), want: Reject{"precio_unitario:invalid_numeric", `precio_unitario: not a decimal number "1,089.90"`}},
		{name: "nul byte", row: with(base, 6, "CLI\x007"), want: Reject{"nul_byte", `column 7 (cliente_id): NUL byte in "CLI\x007"`}},
		{name: "price too precise", row: with(base, 5, "0,0000000001"), want: Reject{"precio_unitario:too_precise", `precio_unitario: more than 9 decimal places "0,0000000001"`}},
		{name: "price out of range", row: with(base, 5, "100000000000000000000000000000"), want: Reject{"precio_unitario:out_of_range", `precio_unitario: number outside NUMERIC's range (29 integer digits, 9 decimals) "100000000000000000000000000000"`}},
		{name: "price at NUMERIC's bound", row: with(with(base, 4, "1"), 5, "99999999999999999999999999999,999999999"), vals: vals(func(v []schema.Value) {
			v[4], v[5], v[8] = num(1), dec(t, "99999999999999999999999999999.999999999"), dec(t, "99999999999999999999999999999.999999999")
		})},
		{name: "amount overflows", row: with(with(base, 4, "1000000000"), 5, "100000000000000000000"), want: Reject{"importe:out_of_range", "importe: cantidad * precio_unitario is out of range or not exact at 9 decimals"}},
	})
}

func TestValidateOpiniones(t *testing.T) {
	b := bind(t, feed(t, "opiniones"))
	// opinion_id sku fecha puntuacion texto pais
	base := []string{"OP-1", "MOCH-40L-AZ", "2026-03-02", "5", "Muy cómoda", "ES"}
	vals := edited(str("OP-1"), str("MOCH-40L-AZ"), date(t, "2026-03-02"), num(5), str("Muy cómoda"),
		str("ES"))
	long := strings.Repeat("ñ", 499) + "🏔" + "tail"
	runValidate(t, b, []validateCase{
		{name: "valid", row: base, vals: vals(nil)},
		{name: "normalised sku and country", row: with(with(base, 1, "moch-40l-az"), 5, "es"), vals: vals(nil)},
		{name: "text trimmed", row: with(base, 4, "  Muy cómoda \r\n"), vals: vals(nil)},
		{name: "text of 500 runes kept", row: with(base, 4, long[:len(long)-4]), vals: vals(func(v []schema.Value) { v[4] = str(long[:len(long)-4]) })},
		{name: "text cut at 500 runes", row: with(base, 4, long), vals: vals(func(v []schema.Value) { v[4] = str(long[:len(long)-4]) })},
		{name: "text cut before a 4-byte rune", row: with(base, 4, strings.Repeat("a", 500)+"🏔"), vals: vals(func(v []schema.Value) { v[4] = str(strings.Repeat("a", 500)) })},
		{name: "text with quotes and newlines", row: with(base, 4, "dice \"genial\"\nde verdad"), vals: vals(func(v []schema.Value) { v[4] = str("dice \"genial\"\nde verdad") })},
		{name: "score bounds", row: with(base, 3, "1"), vals: vals(func(v []schema.Value) { v[3] = num(1) })},

		{name: "date impossible", row: with(base, 2, "2026-04-31"), want: Reject{"fecha:invalid_date", `fecha: invalid date "2026-04-31"`}},
		{name: "date after the partitions", row: with(base, 2, "9999-12-31"), want: Reject{"fecha:out_of_partition_range", `fecha: "9999-12-31" is outside the warehouse's daily partitions 1960-01-01..2159-12-31`}},
		{name: "country lower-case unknown", row: with(base, 5, "xx"), want: Reject{"pais:not_iso3166", `pais: "XX" is not an ISO 3166-1 alpha-2 country code`}},
		{name: "extra field", row: append(base, "x"), want: Reject{"column_count", "expected 6 columns, got 7"}},
	})
}

// Only the date_column partitions a table: another DATE column may hold
// any valid date, and the code follows the declared date_column's name.
func TestPartitionRangeAppliesToTheDateColumn(t *testing.T) {
	reg := mustParse(t, map[string][]byte{"d.json": []byte(`{
  "feed": "fechas", "objects": "^fechas/", "table": "fechas", "encoding": "utf-8",
  "columns": [
    {"name": "dia", "type": "DATE", "required": true},
    {"name": "nacimiento", "type": "DATE"}
  ],
  "date_column": "dia"
}`)})
	f, _ := reg.Feed("fechas")
	runValidate(t, bind(t, f), []validateCase{
		{name: "other date column unbounded", row: []string{"2026-03-14", "1901-05-02"}, vals: []schema.Value{date(t, "2026-03-14"), date(t, "1901-05-02")}},
		{name: "date column bounded", row: []string{"1901-05-02", ""}, want: Reject{"dia:out_of_partition_range", `dia: "1901-05-02" is outside the warehouse's daily partitions 1960-01-01..2159-12-31`}},
	})
}

// A test-only feed exercising what the embedded ones do not: Windows-1252,
// lower-casing, patterns, inline sets, max_runes, every kind of derived
// column and optional operands.
const kitchenSink = `{
  "feed": "sink", "objects": "^sink/", "table": "sink", "encoding": "windows-1252",
  "columns": [
    {"name": "code", "type": "STRING", "required": true, "normalize": ["trim", "lower"], "pattern": "^[a-z]{2}-[0-9]+$"},
    {"name": "color", "type": "STRING", "normalize": ["upper"], "allowed_values": ["AZUL", "ROJO"]},
    {"name": "nombre", "type": "STRING", "max_runes": 5},
    {"name": "a", "type": "INT64", "max": 10},
    {"name": "b", "type": "INT64", "less_than": 10},
    {"name": "p", "type": "NUMERIC", "normalize": ["decimal_comma"], "greater_than": "0", "max": "100"},
    {"name": "q", "type": "NUMERIC", "less_than": "5.5"}
  ],
  "derived": [
    {"name": "a_por_b", "type": "INT64", "expr": "a * b"},
    {"name": "a_mas_b", "type": "INT64", "expr": "a + b"},
    {"name": "a_menos_b", "type": "INT64", "expr": "a - b"},
    {"name": "p_por_q", "type": "NUMERIC", "expr": "p * q"},
    {"name": "p_menos_a", "type": "NUMERIC", "expr": "p - a"},
    {"name": "a_mas_p", "type": "NUMERIC", "expr": "a + p"},
    {"name": "b_por_q", "type": "NUMERIC", "expr": "b * q"}
  ]
}`

func sinkFeed(t testing.TB) *Feed {
	t.Helper()
	reg := mustParse(t, map[string][]byte{"sink.json": []byte(kitchenSink)})
	f, _ := reg.Feed("sink")
	return f
}

func TestValidateKitchenSink(t *testing.T) {
	b := bind(t, sinkFeed(t))
	base := []string{" AB-12 ", "azul", "Ni\xf1o", "3", "-4", "2,5", "1.2"}
	vals := edited(str("ab-12"), str("AZUL"), str("Niño"), num(3), num(-4), dec(t, "2.5"),
		dec(t, "1.2"), num(-12), num(-1), num(7), dec(t, "3"), dec(t, "-0.5"), dec(t, "5.5"),
		dec(t, "-4.8"))
	runValidate(t, b, []validateCase{
		{name: "valid, transcoded", row: base, vals: vals(nil)},
		{name: "windows-1252 punctuation", row: with(base, 2, "\x93ok\x94"), vals: vals(func(v []schema.Value) { v[2] = str("“ok”") })},
		{name: "five runes, more bytes", row: with(base, 2, "\xf1\xf1\xf1\xf1\xf1"), vals: vals(func(v []schema.Value) { v[2] = str("ñññññ") })},
		{name: "optional operands give null", row: with(with(base, 3, ""), 6, ""), vals: vals(func(v []schema.Value) {
			v[3], v[6] = null, null
			for i := 7; i < 14; i++ { // every derived column reads a or q
				v[i] = null
			}
		})},
		{name: "optional set value empty", row: with(base, 1, ""), vals: vals(func(v []schema.Value) { v[1] = null })},
		{name: "product not exact at 9 decimals", row: with(with(base, 5, "0,00001"), 6, "0.00001"), want: Reject{"p_por_q:out_of_range", "p_por_q: p * q is out of range or not exact at 9 decimals"}},
		{name: "int product overflows", row: with(with(base, 3, "-9223372036854775808"), 4, "-1"), want: Reject{"a_por_b:out_of_range", "a_por_b: a * b is out of range or not exact at 9 decimals"}},
		{name: "int difference overflows", row: with(with(base, 3, "-9223372036854775808"), 4, "1"), want: Reject{"a_menos_b:out_of_range", "a_menos_b: a - b is out of range or not exact at 9 decimals"}},
		{name: "int to numeric beyond the old int64 decimals is exact", row: with(base, 3, "-10000000000"), vals: vals(func(v []schema.Value) {
			v[3], v[7], v[8], v[9] = num(-10000000000), num(40000000000), num(-10000000004), num(-9999999996)
			v[11], v[12] = dec(t, "10000000002.5"), dec(t, "-9999999997.5")
		})},

		{name: "undefined windows-1252 byte", row: with(base, 2, "a\x81"), want: Reject{"invalid_windows1252", `column 3 (nombre): byte undefined in windows-1252 "a\x81"`}},
		{name: "pattern, after lower-casing", row: with(base, 0, "\xd1B12"),
			want: Reject{"code:pattern", `code: "ñb12" does not match ^[a-z]{2}-[0-9]+$`}},
		{name: "not an allowed value", row: with(base, 1, "verde"), want: Reject{"color:not_allowed", `color: "VERDE" is not one of ["AZUL" "ROJO"]`}},
		{name: "too many runes", row: with(base, 2, "\xf1\xf1\xf1\xf1\xf1\xf1"), want: Reject{"nombre:too_long", "nombre: 6 characters, at most 5 allowed"}},
		{name: "inclusive max", row: with(base, 3, "11"), want: Reject{"a:above_max", "a: must be <= 10, got 11"}},
		{name: "exclusive max", row: with(base, 4, "10"), want: Reject{"b:above_max", "b: must be < 10, got 10"}},
		{name: "exclusive numeric min", row: with(base, 5, "0"), want: Reject{"p:below_min", "p: must be > 0, got 0"}},
		{name: "inclusive numeric max", row: with(base, 5, "100,000000001"), want: Reject{"p:above_max", "p: must be <= 100, got 100.000000001"}},
		{name: "exclusive numeric max", row: with(base, 6, "5.5"), want: Reject{"q:above_max", "q: must be < 5.5, got 5.5"}},
		{name: "decimal point where no comma is declared", row: with(base, 6, "1,2"), want: Reject{"q:invalid_numeric", `q: not a decimal number "1,2"`}},
	})
}

func TestValidateStringsDoNotAliasInput(t *testing.T) {
	b := bind(t, feed(t, "lineas_pedido"))
	row := bytesOf("PED-1", "1", "2026-03-14", "moch", "2", "89,90", "CLI-7", "es")
	out := make([]schema.Value, 9)
	if r := b.Validate(row, out); !r.OK() {
		t.Fatal(r)
	}
	for _, f := range row {
		for i := range f {
			f[i] = 'X'
		}
	}
	got := []string{out[0].Str, out[3].Str, out[6].Str, out[7].Str}
	if diff := cmp.Diff([]string{"PED-1", "MOCH", "CLI-7", "ES"}, got); diff != "" {
		t.Errorf("strings changed with the input buffers (-want +got):\n%s", diff)
	}
	// Validating the next row reuses the arena: earlier strings must stay.
	if r := b.Validate(bytesOf("PED-2", "1", "2026-03-14", "gorro", "1", "9", "", "FR"), out); !r.OK() {
		t.Fatal(r)
	}
	if got[0] != "PED-1" || got[1] != "MOCH" {
		t.Errorf("a later row changed earlier strings: %q", got)
	}
}

func TestValidateAllocations(t *testing.T) {
	tests := []struct {
		name string
		feed string
		row  []string
	}{
		{name: "order line", feed: "lineas_pedido", row: []string{"PED-1", "1", "2026-03-14", "moch-40l-az", "2", "89,90", "CLI-7", "es"}},
		{name: "order line without strings to copy but the country", feed: "lineas_pedido", row: []string{"P", "1", "2026-03-14", "S", "2", "89,90", "", "ES"}},
		{name: "review", feed: "opiniones", row: []string{"OP-1", "moch", "2026-03-02", "5", "Muy cómoda", "es"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bind(t, feed(t, tt.feed))
			row := bytesOf(tt.row...)
			out := make([]schema.Value, b.Feed().Width())
			got := testing.AllocsPerRun(1000, func() {
				if r := b.Validate(row, out); !r.OK() {
					t.Fatal(r)
				}
			})
			if got != 0 {
				t.Errorf("%.1f allocations per row, want 0", got)
			}
		})
	}
}

// Numeric products are numeric.Dec.Mul (see numeric.TestArithmeticAgainstBig).
func TestArithmetic(t *testing.T) {
	const maxInt, minInt = 1<<63 - 1, -1 << 63
	ints := []struct {
		name string
		op   byte
		a, b int64
		want int64
		ok   bool
	}{
		{name: "product", op: '*', a: 3, b: -4, want: -12, ok: true},
		{name: "product overflow", op: '*', a: 1 << 32, b: 1 << 31},
		{name: "product min by -1", op: '*', a: minInt, b: -1},
		{name: "product min by 1", op: '*', a: minInt, b: 1, want: minInt, ok: true},
		{name: "product reaching min", op: '*', a: -(1 << 31), b: 1 << 32, want: minInt, ok: true},
		{name: "product reaching -min", op: '*', a: 1 << 31, b: 1 << 32},
		{name: "sum", op: '+', a: 3, b: -4, want: -1, ok: true},
		{name: "sum overflow", op: '+', a: maxInt, b: 1},
		{name: "sum underflow", op: '+', a: minInt, b: -1},
		{name: "difference", op: '-', a: 3, b: -4, want: 7, ok: true},
		{name: "difference overflow", op: '-', a: maxInt, b: -1},
		{name: "difference underflow", op: '-', a: minInt, b: 1},
	}
	for _, tt := range ints {
		t.Run("int "+tt.name, func(t *testing.T) {
			got, ok := intOp(tt.op, tt.a, tt.b)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("%d %c %d = %d, %v; want %d, %v", tt.a, tt.op, tt.b, got, ok, tt.want, tt.ok)
			}
		})
	}
}
