package bqfake

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// refreshModel is the effect of a refresh job, modelled in Go because the
// fake runs no SQL: when a query job writing <aggregate>$YYYYMMDD with
// WRITE_TRUNCATE carries exactly the aggregate's shared SQL
// (warehouse.Aggregate.SelectSQL for BigQuery, tables qualified with this
// project and dataset) and a DATE parameter equal to the decorator's date,
// the partition is replaced by the rows the Aggregate's declaration
// describes (keys, SUM/COUNT measures, newest-generation rule), computed
// from the source table's rows, less the groups whose exact sums their
// columns cannot hold (NUMERIC, INT64), which the SQL leaves out. Those
// groups are what the same date's overflow report
// (warehouse.Aggregate.OverflowSQL of that one date) answers, so planning
// the refresh records that answer, as Record would: the adapter sends the
// report after the refresh, and BigQuery reads both at about the same
// moment. The SQL text itself stays unverified: a live run checks that
// BigQuery computes the same. Any other query job leaves its destination
// as it was. The caller holds mu.
//
// Not modelled: a BIGNUMERIC sum overflowing, which would need billions of
// lines in one group.
func (f *Fake) refreshModel(c *bq.JobConfigurationQuery, base, decorator string) (func(), error) {
	agg, err := warehouse.LookupAggregate(base)
	if err != nil || c.WriteDisposition != "WRITE_TRUNCATE" || decorator == "" {
		return nil, nil
	}
	qualify := func(table string) string {
		return "`" + f.project + "." + f.dataset + "." + table + "`"
	}
	sql, err := agg.SelectSQL(warehouse.BigQuery, qualify)
	if err != nil || c.Query != sql {
		return nil, nil
	}
	day := decorator[:4] + "-" + decorator[4:6] + "-" + decorator[6:]
	var param string
	for _, p := range c.QueryParameters {
		if strings.EqualFold(p.Name, warehouse.DateParam) && p.ParameterValue != nil {
			param = p.ParameterValue.Value
		}
	}
	if param != day {
		return nil, fmt.Errorf("query: the @%s parameter (%q) is not the date of the partition it writes (%s$%s)", warehouse.DateParam, param, base, decorator)
	}
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return nil, fmt.Errorf("query: partition decorator %q: %w", decorator, err)
	}
	report, err := agg.OverflowSQL(warehouse.BigQuery, qualify, []int32{warehouse.DateOf(t)})
	if err != nil {
		return nil, err
	}
	_, overflows := f.aggregateDay(agg, day)
	f.results[report] = overflows
	return func() { f.applyRefresh(agg, day) }, nil
}

// applyRefresh replaces agg's rows of day with the ones computed from its
// source; the caller holds mu.
func (f *Fake) applyRefresh(agg warehouse.Aggregate, day string) {
	dst, ok := f.tables[agg.Table]
	if !ok {
		return
	}
	rows, _ := f.aggregateDay(agg, day)
	kept := slices.DeleteFunc(dst.rows, func(r map[string]any) bool { return r[agg.DateColumn] == day })
	dst.rows = append(kept, rows...)
}

