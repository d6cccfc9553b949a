package bqfake

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

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
// from the source table's rows. The SQL text itself stays unverified: a
// live run checks that BigQuery computes the same. Any other query job
// leaves its destination as it was. The caller holds mu.
func (f *Fake) refreshModel(c *bq.JobConfigurationQuery, base, decorator string) (func(), error) {
	agg, err := warehouse.LookupAggregate(base)
	if err != nil || c.WriteDisposition != "WRITE_TRUNCATE" || decorator == "" {
		return nil, nil
	}
	sql, err := agg.SelectSQL(warehouse.BigQuery, func(table string) string {
		return "`" + f.project + "." + f.dataset + "." + table + "`"
	})
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
	return func() { f.applyRefresh(agg, day) }, nil
}

// applyRefresh replaces agg's rows of day with the ones computed from its
// source; the caller holds mu.
func (f *Fake) applyRefresh(agg warehouse.Aggregate, day string) {
	src, ok := f.tables[agg.Source]
	dst, ok2 := f.tables[agg.Table]
	if !ok || !ok2 {
		return
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
	kept := slices.DeleteFunc(dst.rows, func(r map[string]any) bool { return r[agg.DateColumn] == day })
	slices.Sort(order)
	for _, k := range order {
		kept = append(kept, groups[k])
	}
	dst.rows = kept
}

// addMeasure folds one source row into a measure's running value: int64
// for COUNT and INT64 sums, *big.Rat for NUMERIC sums (exact, as BigQuery).
func addMeasure(acc any, m warehouse.Measure, r map[string]any) any {
	if m.Func == "COUNT" {
		n, _ := acc.(int64)
		return n + 1
	}
	switch v := r[m.Source].(type) {
	case int64:
		n, _ := acc.(int64)
		return n + v
	case *big.Rat:
		sum, ok := acc.(*big.Rat)
		if !ok {
			sum = new(big.Rat)
		}
		return new(big.Rat).Add(sum, v)
	}
	return acc // NULL adds nothing, as SUM ignores NULL
}
