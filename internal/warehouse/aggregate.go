package warehouse

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Dialect is the SQL engine a shared definition (aggregate, view) is
// rendered for: written once in the SQL both engines accept, so they
// cannot drift apart, a dialect changes only the spellings that differ.
type Dialect string

const (
	DuckDB   Dialect = "duckdb"
	BigQuery Dialect = "bigquery"
)

func (d Dialect) check() error {
	switch d {
	case DuckDB, BigQuery:
		return nil
	}
	return fmt.Errorf("warehouse: unknown SQL dialect %q", d)
}

// typeName spells String or Int64 in d.
func (d Dialect) typeName(t Type) string {
	if d == BigQuery {
		return string(t)
	}
	switch t {
	case String:
		return "VARCHAR"
	case Int64:
		return "BIGINT"
	}
	panic("warehouse: no " + string(d) + " name for " + string(t))
}

// Unqualified leaves table names as they are, for an engine or session
// that resolves them.
func Unqualified(table string) string { return table }

// Measure is one aggregated column: Func over Source ("" for COUNT(*)).
type Measure struct {
	Column string // column of the aggregate table
	Func   string // SUM or COUNT
	Source string // column of the source table; empty for COUNT(*)
}

// Aggregate is a table derived from Source and rebuilt one date (partition)
// at a time: the dates new rows touched are recomputed from Source and
// replace their old rows, so several files a day, reprocessing and
// corrections always give the same figures.
//
// Newest-generation rule: of a source object loaded in several generations
// (a corrected re-export, a re-upload), only the rows of its newest loaded
// generation count, so nothing counts twice. The rule holds within a
// date's partition: a correction that drops a date entirely leaves the
// older generation counting for it, and a refresh never scans across
// dates, so it costs what the dates it touches cost.
type Aggregate struct {
	Table            string   // the aggregate table, partitioned by DateColumn
	Source           string   // the table it is computed from, partitioned by DateColumn too
	DateColumn       string   // the refresh unit, present in both tables
	Keys             []string // grouping columns besides DateColumn
	Measures         []Measure
	ObjectColumn     string // lineage: the source object a row came from
	GenerationColumn string // lineage: that object's generation
}

// Aggregates returns the aggregates by table name.
func Aggregates() map[string]Aggregate {
	return map[string]Aggregate{
		VentasDiariasSKU: {
			Table:      VentasDiariasSKU,
			Source:     LineasPedido,
			DateColumn: "fecha",
			Keys:       []string{"sku"},
			Measures: []Measure{
				{Column: "unidades", Func: "SUM", Source: "cantidad"},
				{Column: "importe", Func: "SUM", Source: "importe"},
				{Column: "lineas", Func: "COUNT"},
			},
			ObjectColumn:     "source_object",
			GenerationColumn: "source_generation",
		},
	}
}

// LookupAggregate returns the aggregate that writes table name.
func LookupAggregate(name string) (Aggregate, error) {
	a, ok := Aggregates()[name]
	if !ok {
		return Aggregate{}, fmt.Errorf("warehouse: unknown aggregate %q", name)
	}
	return a, nil
}

