package bqfake

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// The one SELECT form the fake executes, so that a value can be read back
// through the adapter exactly as BigQuery sends it (NUMERIC as a decimal
// string) without a SQL engine:
//
//	SELECT col|SUM(col)[ * n], ... FROM table
//	  WHERE col = 'text'|n [AND col IN (n, ...)] ... [ORDER BY col, ...]
//
// Either every item is a column or every item is a SUM. Anything else is
// answered as before (recorded or empty).
var (
	simpleSelect = regexp.MustCompile(`(?is)^\s*SELECT\s+(.+?)\s+FROM\s+([A-Za-z_][A-Za-z0-9_]*)\s+WHERE\s+(.+?)(?:\s+ORDER\s+BY\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*))?\s*$`)
	selectItem   = regexp.MustCompile(`(?i)^(?:([A-Za-z_][A-Za-z0-9_]*)|SUM\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)(?:\s*\*\s*([0-9]+))?)$`)
	condEq       = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:'([^'\\]*)'|(-?[0-9]+))$`)
	condIn       = regexp.MustCompile(`(?i)^([A-Za-z_][A-Za-z0-9_]*)\s+IN\s*\(\s*(-?[0-9]+(?:\s*,\s*-?[0-9]+)*)\s*\)$`)
	andSep       = regexp.MustCompile(`(?i)\s+AND\s+`)
	// numericMax is NUMERIC's largest value, 10^29 - 10^-9.
	numericMax = new(big.Rat).SetFrac(
		new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1)),
		big.NewInt(1_000_000_000))
)

type selectPlan struct {
	table string
	cols  []string // source column of each item
	sums  bool
	times []int64 // multiplier of each SUM item
	conds []func(map[string]any) bool
	order []string
}

// Executes reports whether the fake computes the answer of sql from the
// rows of one of its tables (the form above; a view is not executed);
// other SELECTs answer what Record recorded, or nothing. Tests use it to
// decide which answers to compare.
func (f *Fake) Executes(sql string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.executable(sql)
	return ok
}

// executable returns the plan of sql when the fake executes it; the caller
// holds mu.
func (f *Fake) executable(sql string) (selectPlan, bool) {
	p, ok := parseSelect(sql)
	if !ok {
		return selectPlan{}, false
	}
	_, ok = f.tables[p.table]
	return p, ok
}

func parseSelect(sql string) (selectPlan, bool) {
	m := simpleSelect.FindStringSubmatch(sql)
	if m == nil {
		return selectPlan{}, false
	}
	p := selectPlan{table: m[2]}
	for i, item := range strings.Split(m[1], ",") {
		im := selectItem.FindStringSubmatch(strings.TrimSpace(item))
		if im == nil || (i > 0 && p.sums != (im[2] != "")) {
			return selectPlan{}, false
		}
		p.sums = im[2] != ""
		if !p.sums {
			p.cols = append(p.cols, im[1])
			continue
		}
		n := int64(1)
		if im[3] != "" {
			var err error
			if n, err = strconv.ParseInt(im[3], 10, 64); err != nil {
				return selectPlan{}, false
			}
		}
		p.cols = append(p.cols, im[2])
		p.times = append(p.times, n)
	}
	for _, c := range andSep.Split(strings.TrimSpace(m[3]), -1) {
		cond, ok := parseCond(strings.TrimSpace(c))
		if !ok {
			return selectPlan{}, false
		}
		p.conds = append(p.conds, cond)
	}
	if m[4] != "" {
		for _, c := range strings.Split(m[4], ",") {
			p.order = append(p.order, strings.TrimSpace(c))
		}
	}
	return p, true
}

func parseCond(c string) (func(map[string]any) bool, bool) {
	if m := condEq.FindStringSubmatch(c); m != nil {
		col := m[1]
		if m[3] != "" {
			n, err := strconv.ParseInt(m[3], 10, 64)
			return func(r map[string]any) bool { return r[col] == n }, err == nil
		}
		s := m[2]
		return func(r map[string]any) bool { return r[col] == s }, true
	}
	if m := condIn.FindStringSubmatch(c); m != nil {
		col := m[1]
		set := map[int64]bool{}
		for _, s := range strings.Split(m[2], ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, false
			}
			set[n] = true
		}
		return func(r map[string]any) bool { n, ok := r[col].(int64); return ok && set[n] }, true
	}
	return nil, false
}

