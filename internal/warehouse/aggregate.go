package warehouse

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Dialect is the SQL engine a shared definition (aggregate, view) is rendered
// for. Each definition is written once, in the subset of SQL that both
// engines accept; a dialect only changes the spellings that differ (query
// parameters, type names, and how a sum is kept exact past its column's
// range: see Dialect.sum), so the embedded warehouse and BigQuery cannot
// drift apart.
type Dialect string

// The dialects the warehouse runs on.
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

// Param spells the named query parameter name: BigQuery's @name, DuckDB's $name.
func (d Dialect) Param(name string) string {
	if d == BigQuery {
		return "@" + name
	}
	return "$" + name
}

// int64Type names INT64 (the view casts with it).
func (d Dialect) int64Type() string {
	if d == BigQuery {
		return "INT64"
	}
	return "BIGINT"
}

// Unqualified leaves table names as they are, for an engine (DuckDB) or a
// session (a BigQuery job with a default dataset) that resolves them.
func Unqualified(table string) string { return table }

// DateParam is the name of the DATE parameter of Aggregate.SelectSQL.
const DateParam = "fecha"

// Measure is one aggregated column: Func over Source ("" for COUNT(*)).
type Measure struct {
	Column string // column of the aggregate table
	Func   string // SUM or COUNT
	Source string // column of the source table; empty for COUNT(*)
}

// Aggregate is a table derived from Source and rebuilt one date (partition)
// at a time: after rows land, the dates they touched are recomputed from
// Source and replace the old rows of those dates (in BigQuery, a
// WRITE_TRUNCATE of the partition table$YYYYMMDD), so several files a day,
// reprocessing and corrections always give the same figures.
//
// Newest-generation rule: when one source object was loaded in several
// generations (a corrected re-export overwrote it, or the same name was
// uploaded again), only the rows of the newest loaded generation of each
// source object count, so a re-upload or a correction never counts twice.
// The rule is applied within the date's partition: for a given date the
// newest generation is the newest one that holds rows of that date. A
// correction that drops a date entirely therefore leaves the older
// generation's rows counting for that date; the partition is never scanned
// across dates, which keeps a refresh proportional to the dates it touches.
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

// SelectSQL renders the query computing the aggregate's rows for the single
// date given as the DATE parameter DateParam (@fecha or $fecha), with the
// columns in the order of the aggregate table's schema: BigQuery runs it as
// a query job writing Table$YYYYMMDD with WRITE_TRUNCATE. It is RowsSQL
// over the groups of that date: a group with a sum out of its column's
// range is left out (OverflowSQL lists it).
func (a Aggregate) SelectSQL(d Dialect, qualify func(table string) string) (string, error) {
	groups, err := a.groups(d, qualify, func(col string) string {
		return col + " = " + d.Param(DateParam)
	})
	if err != nil {
		return "", err
	}
	return a.RowsSQL(d, subquery(groups))
}

// OverflowSQL renders OverflowsSQL over the groups of the given dates
// (GroupsSQL): the groups SelectSQL leaves out. The dates are DATE
// literals, so the text names them.
func (a Aggregate) OverflowSQL(d Dialect, qualify func(table string) string, dates []int32) (string, error) {
	groups, err := a.GroupsSQL(d, qualify, dates)
	if err != nil {
		return "", err
	}
	return a.OverflowsSQL(d, subquery(groups))
}

// GroupsSQL renders the query computing, for several dates at once (days
// since 1970-01-01, written as DATE literals so an engine can prune storage
// by date), one row per group (date and keys) of the newest generation of
// each (date, source object), every measure summed exactly in a type wider
// than its column, so no sum can fail the query. RowsSQL and OverflowsSQL
// read its answer: an engine that rebuilds several dates in one statement
// keeps it in a table and reads it twice (DuckDB) instead of computing it
// twice.
func (a Aggregate) GroupsSQL(d Dialect, qualify func(table string) string, dates []int32) (string, error) {
	if len(dates) == 0 {
		return "", fmt.Errorf("warehouse: aggregate %s: no dates", a.Table)
	}
	list := DateList(dates)
	return a.groups(d, qualify, func(col string) string { return col + " IN (" + list + ")" })
}

