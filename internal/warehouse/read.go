package warehouse

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Reader runs one of the named reads this package declares (reads_*.go).
// A Statement can only be made here, from a registered name and typed
// parameters, so no consumer writes SQL and warehousetest runs every read
// the product makes against every adapter.
type Reader interface {
	Read(ctx context.Context, s Statement) (Result, error)
}

// ParamSpec declares parameter @Name of a named read; an Array one appears
// only as "UNNEST(@Name)".
type ParamSpec struct {
	Name  string
	Type  Type
	Array bool
}

// Param is a parameter's value, or an array's elements. It is never NULL,
// so both engines type it from its declaration alone.
type Param struct {
	ParamSpec
	Values []Value
}

// NamedQuery is a registered read: its fixed SQL text and parameters.
type NamedQuery struct {
	Name    string
	SQL     string
	Params  []ParamSpec
	Reads   string   // its main table or view, for errors
	Listing *Listing // what it lists, for a listing (ReadListing)
	View    *View    // the aggregation, for a per-view read
}

// Statement is a named read with its parameters' values.
type Statement struct {
	q      *NamedQuery
	params []Param
}

// Name is the statement's registered name.
func (s Statement) Name() string { return s.q.Name }

// SQL is the statement's text, with @name parameters (GoogleSQL's form).
func (s Statement) SQL() string { return s.q.SQL }

// Params are the parameters' values, in declaration order.
func (s Statement) Params() []Param { return slices.Clone(s.params) }

// Param returns the value of the parameter name.
func (s Statement) Param(name string) (Param, bool) {
	i := slices.IndexFunc(s.params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return s.params[i], true
}

// static holds the reads register declared.
var static []*NamedQuery

// sealed is set once namedReads has been built: a read registered after
// would be missing from it.
var sealed atomic.Bool

// register declares a read fixed at compile time, from package-level
// variables and init only, so before anything reads the registry.
func register(name, reads, sql string, params ...ParamSpec) *NamedQuery {
	if sealed.Load() {
		panic("warehouse: named read " + name + " registered after the registry was built")
	}
	q := newRead(name, reads, sql, params...)
	static = append(static, q)
	return q
}

// newRead checks that sql uses exactly the parameters it declares.
func newRead(name, reads, sql string, params ...ParamSpec) *NamedQuery {
	used := map[string]bool{}
	for _, m := range paramRef.FindAllStringSubmatch(sql, -1) {
		used[m[1]] = true
	}
	for _, p := range params {
		if !used[p.Name] {
			panic("warehouse: named read " + name + " declares @" + p.Name + " and does not use it")
		}
		delete(used, p.Name)
	}
	for p := range used {
		panic("warehouse: named read " + name + " uses @" + p + " without declaring it")
	}
	return &NamedQuery{Name: name, SQL: sql, Params: params, Reads: reads}
}

// namedReads builds the registry, by name, once, then only read, so
// goroutines may make their first reads at once. It is built on first use
// because the per-view reads need Views, which panics on malformed
// declarations.
var namedReads = sync.OnceValue(func() map[string]*NamedQuery {
	sealed.Store(true)
	byName := map[string]*NamedQuery{}
	add := func(q *NamedQuery) {
		if _, dup := byName[q.Name]; dup {
			panic("warehouse: named read " + q.Name + " registered twice")
		}
		byName[q.Name] = q
	}
	for _, q := range static {
		add(q)
	}
	for _, v := range Views() {
		for _, q := range []*NamedQuery{panesRead(v), newestWindowsRead(v), listViewRead(v)} {
			q.View = &v
			add(q)
		}
	}
	return byName
})

// viewRead returns the read base of the declared view name (viewReadName).
func viewRead(base, name string) (*NamedQuery, bool) {
	q, ok := namedReads()[viewReadName(base, name)]
	return q, ok && q.View != nil
}

// NamedQueries lists every named read, by name, for warehousetest.
func NamedQueries() []NamedQuery {
	rs := namedReads()
	out := make([]NamedQuery, 0, len(rs))
	for _, q := range rs {
		out = append(out, *q)
	}
	slices.SortFunc(out, func(a, b NamedQuery) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// statement binds values in declaration order; a mismatch is a defect of
// this package, caught by its tests.
func (q *NamedQuery) statement(values ...[]Value) Statement {
	if len(values) != len(q.Params) {
		panic(fmt.Sprintf("read %s: %d parameters, want %d", q.Name, len(values), len(q.Params)))
	}
	params := make([]Param, len(q.Params))
	for i, spec := range q.Params {
		null := slices.ContainsFunc(values[i], func(v Value) bool { return v.Null })
		if null || !spec.Array && len(values[i]) != 1 {
			panic(fmt.Sprintf("read %s: parameter %s: %d values or a NULL", q.Name, spec.Name, len(values[i])))
		}
		params[i] = Param{ParamSpec: spec, Values: slices.Clone(values[i])}
	}
	return Statement{q: q, params: params}
}

func one(v Value) []Value { return []Value{v} }

var paramRef = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*)`)

// Inline returns the SQL with each parameter as a literal made from its
// typed value, for an engine without GoogleSQL's parameters (DuckDB); an
// array's UNNEST(@p) becomes "(a, b)", "(NULL)" when empty (IN matches
// nothing).
func (s Statement) Inline() string {
	sql := unnestRef.ReplaceAllStringFunc(s.q.SQL, func(ref string) string {
		p, _ := s.Param(unnestRef.FindStringSubmatch(ref)[1])
		if len(p.Values) == 0 {
			return "(NULL)"
		}
		lits := make([]string, len(p.Values))
		for i, v := range p.Values {
			lits[i] = literal(p.Type, v)
		}
		return "(" + strings.Join(lits, ", ") + ")"
	})
	return paramRef.ReplaceAllStringFunc(sql, func(ref string) string {
		p, _ := s.Param(ref[1:])
		return literal(p.Type, p.Values[0])
	})
}

var unnestRef = regexp.MustCompile(`UNNEST\(@([A-Za-z_][A-Za-z0-9_]*)\)`)

// literal writes v as a SQL literal both engines read the same way. No read
// takes a NUMERIC parameter; DuckDB would read CAST(x AS NUMERIC) as
// DECIMAL(18,3), so one that does gets its literal here first.
func literal(t Type, v Value) string {
	switch t {
	case String:
		return "'" + strings.ReplaceAll(v.Str, "'", "''") + "'"
	case Int64:
		if v.Int < 0 {
			return "(" + strconv.FormatInt(v.Int, 10) + ")"
		}
		return strconv.FormatInt(v.Int, 10)
	case Date:
		return "DATE '" + FormatDate(v.Days) + "'"
	case Timestamp:
		return "TIMESTAMP '" + v.Time.UTC().Format("2006-01-02 15:04:05.999999") + "'"
	}
	panic("warehouse: no literal for type " + string(t))
}

// FormatParam writes a parameter value as Query renders it, TIMESTAMP to
// the microsecond both engines keep.
func FormatParam(t Type, v Value) string {
	switch t {
	case String:
		return v.Str
	case Int64:
		return strconv.FormatInt(v.Int, 10)
	case Numeric:
		return v.Dec.String()
	case Date:
		return FormatDate(v.Days)
	case Timestamp:
		return v.Time.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	}
	return ""
}