// execute computes p over the fake's rows as BigQuery would: a column
// that does not exist is an error, and so is a NUMERIC sum that leaves
// NUMERIC's range ("numeric overflow"). The caller holds mu.
func (f *Fake) execute(p selectPlan) (Result, error) {
	t, ok := f.tables[p.table]
	if !ok {
		return Result{}, fmt.Errorf("Not found: Table %s:%s.%s", f.project, f.dataset, p.table)
	}
	types := map[string]warehouse.Type{}
	for _, fl := range t.schema {
		types[fl.Name] = fl.Type
	}
	for _, c := range append(slices.Clone(p.cols), p.order...) {
		if _, ok := types[c]; !ok {
			return Result{}, fmt.Errorf("Unrecognized name: %s", c)
		}
	}
	var rows []map[string]any
	for _, r := range t.rows {
		if !slices.ContainsFunc(p.conds, func(c func(map[string]any) bool) bool { return !c(r) }) {
			rows = append(rows, r)
		}
	}
	var res Result
	for i, c := range p.cols {
		name := c
		if p.sums {
			name = "f" + strconv.Itoa(i) + "_"
		}
		res.Fields = append(res.Fields, &bq.TableFieldSchema{Name: name, Type: wireType(types[c]), Mode: "NULLABLE"})
	}
	if p.sums {
		row, err := sumRow(p, types, rows)
		if err != nil {
			return Result{}, err
		}
		res.Rows = [][]any{row}
		return res, nil
	}
	slices.SortStableFunc(rows, func(a, b map[string]any) int {
		for _, c := range p.order {
			if d := compareCells(a[c], b[c]); d != 0 {
				return d
			}
		}
		return 0
	})
	for _, r := range rows {
		var out []any
		for _, c := range p.cols {
			out = append(out, cellText(r[c]))
		}
		res.Rows = append(res.Rows, out)
	}
	return res, nil
}

func sumRow(p selectPlan, types map[string]warehouse.Type, rows []map[string]any) ([]any, error) {
	var out []any
	for i, c := range p.cols {
		if types[c] != warehouse.Numeric && types[c] != warehouse.Int64 {
			return nil, fmt.Errorf("No matching signature for aggregate function SUM for argument types: %s", types[c])
		}
		sum, seen := new(big.Rat), false
		for _, r := range rows {
			switch v := r[c].(type) {
			case int64:
				sum.Add(sum, new(big.Rat).SetInt64(v))
				seen = true
			case *big.Rat:
				sum.Add(sum, v)
				seen = true
			}
		}
		if !seen {
			out = append(out, nil) // SUM of no rows is NULL
			continue
		}
		sum.Mul(sum, new(big.Rat).SetInt64(p.times[i]))
		if types[c] == warehouse.Numeric && new(big.Rat).Abs(sum).Cmp(numericMax) > 0 {
			return nil, fmt.Errorf("numeric overflow: %s", sum.FloatString(9))
		}
		if types[c] == warehouse.Int64 && (!sum.IsInt() || !sum.Num().IsInt64()) {
			return nil, fmt.Errorf("int64 overflow: %s", sum.RatString())
		}
		out = append(out, cellText(sum))
	}
	return out, nil
}

// cellText is a stored value as BigQuery's JSON answer carries it: NUMERIC
// as its shortest decimal string ("179.8", "0"), INT64 in decimal, NULL as
// nil.
func cellText(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Rat:
		s := x.FloatString(9)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		if s == "-0" {
			s = "0"
		}
		return s
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func compareCells(a, b any) int {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return compareInt(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case *big.Rat:
		if y, ok := b.(*big.Rat); ok {
			return x.Cmp(y)
		}
	case nil:
		if b != nil {
			return -1 // NULLs first, as BigQuery's ascending order
		}
		return 0
	}
	if b == nil {
		return 1
	}
	return 0
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wireType is a column type as a query answer's schema names it.
func wireType(t warehouse.Type) string {
	if t == warehouse.Int64 {
		return "INTEGER"
	}
	return string(t)
}

// selectAnswer is a SELECT's result: a named read's, computed by its model;
// else the recorded one, else the computed one for the executed form, else
// an empty one. The caller holds mu.
func (f *Fake) selectAnswer(sql string, params []*bq.QueryParameter) (Result, error) {
	if q, ok := namedRead(sql); ok {
		return f.answerRead(q, params)
	}
	if res, ok := f.results[sql]; ok {
		return res, nil
	}
	if p, ok := f.executable(sql); ok {
		return f.execute(p)
	}
	return Result{}, nil
}