// DateList writes dates as DATE literals, "DATE '2026-03-14', ...", for an
// IN list that both engines prune storage by.
func DateList(dates []int32) string {
	lits := make([]string, len(dates))
	for i, d := range dates {
		lits[i] = "DATE '" + FormatDate(d) + "'"
	}
	return strings.Join(lits, ", ")
}

// RowsSQL renders the aggregate's rows from groups, the answer of GroupsSQL
// (a table name, or a parenthesized query): the groups whose sums fit
// their columns, narrowed to them, in the order of the table's schema.
func (a Aggregate) RowsSQL(d Dialect, groups string) (string, error) {
	p, err := a.plan(d)
	if err != nil {
		return "", err
	}
	target, _ := Lookup(a.Table) // plan checked it
	cols := make([]string, 0, len(target.Schema))
	for _, f := range target.Schema {
		e, ok := p.outer[f.Name]
		if !ok {
			return "", fmt.Errorf("warehouse: aggregate %s: no expression for column %s", a.Table, f.Name)
		}
		delete(p.outer, f.Name)
		cols = append(cols, e+" AS "+f.Name)
	}
	if len(p.outer) > 0 {
		return "", fmt.Errorf("warehouse: aggregate %s: %d expressions match no column", a.Table, len(p.outer))
	}
	sql := "SELECT " + strings.Join(cols, ", ") + "\nFROM " + groups + " AS g"
	if len(p.fits) > 0 {
		sql += "\nWHERE " + strings.Join(p.fits, " AND ")
	}
	return sql, nil
}

// OverflowsSQL renders, from groups (as in RowsSQL), the groups that
// RowsSQL leaves out because a sum does not fit its column: one row per
// group, every value as text (the date, then the keys, then one cell per
// SUM measure in declaration order: the exact sum when it is out of range,
// NULL when it fits). ParseOverflow reads its rows.
func (a Aggregate) OverflowsSQL(d Dialect, groups string) (string, error) {
	p, err := a.plan(d)
	if err != nil {
		return "", err
	}
	cols := []string{"CAST(g." + a.DateColumn + " AS " + d.stringType() + ") AS " + a.DateColumn}
	for _, k := range a.Keys {
		cols = append(cols, "CAST(g."+k+" AS "+d.stringType()+") AS "+k)
	}
	cols = append(cols, p.report...)
	where := "FALSE"
	if len(p.fits) > 0 {
		where = "NOT (" + strings.Join(p.fits, " AND ") + ")"
	}
	return "SELECT " + strings.Join(cols, ", ") + "\nFROM " + groups + " AS g\nWHERE " + where, nil
}

// subquery parenthesizes sql, indented, for a FROM clause.
func subquery(sql string) string {
	return "(\n  " + strings.ReplaceAll(sql, "\n", "\n  ") + "\n)"
}

// plan is an aggregate's two levels, per dialect: the items of the grouping
// level (inner), and over its columns (g.<name>) each column's value
// (outer), the conditions that its sums fit their columns (fits) and the
// report of those that do not (report).
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

// groups renders GroupsSQL with the dates chosen by onDates: the rows of the
// newest generation of each (date, source object), kept by a semi-join on
// one text key of (date, object, generation) against a grouped MAX. A
// semi-join and a grouped MAX run as hash operations in BigQuery and DuckDB
// (a window function would sort); the text key, rather than a join on three
// columns, is for the BigQuery emulator, which runs a join as nested loops
// re-evaluating the grouped side per row (20 s for 1,000 rows) while it runs
// IN (subquery) once. The key cannot be ambiguous: the date has a fixed
// width and the generation is digits, so the object lies between them.
func (a Aggregate) groups(d Dialect, qualify func(string) string, onDates func(col string) string) (string, error) {
	p, err := a.plan(d)
	if err != nil {
		return "", err
	}
	if qualify == nil {
		qualify = Unqualified
	}
	src := qualify(a.Source)
	dc, oc, gc := a.DateColumn, a.ObjectColumn, a.GenerationColumn
	groupBy := []string{"l." + dc}
	for _, k := range a.Keys {
		groupBy = append(groupBy, "l."+k)
	}
	str := d.stringType()
	key := func(date, object, gen string) string {
		return "CONCAT(CAST(" + date + " AS " + str + "), '#', " + object + ", '#', CAST(" + gen + " AS " + str + "))"
	}
	var b strings.Builder
	b.WriteString("SELECT " + strings.Join(p.inner, ", ") + "\n")
	b.WriteString("FROM " + src + " AS l\n")
	b.WriteString("WHERE " + onDates("l."+dc) + "\n")
	b.WriteString("AND " + key("l."+dc, "l."+oc, "l."+gc) + " IN (\n")
	b.WriteString("  SELECT " + key(dc, oc, "MAX("+gc+")") + "\n")
	b.WriteString("  FROM " + src + "\n")
	b.WriteString("  WHERE " + onDates(dc) + "\n")
	b.WriteString("  GROUP BY " + dc + ", " + oc + "\n")
	b.WriteString(")\n")
	b.WriteString("GROUP BY " + strings.Join(groupBy, ", "))
	return b.String(), nil
}