// GroupsSQL renders, for several dates at once (as DATE literals, which
// engines prune storage by), one row per group (date and keys) of the
// newest generation of each (date, source object), every measure summed
// exactly in a type wider than its column, so no sum fails the query.
// RefreshSQL reads its answer, which DuckDB keeps in a table.
//
// The newest generation of each (date, source object) is kept by a
// semi-join against a grouped MAX, hash operations in both engines (a
// window would sort), on one text key rather than three columns because
// the BigQuery emulator runs a join as nested loops (20 s for 1,000 rows)
// but IN once. The key is unambiguous: a fixed-width date, the object, a
// generation of digits. qualify names a source table (Unqualified where the
// engine resolves names); it must not be nil.
func (a Aggregate) GroupsSQL(d Dialect, qualify func(table string) string, dates []int32) (string, error) {
	if len(dates) == 0 {
		return "", fmt.Errorf("warehouse: aggregate %s: no dates", a.Table)
	}
	p, err := a.plan(d)
	if err != nil {
		return "", err
	}
	src := qualify(a.Source)
	dc, oc, gc := a.DateColumn, a.ObjectColumn, a.GenerationColumn
	groupBy := []string{"l." + dc}
	for _, k := range a.Keys {
		groupBy = append(groupBy, "l."+k)
	}
	str := d.typeName(String)
	key := func(date, object, gen string) string {
		return "CONCAT(CAST(" + date + " AS " + str + "), '#', " + object + ", '#', CAST(" + gen + " AS " + str + "))"
	}
	list := DateList(dates)
	var b strings.Builder
	b.WriteString("SELECT " + strings.Join(p.inner, ", ") + "\n")
	b.WriteString("FROM " + src + " AS l\n")
	b.WriteString("WHERE l." + dc + " IN (" + list + ")\n")
	b.WriteString("AND " + key("l."+dc, "l."+oc, "l."+gc) + " IN (\n")
	b.WriteString("  SELECT " + key(dc, oc, "MAX("+gc+")") + "\n")
	b.WriteString("  FROM " + src + "\n")
	b.WriteString("  WHERE " + dc + " IN (" + list + ")\n")
	b.WriteString("  GROUP BY " + dc + ", " + oc + "\n")
	b.WriteString(")\n")
	b.WriteString("GROUP BY " + strings.Join(groupBy, ", "))
	return b.String(), nil
}

// DaySQL is RefreshSQL over the groups of one date, for an engine that
// keeps no table of them (BigQuery, one job per date's partition). qualify
// is GroupsSQL's.
func (a Aggregate) DaySQL(d Dialect, qualify func(table string) string, day int32) (
	rows, overflows string, err error) {
	groups, err := a.GroupsSQL(d, qualify, []int32{day})
	if err != nil {
		return "", "", err
	}
	return a.RefreshSQL(d, "(\n  "+strings.ReplaceAll(groups, "\n", "\n  ")+"\n)")
}

// DateList writes dates as DATE literals, "DATE '2026-03-14', ...".
func DateList(dates []int32) string {
	lits := make([]string, len(dates))
	for i, d := range dates {
		lits[i] = "DATE '" + FormatDate(d) + "'"
	}
	return strings.Join(lits, ", ")
}

// RefreshSQL renders, from groups (GroupsSQL's answer: a table, or a
// parenthesized query), the aggregate's rows: the groups whose sums fit
// their columns, narrowed to them, in the table's column order; and the
// overflows, the groups rows leaves out, as text: the date, the keys, then
// per SUM measure the exact sum when it is out of range, else NULL
// (ParseOverflow reads them).
func (a Aggregate) RefreshSQL(d Dialect, groups string) (rows, overflows string, err error) {
	p, err := a.plan(d)
	if err != nil {
		return "", "", err
	}
	target, _ := Lookup(a.Table) // plan checked it
	cols := make([]string, 0, len(target.Schema))
	for _, f := range target.Schema {
		e, ok := p.outer[f.Name]
		if !ok {
			return "", "", fmt.Errorf("warehouse: aggregate %s: no expression for column %s",
				a.Table, f.Name)
		}
		delete(p.outer, f.Name)
		cols = append(cols, e+" AS "+f.Name)
	}
	if len(p.outer) > 0 {
		return "", "", fmt.Errorf("warehouse: aggregate %s: %d expressions match no column", a.Table, len(p.outer))
	}
	from := "\nFROM " + groups + " AS g"
	rows = "SELECT " + strings.Join(cols, ", ") + from
	if len(p.fits) > 0 {
		rows += "\nWHERE " + strings.Join(p.fits, " AND ")
	}
	report := []string{"CAST(g." + a.DateColumn + " AS " + d.typeName(String) + ") AS " + a.DateColumn}
	for _, k := range a.Keys {
		report = append(report, "CAST(g."+k+" AS "+d.typeName(String)+") AS "+k)
	}
	where := "FALSE"
	if len(p.fits) > 0 {
		where = "NOT (" + strings.Join(p.fits, " AND ") + ")"
	}
	overflows = "SELECT " + strings.Join(append(report, p.report...), ", ") + from + "\nWHERE " + where
	return rows, overflows, nil
}

