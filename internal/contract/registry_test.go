package contract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

func mustParse(t testing.TB, files map[string][]byte) *Registry {
	t.Helper()
	reg, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func mustDefault(t testing.TB) *Registry {
	t.Helper()
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestCheckTableReportsDrift(t *testing.T) {
	f := feed(t, "opiniones")
	good, err := schema.Lookup("opiniones")
	if err != nil {
		t.Fatal(err)
	}
	clone := func(edit func(s []schema.Field) []schema.Field) schema.Table {
		t := good
		t.Schema = edit(append([]schema.Field(nil), good.Schema...))
		return t
	}
	tests := []struct {
		name  string
		table schema.Table
		want  string
	}{
		{name: "type", table: clone(func(s []schema.Field) []schema.Field { s[3].Type = schema.Numeric; return s }), want: "column 4 is puntuacion INT64 REQUIRED, table opiniones has puntuacion NUMERIC REQUIRED"},
		{name: "mode", table: clone(func(s []schema.Field) []schema.Field { s[4].Mode = "REQUIRED"; return s }), want: "texto STRING NULLABLE"},
		{name: "order", table: clone(func(s []schema.Field) []schema.Field { s[0], s[1] = s[1], s[0]; return s }), want: "column 1 is opinion_id"},
		{name: "missing", table: clone(func(s []schema.Field) []schema.Field { return s[:5] }), want: "table opiniones has only 5 columns"},
		{name: "extra", table: clone(func(s []schema.Field) []schema.Field { return append(s, schema.Field{Name: "x"}) }), want: "extra column x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.CheckTable(tt.table)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckTable = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	reg := mustDefault(t)
	tests := []struct {
		name   string
		object string
		want   string // "" for no feed
	}{
		{name: "daily order export", object: "exportaciones/2026/03/14/pedidos-erp.csv", want: "lineas_pedido"},
		{name: "any csv name in a day", object: "exportaciones/2026/03/14/opiniones-x.csv", want: "lineas_pedido"},
		{name: "monthly reviews", object: "exportaciones/2026/03/opiniones-marzo.csv", want: "opiniones"},
		{name: "reviews with empty suffix", object: "exportaciones/2026/03/opiniones-.csv", want: "opiniones"},
		{name: "orders outside a day folder", object: "exportaciones/2026/03/pedidos.csv"},
		{name: "nested deeper", object: "exportaciones/2026/03/14/x/pedidos.csv"},
		{name: "gzip-compressed export", object: "exportaciones/2026/03/14/pedidos.csv.gz", want: "lineas_pedido"},
		{name: "not csv", object: "exportaciones/2026/03/14/pedidos.xlsx"},
		{name: "gzip of something else", object: "exportaciones/2026/03/14/pedidos.tar.gz"},
		{name: "upper-case extension", object: "exportaciones/2026/03/14/pedidos.CSV"},
		{name: "other prefix", object: "cuarentena/lineas_pedido/exportaciones/2026/03/14/p.csv"},
		{name: "short year", object: "exportaciones/26/03/14/p.csv"},
		{name: "reviews in a day folder with a slash in the name", object: "exportaciones/2026/03/opiniones-a/b.csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := reg.Match(tt.object)
			got := ""
			if ok {
				got = f.Name()
			}
			if got != tt.want {
				t.Errorf("Match(%q) = %q, want %q", tt.object, got, tt.want)
			}
		})
	}
}

func TestFeedAccessors(t *testing.T) {
	reg := mustDefault(t)
	type info struct {
		Table, Encoding  string
		Header           []string
		Width, DateIndex int
		Aggregates       []string
		HasDescription   bool
	}
	tests := []struct {
		name string
		want info
	}{
		{"lineas_pedido", info{"lineas_pedido", "utf-8", []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "cliente_id", "pais"},
			9, 2, []string{"ventas_diarias_sku"}, true}},
		{"opiniones", info{"opiniones", "utf-8", []string{"opinion_id", "sku", "fecha", "puntuacion", "texto", "pais"}, 6, 2, []string{}, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := reg.Feed(tt.name)
			if !ok {
				t.Fatalf("no feed %s", tt.name)
			}
			got := info{f.Table(), f.Encoding(), f.Header(), f.Width(), f.DateIndex(), f.Aggregates(), f.Description() != ""}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			f.Header()[0] = "mutated"
			if f.Header()[0] == "mutated" {
				t.Error("Header exposes the feed's own slice")
			}
		})
	}
	if _, ok := reg.Feed("nope"); ok {
		t.Error("Feed(nope) found a feed")
	}
}

func TestRules(t *testing.T) {
	f := feed(t, "lineas_pedido")
	tests := []struct {
		name, column, want string
	}{
		{name: "bounds and normalisation", column: "cantidad", want: "required; trim; > 0"},
		{name: "allowed set", column: "pais", want: "required; trim; upper; in iso3166-1-alpha2"},
		{name: "derived", column: "importe", want: "derived: cantidad * precio_unitario"},
		{name: "unknown column", column: "canal", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, f.Rules(tt.column)); diff != "" {
				t.Errorf("Rules(%s) (-want +got):\n%s", tt.column, diff)
			}
		})
	}
	if !f.objects.MatchString("exportaciones/2026/03/14/x.csv") || f.ObjectPattern() == "" {
		t.Errorf("ObjectPattern() = %q", f.ObjectPattern())
	}
}