// aggregateDay computes agg's groups of day from its source's rows: the
// rows of those whose sums fit their columns, ordered by key, and the
// overflow report's answer for the others (date, keys, then per SUM
// measure the sum as text or NULL, as OverflowSQL returns them). The
// caller holds mu.
func (f *Fake) aggregateDay(agg warehouse.Aggregate, day string) ([]map[string]any, Result) {
	report := Result{Fields: []*bq.TableFieldSchema{{Name: agg.DateColumn, Type: "STRING"}}}
	for _, k := range agg.Keys {
		report.Fields = append(report.Fields, &bq.TableFieldSchema{Name: k, Type: "STRING"})
	}
	for _, m := range agg.Measures {
		if m.Func == "SUM" {
			report.Fields = append(report.Fields, &bq.TableFieldSchema{Name: m.Column, Type: "STRING"})
		}
	}
	src, ok := f.tables[agg.Source]
	dst, ok2 := f.tables[agg.Table]
	if !ok || !ok2 {
		return nil, report
	}
	types := map[string]warehouse.Type{}
	for _, c := range dst.schema {
		types[c.Name] = c.Type
	}
	newest := map[string]int64{}
	var rows []map[string]any
	for _, r := range src.rows {
		if r[agg.DateColumn] != day {
			continue
		}
		rows = append(rows, r)
		obj, _ := r[agg.ObjectColumn].(string)
		gen, _ := r[agg.GenerationColumn].(int64)
		if g, seen := newest[obj]; !seen || gen > g {
			newest[obj] = gen
		}
	}
	groups := map[string]map[string]any{}
	var order []string
	for _, r := range rows {
		obj, _ := r[agg.ObjectColumn].(string)
		if gen, _ := r[agg.GenerationColumn].(int64); gen != newest[obj] {
			continue
		}
		var key strings.Builder
		for _, k := range agg.Keys {
			fmt.Fprintf(&key, "%v\x00", r[k])
		}
		g, ok := groups[key.String()]
		if !ok {
			g = map[string]any{agg.DateColumn: day}
			for _, k := range agg.Keys {
				g[k] = r[k]
			}
			groups[key.String()] = g
			order = append(order, key.String())
		}
		for _, m := range agg.Measures {
			g[m.Column] = addMeasure(g[m.Column], m, r)
		}
	}
	slices.Sort(order)
	var kept []map[string]any
	for _, k := range order {
		g := groups[k]
		fits := true
		cells := []any{day}
		for _, name := range agg.Keys {
			cells = append(cells, fmt.Sprint(g[name]))
		}
		for _, m := range agg.Measures {
			if m.Func != "SUM" {
				continue
			}
			sum, ok := g[m.Column].(*big.Rat)
			if !ok {
				cells = append(cells, nil) // NULL: no value to sum
				continue
			}
			if v, ok := narrow(sum, types[m.Column]); ok {
				g[m.Column] = v
				cells = append(cells, nil)
				continue
			}
			fits = false
			cells = append(cells, ratText(sum))
		}
		if fits {
			kept = append(kept, g)
		} else {
			report.Rows = append(report.Rows, cells)
		}
	}
	return kept, report
}

// addMeasure folds one source row into a measure's running value: int64
// for COUNT, an exact *big.Rat for sums (BigQuery sums in BIGNUMERIC, see
// warehouse.Dialect), narrowed once the group is complete.
func addMeasure(acc any, m warehouse.Measure, r map[string]any) any {
	if m.Func == "COUNT" {
		n, _ := acc.(int64)
		return n + 1
	}
	var add *big.Rat
	switch v := r[m.Source].(type) {
	case int64:
		add = new(big.Rat).SetInt64(v)
	case *big.Rat:
		add = v
	default:
		return acc // NULL adds nothing, as SUM ignores NULL
	}
	if sum, ok := acc.(*big.Rat); ok {
		return new(big.Rat).Add(sum, add)
	}
	return new(big.Rat).Set(add)
}

// narrow converts an exact sum to its column's type, reporting whether it
// fits: INT64 as int64, NUMERIC as the *big.Rat it is.
func narrow(sum *big.Rat, t warehouse.Type) (any, bool) {
	if t == warehouse.Int64 {
		if sum.IsInt() && sum.Num().IsInt64() {
			return sum.Num().Int64(), true
		}
		return nil, false
	}
	return sum, sum.Cmp(numericMax) <= 0 && new(big.Rat).Neg(sum).Cmp(numericMax) <= 0
}

// ratText writes a sum as BigQuery's CAST(... AS STRING) does: the
// shortest exact decimal.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimSuffix(strings.TrimRight(r.FloatString(9), "0"), ".")
}