// plan is an aggregate's two levels in a dialect: the grouping level's
// items (inner) and, over its columns (g.<name>), each column's value
// (outer), the conditions that the sums fit (fits) and their report.
type plan struct {
	inner        []string
	outer        map[string]string
	fits, report []string
}

func (a Aggregate) plan(d Dialect) (plan, error) {
	if err := d.check(); err != nil {
		return plan{}, err
	}
	if _, err := Lookup(a.Table); err != nil {
		return plan{}, err
	}
	source, err := Lookup(a.Source)
	if err != nil {
		return plan{}, err
	}
	for _, c := range append([]string{a.DateColumn, a.ObjectColumn, a.GenerationColumn}, a.Keys...) {
		if source.Column(c) < 0 {
			return plan{}, fmt.Errorf("warehouse: aggregate %s: source %s has no column %s", a.Table, a.Source, c)
		}
	}
	p := plan{
		inner: []string{"l." + a.DateColumn + " AS " + a.DateColumn},
		outer: map[string]string{a.DateColumn: "g." + a.DateColumn},
	}
	for _, k := range a.Keys {
		p.inner = append(p.inner, "l."+k+" AS "+k)
		p.outer[k] = "g." + k
	}
	for _, m := range a.Measures {
		f, err := a.measure(d, source, m)
		if err != nil {
			return plan{}, err
		}
		p.inner = append(p.inner, f.agg...)
		if f.fits == "" {
			p.outer[m.Column] = f.narrow
			continue
		}
		p.outer[m.Column] = "CASE WHEN " + f.fits + " THEN " + f.narrow + " END"
		p.fits = append(p.fits, f.fits)
		p.report = append(p.report, "CASE WHEN "+f.fits+" THEN NULL ELSE "+f.text+" END AS "+m.Column)
	}
	return p, nil
}

// sumForm is one measure at both levels: agg, the inner items; fits, the
// condition (over g.<name>) that the sum fits the column, "" for always;
// narrow, the column's value, under a CASE on fits (neither engine
// promises to filter before it projects); text, the exact sum as decimal.
type sumForm struct {
	agg                []string
	fits, narrow, text string
}

func (a Aggregate) measure(d Dialect, source Table, m Measure) (sumForm, error) {
	switch {
	case m.Func == "COUNT" && m.Source == "":
		return sumForm{agg: []string{"COUNT(*) AS " + m.Column}, narrow: "g." + m.Column}, nil
	case m.Func == "SUM":
		i := source.Column(m.Source)
		if i < 0 {
			return sumForm{}, fmt.Errorf("warehouse: aggregate %s: source %s has no column %s", a.Table, a.Source, m.Source)
		}
		switch t := source.Schema[i].Type; t {
		case Int64, Numeric:
			return d.sum("l."+m.Source, m.Column, t), nil
		}
		return sumForm{}, fmt.Errorf("warehouse: aggregate %s: cannot sum %s column %s", a.Table, source.Schema[i].Type, m.Source)
	}
	return sumForm{}, fmt.Errorf("warehouse: aggregate %s: unsupported measure %s(%s)", a.Table, m.Func, m.Source)
}

// The ranges of the summed column types, as SQL literals.
const (
	minInt64   = "-9223372036854775808"
	maxInt64   = "9223372036854775807"
	maxNumeric = "99999999999999999999999999999.999999999"
)

