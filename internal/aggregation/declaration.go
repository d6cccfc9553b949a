package aggregation

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// declaration is the JSON form of an aggregation:
//
//	{
//	  "name": "ventas_sku_hora_movil",       // = the file name; names the view, <name>_paneles and state documents
//	  "description": "...",
//	  "window": {"type": "sliding", "size": "1h", "period": "15m"},  // or {"type": "fixed", "size": "1h"}, or {"type": "session", "gap": "30m"}
//	  "key": "sku",                          // pais, cliente_id or sku (one cell per order line); sessions: an order field
//	  "measures": ["importe", "pedidos", "unidades"],  // all three, any order (see Measures)
//	  "out_of_orderness": "10m",             // D
//	  "idle_timeout": "5m",                  // I
//	  "early_delay": "1m",                   // E
//	  "allowed_lateness": "2h",              // L
//	  "late_delay": "1m",                    // Ld, at least the tick interval (30s; at start, the deployment's TICK_INTERVAL)
//	  "accumulation": "ACCUMULATING"         // or DISCARDING
//	}
//
// Every field is required: no default hidden in code.
type declaration struct {
	Name            string     `json:"name"`
	Description     string     `json:"description"`
	Window          windowDecl `json:"window"`
	Key             string     `json:"key"`
	Measures        []string   `json:"measures"`
	OutOfOrderness  string     `json:"out_of_orderness"`
	IdleTimeout     string     `json:"idle_timeout"`
	EarlyDelay      string     `json:"early_delay"`
	AllowedLateness string     `json:"allowed_lateness"`
	LateDelay       string     `json:"late_delay"`
	Accumulation    string     `json:"accumulation"`
}

type windowDecl struct {
	Type   string `json:"type"`
	Size   string `json:"size"`
	Period string `json:"period"`
	Gap    string `json:"gap"`
}

// Dir is the folder of the embedded declarations.
const Dir = "declarations"

//go:embed declarations/*.json
var declFS embed.FS

// name is window.Spec's rule less the room PanesSuffix takes.
var name = regexp.MustCompile(`^[a-z][a-z0-9_]{0,54}$`)

var embedded = sync.OnceValues(func() ([]Declaration, error) {
	entries, err := declFS.ReadDir(Dir)
	if err != nil {
		return nil, fmt.Errorf("aggregation: read embedded declarations: %w", err)
	}
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		p := path.Join(Dir, e.Name())
		b, err := declFS.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("aggregation: read %s: %w", p, err)
		}
		files[p] = b
	}
	return Parse(files)
})

// Default returns copies of the embedded declarations, sorted by name.
func Default() ([]Declaration, error) {
	ds, err := embedded()
	if err != nil {
		return nil, err
	}
	out := make([]Declaration, len(ds))
	for i, d := range ds {
		out[i] = d.clone()
	}
	return out, nil
}

// Lookup returns the embedded declaration of that name.
func Lookup(name string) (Declaration, error) {
	ds, err := embedded()
	if err == nil {
		ds, err = Select(ds, []string{name})
	}
	if err != nil {
		return Declaration{}, err
	}
	return ds[0].clone(), nil
}

