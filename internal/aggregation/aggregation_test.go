package aggregation

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// The shipped aggregations, field by field, are windowtest.ShippedSpecs,
// which the property tests of window and stream run (window's own tests
// cannot read the declarations: this package imports window).
func TestShippedDeclarations(t *testing.T) {
	ds, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	shipped := windowtest.ShippedSpecs()
	all := []string{"importe", "pedidos", "unidades"}
	tests := []struct {
		name     string
		want     window.Spec
		typ      string
		measures []string
	}{
		{"sesiones_cliente", shipped[0], Session, all},
		{"ventas_hora_pais", shipped[1], Fixed, all},
		{"ventas_sku_hora_movil", shipped[2], Sliding, []string{"importe", "unidades", "pedidos"}},
	}
	if len(ds) != len(tests) {
		t.Fatalf("%d declarations embedded, want %d", len(ds), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ds[i]
			if diff := cmp.Diff(tt.want, d.Spec); diff != "" {
				t.Errorf("Spec (-want +got):\n%s", diff)
			}
			if d.File != "declarations/"+tt.name+".json" || d.WindowType != tt.typ || d.PanesTable() != tt.name+"_paneles" || d.View() != tt.name || d.Description == "" {
				t.Errorf("file %s, type %s, panes %s, view %s, description %q", d.File, d.WindowType, d.PanesTable(), d.View(), d.Description)
			}
			if diff := cmp.Diff(tt.measures, d.Measures); diff != "" {
				t.Errorf("measures (-want +got):\n%s", diff)
			}
			got, err := Lookup(tt.name)
			if err != nil || got.Name != tt.name {
				t.Errorf("Lookup(%s) = %s, %v", tt.name, got.Name, err)
			}
		})
	}
	// Default hands out copies: a caller editing its measures cannot change
	// what the next caller reads.
	ds[0].Measures[0] = "x"
	if again, err := Default(); err != nil || again[0].Measures[0] == "x" {
		t.Errorf("Default shares its measures with callers (error %v)", err)
	}
}

// Every problem of every file is reported at once, naming the file and
// the field, so one edit fixes a broken declaration.
func TestParseReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name  string
		files []string // in testdata/
		want  []string // each in the error
	}{
		{name: "period must divide size", files: []string{"period_not_dividing.json"},
			want: []string{"testdata/period_not_dividing.json: window.period: 7m must divide window.size 1h"}},
		{name: "period on a fixed window", files: []string{"fixed_with_period.json"},
			want: []string{"testdata/fixed_with_period.json: window.period: \"15m\" is set on a fixed window"}},
		{name: "unknown field", files: []string{"misspelt_field.json"},
			want: []string{"testdata/misspelt_field.json: decode: json: unknown field \"acumulation\""}},
		{name: "name must be the file name", files: []string{"named_otherwise.json"},
			want: []string{`testdata/named_otherwise.json: name: "ventas_hora_pais" must equal the file name named_otherwise.json`}},
		{name: "subset of measures, period of the size", files: []string{"subset_of_measures.json"},
			want: []string{
				"testdata/subset_of_measures.json: measures: lacks pedidos, unidades",
				"testdata/subset_of_measures.json: window.period: 2h must be shorter than window.size 2h",
			}},
		{name: "every field wrong", files: []string{"everything_wrong.json"},
			want: []string{
				`everything_wrong.json: name: "Otra-Cosa" must be 1-55 characters`,
				"everything_wrong.json: description: is empty",
				"everything_wrong.json: window.size: 90s must be a positive whole number of minutes",
				`everything_wrong.json: window.type: "tumbling" must be fixed, sliding or session`,
				`everything_wrong.json: key: "producto" must be one of pais, cliente_id, sku`,
				`everything_wrong.json: measures: "margen" is not a measure`,
				`everything_wrong.json: measures: "importe" is listed twice`,
				"everything_wrong.json: measures: lacks pedidos, unidades",
				"everything_wrong.json: out_of_orderness: -1m must not be negative",
				"everything_wrong.json: idle_timeout: 0s must be positive",
				"everything_wrong.json: early_delay: 1.5s must be a whole number of seconds",
				`everything_wrong.json: allowed_lateness: "dos horas" is not a duration`,
				"everything_wrong.json: late_delay: is missing (at least 30s, the shortest tick interval)",
				`everything_wrong.json: accumulation: "SUMMING" must be ACCUMULATING or DISCARDING`,
			}},
		{name: "session with a size instead of a gap, keyed by sku", files: []string{"session_with_size.json"},
			want: []string{
				"testdata/session_with_size.json: window.gap: is missing",
				`testdata/session_with_size.json: window: a session window takes a gap, not a size ("1h") nor a period ("")`,
				`testdata/session_with_size.json: key: "sku": sessions are keyed by an order field (pais or cliente_id)`,
			}},
		{name: "late delay under a tick", files: []string{"late_delay_under_a_tick.json"},
			want: []string{"testdata/late_delay_under_a_tick.json: late_delay: 0s must be at least 30s: a tick emits the LATE pane, and the watermark ticks at most every 30 s (TICK_INTERVAL)"}},
		{name: "names are unique", files: []string{"a/twice.json", "b/twice.json"},
			want: []string{`testdata/b/twice.json: name: "twice" is already declared in testdata/a/twice.json`},
		},
		{name: "problems of several files together", files: []string{"period_not_dividing.json", "fixed_with_period.json"},
			want: []string{"period_not_dividing.json: window.period", "fixed_with_period.json: window.period"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			for _, f := range tt.files {
				b, err := os.ReadFile(filepath.Join("testdata", f))
				if err != nil {
					t.Fatal(err)
				}
				files["testdata/"+f] = b
			}
			ds, err := Parse(files)
			if err == nil {
				t.Fatalf("Parse accepted %v: %+v", tt.files, ds)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.want) {
				t.Errorf("%d problems reported, want %d:\n%v", n, len(tt.want), err)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	ds, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		want    []string
		got     []string
		wantErr string
	}{
		{name: "none selects all", got: []string{"sesiones_cliente", "ventas_hora_pais", "ventas_sku_hora_movil"}},
		{name: "one", want: []string{"ventas_sku_hora_movil"}, got: []string{"ventas_sku_hora_movil"}},
		{name: "declaration order, not the list's", want: []string{"ventas_sku_hora_movil", "ventas_hora_pais"}, got: []string{"ventas_hora_pais", "ventas_sku_hora_movil"}},
		{name: "unknown and twice, both reported", want: []string{"ventas_dia", "ventas_hora_pais", "ventas_hora_pais"},
			wantErr: `aggregation "ventas_dia" is not declared (declared: sesiones_cliente, ventas_hora_pais, ventas_sku_hora_movil)` + "\n" + `aggregation "ventas_hora_pais" is named twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select(ds, tt.want)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.got, names(sel)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Every allowed key has its column descriptions, and nothing else does:
// Terraform describes the tables' columns from the same file.
func TestKeyColumnsDescribeEveryKey(t *testing.T) {
	m, err := parsedKeyColumns()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(Keys)), slices.Sorted(maps.Keys(m))); diff != "" {
		t.Errorf("keys described (-Keys +key_columns.json):\n%s", diff)
	}
	for _, k := range Keys {
		d, err := ColumnDescriptions(k)
		if err != nil {
			t.Fatal(err)
		}
		if d[k] == "" {
			t.Errorf("key %s: its column has no description", k)
		}
		for col := range d {
			if col != k && !slices.Contains(Measures, col) {
				t.Errorf("key %s: describes %s, neither the key nor a measure", k, col)
			}
		}
	}
}