// sum sums src exactly into column col of type t (INT64 or NUMERIC).
//
// BigQuery sums in BIGNUMERIC (38 integral digits), which holds billions
// of values, and compares the sum with the column's bounds.
//
// DuckDB sums INT64 into HUGEINT. Its DECIMAL(38,9) SUM fails past 128
// bits and passes 38 digits unchecked, so a NUMERIC is split: a value under
// 10^9 in magnitude (every real amount) is summed as DECIMAL(18,9), as
// fast as a plain SUM; a larger one adds its integral part to a HUGEINT sum
// (TRUNC is slow, but only those rows pay it) and its fraction to the
// decimal one. The sum is then <col>_int + <col>_nano/10^9 with
// 0 <= <col>_nano < 10^9, which fits NUMERIC when -10^29 < sum < 10^29.
func (d Dialect) sum(src, col string, t Type) sumForm {
	g := "g." + col
	if d == BigQuery {
		bound := func(v string) string { return "BIGNUMERIC '" + v + "'" }
		f := sumForm{
			agg:  []string{"SUM(CAST(" + src + " AS BIGNUMERIC)) AS " + col},
			text: "CAST(" + g + " AS STRING)",
		}
		if t == Int64 {
			f.fits = g + " BETWEEN " + bound(minInt64) + " AND " + bound(maxInt64)
			f.narrow = "CAST(" + g + " AS INT64)"
		} else {
			f.fits = g + " BETWEEN " + bound("-"+maxNumeric) + " AND " + bound(maxNumeric)
			f.narrow = "CAST(" + g + " AS NUMERIC)"
		}
		return f
	}
	if t == Int64 {
		return sumForm{
			agg:    []string{"SUM(" + src + ") AS " + col},
			fits:   g + " BETWEEN " + minInt64 + " AND " + maxInt64,
			narrow: "CAST(" + g + " AS BIGINT)",
			text:   "CAST(" + g + " AS VARCHAR)",
		}
	}
	const (
		e9   = "1000000000"
		e29  = "100000000000000000000000000000"
		max  = "99999999999999999999999999999"
		nano = "CAST('0.000000001' AS DECIMAL(10,9))"
	)
	small := "TRY_CAST(" + src + " AS DECIMAL(18,9))"
	frac := "SUM(COALESCE(" + small + ", CAST(" + src + " - TRUNC(" + src + ") AS DECIMAL(18,9))))"
	whole := "SUM(CASE WHEN " + small + " IS NULL THEN CAST(TRUNC(" + src + ") AS HUGEINT) ELSE 0 END)"
	j, r := g+"_int", g+"_nano"
	return sumForm{
		agg: []string{
			whole + " + CAST(FLOOR(" + frac + ") AS HUGEINT) AS " + col + "_int",
			"CAST((" + frac + " - FLOOR(" + frac + ")) * " + e9 + " AS BIGINT) AS " + col + "_nano",
		},
		fits:   j + " BETWEEN -" + e29 + " AND " + max + " AND (" + j + " > -" + e29 + " OR " + r + " > 0)",
		narrow: "CAST(" + j + " * " + e9 + " + " + r + " AS DECIMAL(38,0)) * " + nano,
		text: "CASE WHEN " + j + " >= 0 OR " + r + " = 0" +
			" THEN CAST(" + j + " AS VARCHAR) || '.' || LPAD(CAST(" + r + " AS VARCHAR), 9, '0')" +
			" ELSE '-' || CAST(-1 - " + j + " AS VARCHAR) || '.' || LPAD(CAST(" + e9 + " - " + r + " AS VARCHAR), 9, '0') END",
	}
}

// Overflow is one sum of a refreshed group that its column cannot hold:
// the group is left out and reported, and the rest of its date refreshed.
type Overflow struct {
	Date   int32    `json:"date"`   // the group's date, days since 1970-01-01
	Keys   []string `json:"keys"`   // the group's values of Aggregate.Keys, in order
	Column string   `json:"column"` // the measure whose sum is out of range
	Sum    string   `json:"sum"`    // that sum, exact, as the shortest decimal
}