const goodDecl = `{
  "feed": "f", "objects": "^x/.*\\.csv$", "table": "t", "encoding": "utf-8",
  "columns": [
    {"name": "id", "type": "STRING", "required": true},
    {"name": "n", "type": "INT64", "required": true, "min": 1},
    {"name": "p", "type": "NUMERIC", "required": true, "normalize": ["decimal_comma"]},
    {"name": "d", "type": "DATE", "required": true}
  ],
  "derived": [{"name": "total", "type": "NUMERIC", "required": true, "expr": "n * p"}],
  "date_column": "d", "aggregates": ["agg"]
}`

// decl edits goodDecl by replacing old with new, which must occur.
func decl(t *testing.T, old, new string) []byte {
	t.Helper()
	if !strings.Contains(goodDecl, old) {
		t.Fatalf("goodDecl has no %q", old)
	}
	return []byte(strings.Replace(goodDecl, old, new, 1))
}

// TestParseRejectsBadDeclarations: the declaration, its columns, derived
// columns and dialect.
func TestParseRejectsBadDeclarations(t *testing.T) {
	if _, err := Parse(map[string][]byte{"f.json": []byte(goodDecl)}); err != nil {
		t.Fatalf("the base declaration must be valid: %v", err)
	}
	tests := []struct {
		name string
		file []byte
		want string // substring of the error
	}{
		{name: "not json", file: []byte("{"), want: "f.json: decode"},
		{name: "unknown key", file: decl(t, `"required": true, "min": 1`, `"required": true, "minimum": 1`), want: `unknown field "minimum"`},
		{name: "bad feed name", file: decl(t, `"feed": "f"`, `"feed": "Pedidos ERP"`), want: "feed name"},
		{name: "no table", file: decl(t, `"table": "t"`, `"table": ""`), want: "feed f: no table"},
		{name: "bad pattern", file: decl(t, `"^x/.*\\.csv$"`, `"^x/(.csv$"`), want: "feed f: objects pattern"},
		{name: "bad encoding", file: decl(t, `"utf-8"`, `"latin1"`), want: `feed f: encoding "latin1"`},
		{name: "bad type", file: decl(t, `"type": "DATE"`, `"type": "DATETIME"`), want: `feed f: column d: type "DATETIME"`},
		{name: "bad column name", file: decl(t, `"name": "id"`, `"name": "Id Pedido"`), want: "feed f: column Id Pedido: name"},
		{name: "duplicate column", file: decl(t, `"name": "p"`, `"name": "n"`), want: "feed f: column n: declared twice"},
		{name: "upper on a number", file: decl(t, `["decimal_comma"]`, `["upper"]`), want: `feed f: column p: normalisation "upper" does not apply to NUMERIC`},
		{name: "unknown normalisation", file: decl(t, `["decimal_comma"]`, `["squash"]`), want: `column p: normalisation "squash"`},
		{name: "bound on a string", file: decl(t, `"type": "STRING", "required": true}`, `"type": "STRING", "required": true, "max": 3}`), want: "feed f: column id: bounds apply to INT64 and NUMERIC"},
		{name: "bad bound", file: decl(t, `"min": 1`, `"min": 1.5`), want: "feed f: column n: bound >= 1.5: not an INT64"},
		{name: "two lower bounds", file: decl(t, `"min": 1`, `"min": 1, "greater_than": 0`), want: "column n: both >= and > bounds"},
		{name: "pattern on a number", file: decl(t, `"min": 1`, `"pattern": "^1$"`), want: "column n: pattern, allowed_set"},
		{name: "bad regexp", file: decl(t, `"type": "STRING", "required": true}`, `"type": "STRING", "required": true, "pattern": "("}`), want: "column id: pattern"},
		{name: "unknown set", file: decl(t, `"type": "STRING", "required": true}`, `"type": "STRING", "required": true, "allowed_set": "iso4217"}`), want: `column id: allowed_set "iso4217"`},
		{name: "empty allowed values", file: decl(t, `"type": "STRING", "required": true}`, `"type": "STRING", "required": true, "allowed_values": []}`), want: "column id: allowed_values is empty"},
		{name: "upper and lower", file: decl(t, `"type": "STRING", "required": true}`, `"type": "STRING", "required": true, "normalize": ["upper", "lower"]}`), want: "column id: upper and lower"},
		{name: "derived operand unknown", file: decl(t, `"n * p"`, `"n * q"`), want: `feed f: derived column total: expr "n * q": q is not a declared column`},
		{name: "derived operand not numeric", file: decl(t, `"n * p"`, `"n * d"`), want: "d is DATE"},
		{name: "derived syntax", file: decl(t, `"n * p"`, `"n*p"`), want: `derived column total: expr "n*p"`},
		{name: "derived division", file: decl(t, `"n * p"`, `"n / p"`), want: "op one of"},
		{name: "derived wrong type", file: decl(t, `"type": "NUMERIC", "required": true, "expr"`, `"type": "INT64", "required": true, "expr"`), want: `derived column total: type INT64: "n * p" is NUMERIC`},
		{name: "derived required from optional", file: decl(t, `"name": "n", "type": "INT64", "required": true`, `"name": "n", "type": "INT64", "required": false`), want: "required, but n is optional"},
		{name: "derived clashes with a column", file: decl(t, `"name": "total"`, `"name": "id"`), want: "derived column id: declared twice"},
		{name: "date column unknown", file: decl(t, `"date_column": "d"`, `"date_column": "fecha"`), want: "feed f: date_column fecha"},
		{name: "date column not a date", file: decl(t, `"date_column": "d"`, `"date_column": "n"`), want: "date_column n: not a declared DATE column"},
		{name: "aggregates without a date", file: decl(t, `"date_column": "d", `, ``), want: "aggregates need a date_column"},
		{name: "no columns", file: []byte(`{"feed": "f", "objects": "x", "table": "t", "encoding": "utf-8", "columns": []}`), want: "feed f: no columns"},
		{name: "delimiter of two characters", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "delimiter": ";;",`), want: `feed f: delimiter ";;"`},
		{name: "delimiter a letter", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "delimiter": "x",`), want: `feed f: delimiter "x"`},
		{name: "delimiter a quote", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "delimiter": "\"",`), want: `delimiter "\""`},
		{name: "delimiter list empty", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "delimiter": [],`), want: "delimiter: empty list"},
		{name: "delimiter listed twice", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "delimiter": [";", ";"],`), want: `delimiter ";": listed twice`},
		{name: "delimiter a number", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "delimiter": 44,`), want: "delimiter: want a string or a list"},
		{name: "quote a letter", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "quote": "q",`), want: `feed f: quote "q"`},
		{name: "thousands without a decimal comma column", file: []byte(strings.Replace(string(decl(t, `"normalize": ["decimal_comma"]`, `"normalize": ["trim"]`)), `"encoding": "utf-8",`, `"encoding": "utf-8", "thousands_separator": ".",`, 1)), want: "thousands_separator: applies to NUMERIC columns normalised with decimal_comma"},
		{name: "thousands a comma", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "thousands_separator": ",",`), want: `thousands_separator ","`},
		{name: "date formats without ISO first", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["DD/MM/YYYY", "YYYY-MM-DD"],`), want: `date_formats: must start with "YYYY-MM-DD"`},
		{name: "date formats empty", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": [],`), want: `date_formats: must start with "YYYY-MM-DD"`},
		{name: "date format ambiguous", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY"],`), want: `"DD/MM/YYYY" and "MM/DD/YYYY" are ambiguous`},
		{name: "date format twice", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["YYYY-MM-DD", "YYYY-MM-DD"],`), want: `"YYYY-MM-DD" listed twice`},
		{name: "date format with time", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["YYYY-MM-DD", "DD/MM/YYYY hh:mm"],`), want: `date_formats: "DD/MM/YYYY hh:mm": want YYYY, MM and DD`},
		{name: "date format two-digit year", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["YYYY-MM-DD", "DD/MM/YY"],`), want: `"DD/MM/YY"`},
		{name: "date format mixed separators", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["YYYY-MM-DD", "DD/MM-YYYY"],`), want: `"DD/MM-YYYY"`},
		{name: "date format one separator", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "date_formats": ["YYYY-MM-DD", "DDMM/YYYY"],`), want: `"DDMM/YYYY"`},
		{name: "unknown columns policy", file: decl(t, `"encoding": "utf-8",`, `"encoding": "utf-8", "on_unknown_columns": "ignore",`), want: `on_unknown_columns "ignore": want "load" or "reject"`},
		{name: "encoding latin1 spelt otherwise", file: decl(t, `"utf-8"`, `"latin-1"`), want: `encoding "latin-1": want "utf-8", "windows-1252" or "iso-8859-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(map[string][]byte{"f.json": tt.file})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	t.Run("same feed twice", func(t *testing.T) {
		_, err := Parse(map[string][]byte{"a.json": []byte(goodDecl), "b.json": []byte(goodDecl)})
		if err == nil || !strings.Contains(err.Error(), "b.json: feed f is already declared in a.json") {
			t.Errorf("Parse error = %v", err)
		}
	})
}