// Select returns the declarations named, in declaration order; no names
// selects them all. Every unknown name is reported at once.
func Select(ds []Declaration, want []string) ([]Declaration, error) {
	if len(want) == 0 {
		return ds, nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, w := range want {
		switch {
		case seen[w]:
			errs = append(errs, fmt.Errorf("aggregation %q is named twice", w))
		case !slices.Contains(names(ds), w):
			errs = append(errs, fmt.Errorf("aggregation %q is not declared (declared: %s)", w, strings.Join(names(ds), ", ")))
		}
		seen[w] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return slices.DeleteFunc(slices.Clone(ds), func(d Declaration) bool { return !seen[d.Name] }), nil
}

func names(ds []Declaration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}

// Parse compiles declarations keyed by file path, sorted by name. Every
// problem of every file is reported at once, as "<file>: <field>: <problem>".
func Parse(files map[string][]byte) ([]Declaration, error) {
	var (
		out  []Declaration
		errs []error
		seen = map[string]string{}
	)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		d, probs := compile(p, files[p])
		for _, pr := range probs {
			errs = append(errs, fmt.Errorf("%s: %s", p, pr))
		}
		if len(probs) > 0 {
			continue
		}
		if prev, dup := seen[d.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: name: %q is already declared in %s", p, d.Name, prev))
			continue
		}
		seen[d.Name] = p
		out = append(out, d)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("aggregation declarations: %w", errors.Join(errs...))
	}
	slices.SortFunc(out, func(a, b Declaration) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// compile decodes and checks one file; problems name the JSON field.
func compile(file string, b []byte) (Declaration, []string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt field must not fall back to nothing
	var raw declaration
	if err := dec.Decode(&raw); err != nil {
		return Declaration{}, []string{"decode: " + err.Error()}
	}
	if dec.More() {
		return Declaration{}, []string{"decode: trailing data after the declaration"}
	}
	var probs []string
	bad := func(field, format string, args ...any) {
		probs = append(probs, field+": "+fmt.Sprintf(format, args...))
	}
	d := Declaration{File: file, Description: strings.TrimSpace(raw.Description),
		WindowType: raw.Window.Type, Measures: slices.Clone(raw.Measures),
		Spec: window.Spec{Name: raw.Name, KeyField: raw.Key, Accumulation: window.Accumulation(raw.Accumulation)}}

	base := strings.TrimSuffix(path.Base(file), ".json")
	switch {
	case !name.MatchString(raw.Name):
		bad("name", "%q must be 1-55 characters of a-z, 0-9 and _, starting with a letter (it names the view, the table %s and state documents)", raw.Name, PanesTable("<name>"))
	case strings.HasSuffix(raw.Name, PanesSuffix):
		bad("name", "%q must not end in %s: the view of one aggregation would be the panes table of another", raw.Name, PanesSuffix)
	case raw.Name != base:
		bad("name", "%q must equal the file name %s", raw.Name, base+".json")
	}
	if d.Description == "" {
		bad("description", "is empty: say what the aggregation answers (it describes the view and the table)")
	}

	// duration reads a duration field: missing ends "is missing", example
	// shows valid values, and wrong says what is wrong with a value, if any.
	duration := func(field, s, missing, example string, wrong func(time.Duration) string) time.Duration {
		v, err := time.ParseDuration(s)
		switch {
		case s == "":
			bad(field, "is missing%s", missing)
		case err != nil:
			bad(field, "%q is not a duration such as %s", s, example)
		case wrong(v) != "":
			bad(field, "%s %s", s, wrong(v))
		default:
			return v
		}
		return 0
	}
	minutes := func(field, s string) time.Duration {
		return duration(field, s, "", "1h or 15m", func(v time.Duration) string {
			if v <= 0 || v%time.Minute != 0 {
				return "must be a positive whole number of minutes " +
					"(the watermark ticks once a minute)"
			}
			return ""
		})
	}
	if raw.Window.Type != Session {
		d.WindowSize = minutes("window.size", raw.Window.Size)
		if raw.Window.Gap != "" {
			bad("window.gap", "%q is set on a %s window: a gap belongs to type %s", raw.Window.Gap, raw.Window.Type, Session)
		}
	}
	switch raw.Window.Type {
	case Fixed:
		if raw.Window.Period != "" {
			bad("window.period", "%q is set on a fixed window: a period belongs to type %s", raw.Window.Period, Sliding)
		}
	case Sliding:
		d.Period = minutes("window.period", raw.Window.Period)
		if d.WindowSize > 0 && d.Period > 0 {
			switch {
			case d.Period >= d.WindowSize:
				bad("window.period", "%s must be shorter than window.size %s (a period of the size is type %s)", raw.Window.Period, raw.Window.Size, Fixed)
			case d.WindowSize%d.Period != 0:
				bad("window.period", "%s must divide window.size %s", raw.Window.Period, raw.Window.Size)
			}
		}
	case Session:
		d.Gap = minutes("window.gap", raw.Window.Gap)
		if raw.Window.Size != "" || raw.Window.Period != "" {
			bad("window", "a %s window takes a gap, not a size (%q) nor a period (%q): a session spans its orders", Session, raw.Window.Size, raw.Window.Period)
		}
		if raw.Key == KeySKU {
			bad("key", "%q: sessions are keyed by an order field (%s or %s)", raw.Key, KeyPais, KeyClienteID)
		}
	default:
		bad("window.type", "%q must be %s, %s or %s", raw.Window.Type, Fixed, Sliding, Session)
	}

	if !slices.Contains(Keys, raw.Key) {
		bad("key", "%q must be one of %s", raw.Key, strings.Join(Keys, ", "))
	}
	measureProblems(raw.Measures, bad)

	// nonNegative reads a duration of whole seconds, not negative (positive
	// if asked).
	nonNegative := func(field, s string, positive bool) time.Duration {
		const missing = " (write 0s for none)"
		return duration(field, s, missing, "10m or 0s", func(v time.Duration) string {
			switch {
			case v%time.Second != 0:
				return "must be a whole number of seconds"
			case positive && v <= 0:
				return "must be positive"
			case v < 0:
				return "must not be negative"
			}
			return ""
		})
	}
	d.OutOfOrderness = nonNegative("out_of_orderness", raw.OutOfOrderness, false)
	d.IdleTimeout = nonNegative("idle_timeout", raw.IdleTimeout, true)
	d.EarlyDelay = nonNegative("early_delay", raw.EarlyDelay, false)
	d.AllowedLateness = nonNegative("allowed_lateness", raw.AllowedLateness, false)
	// Ld: every LATE pane comes from a tick, so a late delay under the tick
	// interval would promise corrections sooner than they come.
	atLeast := fmt.Sprintf(" (at least %s, the shortest tick interval)", window.TickInterval)
	d.LateDelay = duration("late_delay", raw.LateDelay, atLeast, "1m or 5m", func(v time.Duration) string {
		switch {
		case v%time.Second != 0:
			return "must be a whole number of seconds"
		case v < window.TickInterval:
			return fmt.Sprintf("must be at least %s: a tick emits the LATE pane, "+
				"and the watermark ticks at most every 30 s (TICK_INTERVAL)", window.TickInterval)
		}
		return ""
	})
	if d.Accumulation != window.Accumulating && d.Accumulation != window.Discarding {
		bad("accumulation", "%q must be %s or %s", raw.Accumulation, window.Accumulating, window.Discarding)
	}

	if len(probs) == 0 {
		if err := d.Spec.Validate(); err != nil {
			probs = append(probs, err.Error())
		}
	}
	return d, probs
}

func measureProblems(ms []string, bad func(field, format string, args ...any)) {
	seen := map[string]bool{}
	for _, m := range ms {
		switch {
		case !slices.Contains(Measures, m):
			bad("measures", "%q is not a measure (%s)", m, strings.Join(Measures, ", "))
		case seen[m]:
			bad("measures", "%q is listed twice", m)
		}
		seen[m] = true
	}
	missing := slices.DeleteFunc(slices.Clone(Measures), func(m string) bool { return seen[m] })
	if len(missing) > 0 {
		bad("measures", "lacks %s: every panes table carries %s and the core computes all three, so a declaration lists all three", strings.Join(missing, ", "), strings.Join(Measures, ", "))
	}
}