// OverflowError is RefreshDaily's report of the groups it left out (see
// Warehouse): a caller reports it rather than retries.
type OverflowError struct {
	Aggregate string
	KeyNames  []string // Aggregate.Keys, naming Overflow.Keys
	Overflows []Overflow
}

func (e *OverflowError) Error() string { return e.Summary(len(e.Overflows)) }

// Summary is Error naming at most n of the sums, for a record that must
// stay short.
func (e *OverflowError) Summary(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "aggregate %s: sums out of range (%d), their groups left out: ", e.Aggregate, len(e.Overflows))
	for i, o := range e.Overflows {
		if i == n {
			fmt.Fprintf(&b, "; and %d more", len(e.Overflows)-n)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(FormatDate(o.Date))
		for j, k := range o.Keys {
			name := "key"
			if j < len(e.KeyNames) {
				name = e.KeyNames[j]
			}
			fmt.Fprintf(&b, " %s=%q", name, k)
		}
		fmt.Fprintf(&b, " %s=%s", o.Column, o.Sum)
	}
	return b.String()
}

// ParseOverflow reads one row of RefreshSQL's overflows (nil for NULL).
func (a Aggregate) ParseOverflow(row []*string) ([]Overflow, error) {
	var sums []Measure
	for _, m := range a.Measures {
		if m.Func == "SUM" {
			sums = append(sums, m)
		}
	}
	if len(row) != 1+len(a.Keys)+len(sums) {
		return nil, fmt.Errorf("warehouse: aggregate %s: overflow row of %d cells, want %d", a.Table, len(row), 1+len(a.Keys)+len(sums))
	}
	text := func(i int) (string, error) {
		if row[i] == nil {
			return "", fmt.Errorf("warehouse: aggregate %s: overflow row: cell %d is NULL", a.Table, i)
		}
		return *row[i], nil
	}
	date, err := text(0)
	if err != nil {
		return nil, err
	}
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return nil, fmt.Errorf("warehouse: aggregate %s: overflow row: date %q: %w", a.Table, date, err)
	}
	keys := make([]string, len(a.Keys))
	for i := range keys {
		if keys[i], err = text(1 + i); err != nil {
			return nil, err
		}
	}
	var out []Overflow
	for i, m := range sums {
		cell := row[1+len(a.Keys)+i]
		if cell == nil {
			continue // this sum fits
		}
		r, ok := new(big.Rat).SetString(*cell)
		if !ok {
			return nil, fmt.Errorf("warehouse: aggregate %s: overflow row: sum of %s %q is not a number", a.Table, m.Column, *cell)
		}
		out = append(out, Overflow{Date: DateOf(t), Keys: keys, Column: m.Column, Sum: DecimalString(r)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("warehouse: aggregate %s: overflow row with no sum out of range", a.Table)
	}
	return out, nil
}

// OverflowError returns RefreshDaily's error for overflows (nil for none),
// ordered by date, keys and measure, whatever the engine's order.
func (a Aggregate) OverflowError(overflows []Overflow) error {
	if len(overflows) == 0 {
		return nil
	}
	rank := map[string]int{}
	for i, m := range a.Measures {
		rank[m.Column] = i
	}
	overflows = slices.Clone(overflows)
	slices.SortFunc(overflows, func(x, y Overflow) int {
		return cmp.Or(
			cmp.Compare(x.Date, y.Date),
			slices.Compare(x.Keys, y.Keys),
			cmp.Compare(rank[x.Column], rank[y.Column]))
	})
	return &OverflowError{Aggregate: a.Table, KeyNames: slices.Clone(a.Keys), Overflows: overflows}
}

// DecimalString writes r, a NUMERIC or BIGNUMERIC (at most 38 fractional
// digits), as the shortest exact decimal: "179.8", "-12".
func DecimalString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimSuffix(strings.TrimRight(r.FloatString(38), "0"), ".")
}