// sumForm is one measure as the two levels of an aggregate spell it: agg, the
// inner level's items ("<expr> AS <name>"); fits, a condition over them
// (g.<name>) that holds when the sum fits the column, "" when it always
// does; narrow, the column's value, evaluated only where fits holds (a
// CASE: neither engine promises to filter before it projects); text, the
// exact sum as a decimal string.
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
// BigQuery sums in BIGNUMERIC (76 digits, 38 of them integral), which holds
// the sum of billions of NUMERIC or INT64 values, and compares it with the
// column's bounds.
//
// DuckDB sums INT64 into HUGEINT already. Its widest decimal is
// DECIMAL(38,9), whose SUM fails once a running total passes 128 bits and
// returns totals past 38 digits unchecked below that, so a NUMERIC is
// split: a value under 10^9 in magnitude (every real amount) is summed as
// DECIMAL(18,9), whose 64-bit values DuckDB adds into 128 bits as fast as
// the plain SUM; a larger one adds its integral part to a HUGEINT sum
// (TRUNC is slow, but only those rows pay it) and its fraction to the
// DECIMAL(18,9) sum. The group's sum is then <col>_int + <col>_nano/10^9
// with 0 <= <col>_nano < 10^9 (the decimal sum is small: its floor moves to
// the integral part), which fits NUMERIC when -10^29 < sum < 10^29.
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

// stringType names STRING.
func (d Dialect) stringType() string {
	if d == BigQuery {
		return "STRING"
	}
	return "VARCHAR"
}

// Overflow is one sum of a refreshed group that its column cannot hold
// (NUMERIC's ±99999999999999999999999999999.999999999, INT64's range):
// the group is left out of the aggregate and reported, and every other
// group of the date is refreshed, so one group never stops a date.
type Overflow struct {
	Date   int32    `json:"date"`   // the group's date, days since 1970-01-01
	Keys   []string `json:"keys"`   // the group's values of Aggregate.Keys, in order
	Column string   `json:"column"` // the measure whose sum is out of range
	Sum    string   `json:"sum"`    // that sum, exact, as the shortest decimal
}

// OverflowError is what RefreshDaily returns when it refreshed every group
// of the given dates but those whose sums are out of range: the refresh
// succeeded otherwise, and retrying it gives the same answer until the
// source rows change, so a caller reports it rather than retries.
type OverflowError struct {
	Aggregate string
	KeyNames  []string // Aggregate.Keys, naming Overflow.Keys
	Overflows []Overflow
}

func (e *OverflowError) Error() string { return e.Summary(len(e.Overflows)) }

// Summary is Error naming at most n of the sums, for a record or a page
// that must stay short (the log has them all).
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

// ParseOverflow reads one row of OverflowSQL's answer (nil for NULL) into
// the sums it reports out of range.
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

// OverflowError returns the error RefreshDaily reports for overflows (nil
// for none), in the order of date, keys and measure, whatever order the
// engine answered in.
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
// digits, so FloatString(38) loses nothing), as the shortest exact
// decimal, as Query renders NUMERIC: "179.8", "-12".
func DecimalString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimSuffix(strings.TrimRight(r.FloatString(38), "0"), ".")
}
