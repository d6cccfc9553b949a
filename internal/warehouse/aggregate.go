package warehouse

import (
	"fmt"
	"strings"
)

// Dialect is the SQL engine a shared definition (aggregate, view) is rendered
// for. Each definition is written once, in the subset of SQL that both
// engines accept; a dialect only changes the spellings that differ (query
// parameters and the name of the 64-bit integer type), so the embedded
// warehouse and BigQuery cannot drift apart.
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

// int64Type names INT64. DuckDB sums BIGINT into HUGEINT, so integer sums are
// cast back to the column type and the SELECT can be inserted as it is.
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
// a query job writing Table$YYYYMMDD with WRITE_TRUNCATE.
func (a Aggregate) SelectSQL(d Dialect, qualify func(table string) string) (string, error) {
	return a.render(d, qualify, func(col string) string {
		return col + " = " + d.Param(DateParam)
	})
}

// SelectDatesSQL is SelectSQL for several dates at once (days since
// 1970-01-01), written as DATE literals so an engine can prune storage by
// date; an engine that rebuilds several dates in one statement (DuckDB) uses
// it. Each date's rows are computed exactly as SelectSQL computes them.
func (a Aggregate) SelectDatesSQL(d Dialect, qualify func(table string) string, dates []int32) (string, error) {
	if len(dates) == 0 {
		return "", fmt.Errorf("warehouse: aggregate %s: no dates", a.Table)
	}
	var b strings.Builder
	for i, day := range dates {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("DATE '" + FormatDate(day) + "'")
	}
	list := b.String()
	return a.render(d, qualify, func(col string) string {
		return col + " IN (" + list + ")"
	})
}

// render writes the aggregate as a join with the newest generation of each
// (date, source object): a grouped MAX and an equi-join run as hash
// operations in both engines, where a window function would sort.
func (a Aggregate) render(d Dialect, qualify func(string) string, onDates func(col string) string) (string, error) {
	if err := d.check(); err != nil {
		return "", err
	}
	target, err := Lookup(a.Table)
	if err != nil {
		return "", err
	}
	source, err := Lookup(a.Source)
	if err != nil {
		return "", err
	}
	exprs := make(map[string]string, len(target.Schema))
	exprs[a.DateColumn] = "l." + a.DateColumn
	for _, k := range a.Keys {
		exprs[k] = "l." + k
	}
	for _, m := range a.Measures {
		e, err := a.measureExpr(d, source, m)
		if err != nil {
			return "", err
		}
		exprs[m.Column] = e
	}
	cols := make([]string, 0, len(target.Schema))
	for _, f := range target.Schema {
		e, ok := exprs[f.Name]
		if !ok {
			return "", fmt.Errorf("warehouse: aggregate %s: no expression for column %s", a.Table, f.Name)
		}
		delete(exprs, f.Name)
		cols = append(cols, e+" AS "+f.Name)
	}
	if len(exprs) > 0 {
		return "", fmt.Errorf("warehouse: aggregate %s: %d expressions match no column", a.Table, len(exprs))
	}
	for _, c := range append([]string{a.DateColumn, a.ObjectColumn, a.GenerationColumn}, a.Keys...) {
		if source.Column(c) < 0 {
			return "", fmt.Errorf("warehouse: aggregate %s: source %s has no column %s", a.Table, a.Source, c)
		}
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
	var b strings.Builder
	b.WriteString("SELECT " + strings.Join(cols, ", ") + "\n")
	b.WriteString("FROM " + src + " AS l\n")
	b.WriteString("JOIN (\n")
	b.WriteString("  SELECT " + dc + ", " + oc + ", MAX(" + gc + ") AS " + gc + "\n")
	b.WriteString("  FROM " + src + "\n")
	b.WriteString("  WHERE " + onDates(dc) + "\n")
	b.WriteString("  GROUP BY " + dc + ", " + oc + "\n")
	b.WriteString(") AS newest\n")
	b.WriteString("ON l." + dc + " = newest." + dc + " AND l." + oc + " = newest." + oc + " AND l." + gc + " = newest." + gc + "\n")
	b.WriteString("WHERE " + onDates("l."+dc) + "\n")
	b.WriteString("GROUP BY " + strings.Join(groupBy, ", "))
	return b.String(), nil
}

func (a Aggregate) measureExpr(d Dialect, source Table, m Measure) (string, error) {
	switch {
	case m.Func == "COUNT" && m.Source == "":
		return "COUNT(*)", nil
	case m.Func == "SUM":
		i := source.Column(m.Source)
		if i < 0 {
			return "", fmt.Errorf("warehouse: aggregate %s: source %s has no column %s", a.Table, a.Source, m.Source)
		}
		switch source.Schema[i].Type {
		case Int64:
			return "CAST(SUM(l." + m.Source + ") AS " + d.int64Type() + ")", nil
		case Numeric:
			return "SUM(l." + m.Source + ")", nil
		}
		return "", fmt.Errorf("warehouse: aggregate %s: cannot sum %s column %s", a.Table, source.Schema[i].Type, m.Source)
	}
	return "", fmt.Errorf("warehouse: aggregate %s: unsupported measure %s(%s)", a.Table, m.Func, m.Source)
}
