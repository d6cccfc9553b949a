package bqfake

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// The named reads (warehouse.NamedQueries) are answered from the rows the
// fake holds, by a Go model of each, because the fake runs no SQL. A
// query whose text is exactly a named read's is checked as BigQuery would
// check it once compiled: every parameter it declares is present with its
// declared type (a STRING where a TIMESTAMP is compared, say, is BigQuery's
// "No matching signature"), and each value parses as its type. The answer
// has the read's columns, typed as BigQuery types them, and is sent as
// BigQuery sends it. That the SQL computes what the model computes is
// shown by warehousetest, which runs the same reads with the same rows
// against DuckDB (the SQL) and this fake (the model), and by the live run.

// namedRead returns the named read whose SQL is sql.
func namedRead(sql string) (warehouse.NamedQuery, bool) {
	for _, q := range warehouse.NamedQueries() {
		if q.SQL == sql {
			return q, true
		}
	}
	return warehouse.NamedQuery{}, false
}

// readParams checks the parameters of a named read and returns their
// values by name (one for a scalar).
func readParams(q warehouse.NamedQuery, params []*bq.QueryParameter) (map[string][]string, error) {
	got := map[string]*bq.QueryParameter{}
	for _, p := range params {
		got[strings.ToLower(p.Name)] = p
	}
	out := map[string][]string{}
	for _, spec := range q.Params {
		p, ok := got[strings.ToLower(spec.Name)]
		if !ok {
			return nil, fmt.Errorf("Query parameter '%s' not found", spec.Name)
		}
		t := p.ParameterType
		if spec.Array {
			if t.Type != "ARRAY" || t.ArrayType == nil || t.ArrayType.Type != string(spec.Type) {
				return nil, fmt.Errorf("No matching signature: parameter @%s is %s, the query uses it as ARRAY<%s>", spec.Name, typeName(t), spec.Type)
			}
			for _, v := range p.ParameterValue.ArrayValues {
				out[spec.Name] = append(out[spec.Name], v.Value)
			}
		} else {
			if t.Type != string(spec.Type) {
				return nil, fmt.Errorf("No matching signature: parameter @%s is %s, the query uses it as %s", spec.Name, typeName(t), spec.Type)
			}
			out[spec.Name] = []string{p.ParameterValue.Value}
		}
		for _, v := range out[spec.Name] {
			if _, err := parseWire(spec.Type, v); err != nil {
				return nil, fmt.Errorf("Invalid %s parameter @%s: %v", spec.Type, spec.Name, err)
			}
		}
	}
	return out, nil
}

func typeName(t *bq.QueryParameterType) string {
	if t == nil {
		return "untyped"
	}
	if t.Type == "ARRAY" && t.ArrayType != nil {
		return "ARRAY<" + t.ArrayType.Type + ">"
	}
	return t.Type
}

// parseWire reads a parameter or stored cell of type t: INT64 as int64,
// NUMERIC as *big.Rat, TIMESTAMP as time.Time, STRING and DATE as text.
func parseWire(t warehouse.Type, s string) (any, error) {
	switch t {
	case warehouse.Int64:
		return strconv.ParseInt(s, 10, 64)
	case warehouse.Numeric:
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil, fmt.Errorf("not a NUMERIC: %q", s)
		}
		return r, nil
	case warehouse.Timestamp:
		return parseTimestamp(s)
	case warehouse.Date:
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseTimestamp reads BigQuery's TIMESTAMP text forms: a date, ' ' or
// 'T', a time with up to six fractional digits, and Z, UTC, ±hh:mm or no
// zone (UTC).
func parseTimestamp(s string) (time.Time, error) {
	s = strings.Replace(strings.TrimSuffix(strings.TrimSuffix(s, " UTC"), "UTC"), " ", "T", 1)
	for _, layout := range []string{"2006-01-02T15:04:05.999999Z07:00", "2006-01-02T15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a TIMESTAMP: %q", s)
}

// readArgs are a named read's parameter values, typed.
type readArgs map[string][]string

func (a readArgs) str(n string) string { return a[n][0] }

func (a readArgs) int(n string) int64 {
	v, _ := strconv.ParseInt(a[n][0], 10, 64)
	return v
}

func (a readArgs) time(n string) time.Time {
	t, _ := parseTimestamp(a[n][0])
	return t
}

// answerRead computes the answer of named read q; the caller holds mu.
func (f *Fake) answerRead(q warehouse.NamedQuery, params []*bq.QueryParameter) (Result, error) {
	vals, err := readParams(q, params)
	if err != nil {
		return Result{}, err
	}
	a := readArgs(vals)
	switch q.Name {
	case "windows_between":
		return f.windowsBetween(a), nil
	case "discard_summary":
		return f.discardSummary(a), nil
	case "discard_counts":
		return f.discardCounts(a), nil
	case "discard_reasons":
		return f.discardReasons(a), nil
	case "line_dates":
		return f.lineDates(a), nil
	case "day_orders":
		return f.dayOrders(a), nil
	case "country_totals":
		return f.countryTotals(a), nil
	case "day_drops":
		return f.dayDrops(a), nil
	}
	if q.View != nil && (q.Name == "newest_windows" || strings.HasPrefix(q.Name, "newest_windows:")) {
		return f.newestWindows(*q.View, a), nil
	}
	if q.View != nil && (q.Name == "panes" || strings.HasPrefix(q.Name, "panes:")) {
		return f.panes(*q.View, a), nil
	}
	if q.Listing != nil {
		return f.listing(*q.Listing)
	}
	return Result{}, violationf("named read %s has no model in bqfake: add one to reads.go", q.Name)
}

func fields(spec ...string) []*bq.TableFieldSchema {
	out := make([]*bq.TableFieldSchema, 0, len(spec)/2)
	for i := 0; i < len(spec); i += 2 {
		out = append(out, &bq.TableFieldSchema{Name: spec[i], Type: spec[i+1], Mode: "NULLABLE"})
	}
	return out
}

// cell helpers: a stored value as a typed Go value (nil for NULL).
func rowTime(r map[string]any, col string) (time.Time, bool) {
	s, ok := r[col].(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := parseTimestamp(s)
	return t, err == nil
}

func rowStr(r map[string]any, col string) (string, bool) {
	s, ok := r[col].(string)
	return s, ok
}

func rowInt(r map[string]any, col string) int64 {
	n, _ := r[col].(int64)
	return n
}

func rowRat(r map[string]any, col string) *big.Rat {
	if x, ok := r[col].(*big.Rat); ok {
		return x
	}
	return new(big.Rat)
}

func timeText(t time.Time, ok bool) any {
	if !ok {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func strCell(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

// viewRow is one row of a dashboard view; pais holds its key's value.
type viewRow struct {
	agg, pais, timing string
	start, end        time.Time
	importe           *big.Rat
	pedidos, unidades int64
	index             int64
}

// view computes the dashboard view from the panes table as the view's
// definition (warehouse.ViewSQL) for the fake's accumulation mode: the
// latest pane of each (aggregation, window, key) when ACCUMULATING; when
// DISCARDING, the sum of its panes (a pane written twice counted once, the
// newest emission) with the latest pane's timing and index.
func (f *Fake) view() []viewRow {
	return f.viewOf(warehouse.VentasHoraPaisPaneles, "pais")
}

// viewOf computes, as view does, the view over the panes table panes
// keyed by the column key.
func (f *Fake) viewOf(panes, key string) []viewRow {
	t, ok := f.tables[panes]
	if !ok {
		return nil
	}
	type cellKey struct {
		agg, pais string
		start     time.Time
	}
	type paneKey struct {
		cellKey
		index int64
	}
	newest := map[paneKey]map[string]any{}
	var order []paneKey
	for _, r := range t.rows {
		start, _ := rowTime(r, "window_start")
		agg, _ := rowStr(r, "aggregation")
		pais, _ := rowStr(r, key)
		k := paneKey{cellKey{agg, pais, start}, rowInt(r, "pane_index")}
		old, seen := newest[k]
		if !seen {
			order = append(order, k)
		}
		if e1, _ := rowTime(r, "emitted_at"); !seen || e1.After(func() time.Time { e0, _ := rowTime(old, "emitted_at"); return e0 }()) {
			newest[k] = r
		}
	}
	cells := map[cellKey]*viewRow{}
	var keys []cellKey
	for _, k := range order {
		r := newest[k]
		v, ok := cells[k.cellKey]
		if !ok {
			end, _ := rowTime(r, "window_end")
			v = &viewRow{agg: k.agg, pais: k.pais, start: k.start, end: end, importe: new(big.Rat), index: -1}
			cells[k.cellKey] = v
			keys = append(keys, k.cellKey)
		}
		latest := k.index > v.index
		if latest {
			v.index, v.timing = k.index, fmt.Sprint(r["timing"])
		}
		switch f.accumulation {
		case warehouse.Discarding:
			v.importe = new(big.Rat).Add(v.importe, rowRat(r, "importe"))
			v.pedidos += rowInt(r, "pedidos")
			v.unidades += rowInt(r, "unidades")
		default:
			if latest {
				v.importe, v.pedidos, v.unidades = rowRat(r, "importe"), rowInt(r, "pedidos"), rowInt(r, "unidades")
			}
		}
	}
	out := make([]viewRow, 0, len(keys))
	for _, k := range keys {
		out = append(out, *cells[k])
	}
	return out
}

// viewFields are a view's columns as its reads answer them, its key
// column named key.
func viewFields(key string) []*bq.TableFieldSchema {
	return fields("window_start", "TIMESTAMP", "window_end", "TIMESTAMP", key, "STRING", "importe", "NUMERIC",
		"pedidos", "INTEGER", "unidades", "INTEGER", "timing", "STRING", "pane_index", "INTEGER")
}

func viewAnswer(rows []viewRow, key string) Result {
	slices.SortFunc(rows, func(a, b viewRow) int { return cmp.Or(a.start.Compare(b.start), strings.Compare(a.pais, b.pais)) })
	res := Result{Fields: viewFields(key), Rows: [][]any{}}
	for _, v := range rows {
		res.Rows = append(res.Rows, []any{timeText(v.start, true), timeText(v.end, true), v.pais, cellText(v.importe),
			cellText(v.pedidos), cellText(v.unidades), v.timing, cellText(v.index)})
	}
	return res
}

func inRange(t, from, until time.Time) bool { return !t.Before(from) && t.Before(until) }

// newestWindows answers the newest-windows read of the view v.
func (f *Fake) newestWindows(v warehouse.View, a readArgs) Result {
	agg, from, until := a.str("aggregation"), a.time("start_time"), a.time("end_time")
	anyKey, keys := a.int("any_key") == 1, a["keys"]
	pass := func(v viewRow) bool {
		return v.agg == agg && inRange(v.start, from, until) && (anyKey || slices.Contains(keys, v.pais))
	}
	var rows []viewRow
	var starts []time.Time
	for _, v := range f.viewOf(v.Panes, v.Key) {
		if pass(v) {
			rows = append(rows, v)
			if !slices.ContainsFunc(starts, v.start.Equal) {
				starts = append(starts, v.start)
			}
		}
	}
	slices.SortFunc(starts, func(x, y time.Time) int { return y.Compare(x) })
	starts = starts[:min(len(starts), int(max(a.int("max_windows"), 0)))]
	rows = slices.DeleteFunc(rows, func(v viewRow) bool { return !slices.ContainsFunc(starts, v.start.Equal) })
	return viewAnswer(rows, v.Key)
}

func (f *Fake) windowsBetween(a readArgs) Result {
	agg, from, until := a.str("aggregation"), a.time("start_time"), a.time("end_time")
	rows := slices.DeleteFunc(f.view(), func(v viewRow) bool { return v.agg != agg || !inRange(v.start, from, until) })
	return viewAnswer(rows, "pais")
}

func (f *Fake) discards() []map[string]any {
	if t, ok := f.tables[warehouse.PedidosDescartados]; ok {
		return t.rows
	}
	return nil
}

var summaryFields = fields("kind", "STRING", "what", "STRING", "n", "INTEGER", "pedido_id", "STRING", "reason", "STRING",
	"event_time", "TIMESTAMP", "window_start", "TIMESTAMP", "received_at", "TIMESTAMP")

func (f *Fake) discardSummary(a readArgs) Result {
	agg, latest, since := a.str("aggregation"), a.int("max_latest"), a.time("since")
	from, until := a.time("start_time"), a.time("end_time")
	kind := func(r map[string]any) string {
		if r["reason"] == warehouse.ReasonTooLate {
			return "too_late"
		}
		return "dead_letter"
	}
	byKind := map[string][]map[string]any{}
	for _, r := range f.discards() {
		if rt, ok := rowTime(r, "received_at"); !ok || rt.Before(since) {
			continue
		}
		if ra, ok := rowStr(r, "aggregation"); r["reason"] != warehouse.ReasonTooLate || (ok && ra == agg) {
			byKind[kind(r)] = append(byKind[kind(r)], r)
		}
	}
	res := Result{Fields: summaryFields, Rows: [][]any{}}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range byKind {
			if !yield(k) {
				return
			}
		}
	}) {
		rs := byKind[k]
		slices.SortStableFunc(rs, func(x, y map[string]any) int {
			tx, _ := rowTime(x, "received_at")
			ty, _ := rowTime(y, "received_at")
			return ty.Compare(tx)
		})
		last, _ := rowTime(rs[0], "received_at")
		res.Rows = append(res.Rows, []any{"count", k, cellText(int64(len(rs))), nil, nil, nil, nil, timeText(last, true)})
		for _, r := range rs[:min(len(rs), int(max(latest, 0)))] {
			id, idOK := rowStr(r, "pedido_id")
			et, etOK := rowTime(r, "event_time")
			ws, wsOK := rowTime(r, "window_start")
			rt, rtOK := rowTime(r, "received_at")
			res.Rows = append(res.Rows, []any{"row", k, "0", strCell(id, idOK), r["reason"], timeText(et, etOK), timeText(ws, wsOK), timeText(rt, rtOK)})
		}
	}
	countries := map[string]int64{}
	for _, v := range f.view() {
		if v.agg == agg && inRange(v.start, from, until) {
			countries[v.pais]++
		}
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range countries {
			if !yield(p) {
				return
			}
		}
	}) {
		res.Rows = append(res.Rows, []any{"country", p, cellText(countries[p]), nil, nil, nil, nil, nil})
	}
	return res
}

func (f *Fake) discardCounts(a readArgs) Result {
	since := a.time("since")
	type counts struct{ total, recent int64 }
	by := map[string]*counts{}
	var kinds []string
	for _, r := range f.discards() {
		k := "invalid"
		if r["reason"] == warehouse.ReasonTooLate {
			k = "too_late"
		}
		if by[k] == nil {
			by[k] = &counts{}
			kinds = append(kinds, k)
		}
		by[k].total++
		if t, ok := rowTime(r, "received_at"); ok && !t.Before(since) {
			by[k].recent++
		}
	}
	res := Result{Fields: fields("kind", "STRING", "total", "INTEGER", "recent", "INTEGER"), Rows: [][]any{}}
	for _, k := range kinds {
		res.Rows = append(res.Rows, []any{k, cellText(by[k].total), cellText(by[k].recent)})
	}
	return res
}

func (f *Fake) discardReasons(a readArgs) Result {
	since := a.time("since")
	n := map[string]int64{}
	for _, r := range f.discards() {
		if t, ok := rowTime(r, "received_at"); ok && !t.Before(since) {
			n[fmt.Sprint(r["reason"])]++
		}
	}
	reasons := make([]string, 0, len(n))
	for r := range n {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(x, y string) int { return cmp.Or(cmp.Compare(n[y], n[x]), strings.Compare(x, y)) })
	res := Result{Fields: fields("reason", "STRING", "n", "INTEGER"), Rows: [][]any{}}
	for _, r := range reasons[:min(len(reasons), int(max(a.int("max_reasons"), 0)))] {
		res.Rows = append(res.Rows, []any{r, cellText(n[r])})
	}
	return res
}

func (f *Fake) lines() []map[string]any {
	if t, ok := f.tables[warehouse.LineasPedido]; ok {
		return t.rows
	}
	return nil
}

func (f *Fake) lineDates(a readArgs) Result {
	from, to := a.str("first_day"), a.str("last_day")
	var dates []string
	for _, r := range f.lines() {
		d, _ := rowStr(r, "fecha")
		if d >= from && d <= to && !slices.Contains(dates, d) {
			dates = append(dates, d)
		}
	}
	slices.Sort(dates) // YYYY-MM-DD sorts as dates do
	res := Result{Fields: fields("fecha", "DATE"), Rows: [][]any{}}
	for _, d := range dates {
		res.Rows = append(res.Rows, []any{d})
	}
	return res
}

// currentLines are the lines of day of each source object's newest
// generation holding lines of that day (the newest-generation rule).
func (f *Fake) currentLines(day string) []map[string]any {
	newest := map[string]int64{}
	for _, r := range f.lines() {
		if r["fecha"] == day {
			obj := fmt.Sprint(r["source_object"])
			newest[obj] = max(newest[obj], rowInt(r, "source_generation"))
		}
	}
	var out []map[string]any
	for _, r := range f.lines() {
		if r["fecha"] == day && rowInt(r, "source_generation") == newest[fmt.Sprint(r["source_object"])] {
			out = append(out, r)
		}
	}
	return out
}

// orderSum is the lines of one order (and, for day_drops, one country).
type orderSum struct {
	id, pais, paisMax, cliente string
	hasCliente                 bool
	importe                    *big.Rat
	unidades                   int64
}

func sumOrders(lines []map[string]any, byCountry bool) []*orderSum {
	by := map[[2]string]*orderSum{}
	var out []*orderSum
	for _, r := range lines {
		id, pais := fmt.Sprint(r["pedido_id"]), fmt.Sprint(r["pais"])
		k := [2]string{id, ""}
		if byCountry {
			k[1] = pais
		}
		o := by[k]
		if o == nil {
			o = &orderSum{id: id, pais: pais, paisMax: pais, importe: new(big.Rat)}
			by[k] = o
			out = append(out, o)
		}
		o.pais, o.paisMax = min(o.pais, pais), max(o.paisMax, pais)
		if c, ok := rowStr(r, "cliente_id"); ok && (!o.hasCliente || c < o.cliente) {
			o.cliente, o.hasCliente = c, true
		}
		o.importe = new(big.Rat).Add(o.importe, rowRat(r, "importe"))
		o.unidades += rowInt(r, "cantidad")
	}
	slices.SortFunc(out, func(x, y *orderSum) int { return cmp.Or(strings.Compare(x.id, y.id), strings.Compare(x.pais, y.pais)) })
	return out
}

func (f *Fake) dayOrders(a readArgs) Result {
	res := Result{Fields: fields("pedido_id", "STRING", "pais", "STRING", "pais_max", "STRING", "cliente_id", "STRING",
		"importe", "NUMERIC", "unidades", "INTEGER"), Rows: [][]any{}}
	for _, o := range sumOrders(f.currentLines(a.str("day")), false) {
		res.Rows = append(res.Rows, []any{o.id, o.pais, o.paisMax, strCell(o.cliente, o.hasCliente), cellText(o.importe), cellText(o.unidades)})
	}
	return res
}

func (f *Fake) countryTotals(a readArgs) Result {
	type total struct {
		importe  *big.Rat
		orders   map[string]bool
		unidades int64
	}
	by := map[string]*total{}
	for _, r := range f.currentLines(a.str("day")) {
		p := fmt.Sprint(r["pais"])
		t := by[p]
		if t == nil {
			t = &total{importe: new(big.Rat), orders: map[string]bool{}}
			by[p] = t
		}
		t.importe = new(big.Rat).Add(t.importe, rowRat(r, "importe"))
		t.orders[fmt.Sprint(r["pedido_id"])] = true
		t.unidades += rowInt(r, "cantidad")
	}
	res := Result{Fields: fields("pais", "STRING", "importe", "NUMERIC", "pedidos", "INTEGER", "unidades", "INTEGER"), Rows: [][]any{}}
	paises := make([]string, 0, len(by))
	for p := range by {
		paises = append(paises, p)
	}
	slices.Sort(paises)
	for _, p := range paises {
		t := by[p]
		res.Rows = append(res.Rows, []any{p, cellText(t.importe), cellText(int64(len(t.orders))), cellText(t.unidades)})
	}
	return res
}

func (f *Fake) dayDrops(a readArgs) Result {
	agg, from, until := a.str("aggregation"), a.time("start_time"), a.time("end_time")
	orders := sumOrders(f.currentLines(a.str("day")), true)
	in := func(r map[string]any, col string) bool {
		t, ok := rowTime(r, col)
		return ok && inRange(t, from, until)
	}
	type drop struct {
		r map[string]any
		b *orderSum
	}
	var drops []drop
	for _, r := range f.discards() {
		ra, hasAgg := rowStr(r, "aggregation")
		reason := fmt.Sprint(r["reason"])
		if !(hasAgg && ra == agg) && !(!hasAgg && strings.HasPrefix(reason, "invalid:")) {
			continue
		}
		id, hasID := rowStr(r, "pedido_id")
		var matched []*orderSum
		if hasID {
			for _, o := range orders {
				if o.id == id {
					matched = append(matched, o)
				}
			}
		}
		_, hasET := rowTime(r, "event_time")
		near := in(r, "window_start") || in(r, "event_time") || (!hasET && in(r, "received_at"))
		if len(matched) == 0 && near {
			drops = append(drops, drop{r: r})
		}
		for _, o := range matched {
			drops = append(drops, drop{r: r, b: o})
		}
	}
	slices.SortStableFunc(drops, func(x, y drop) int {
		ix, okx := rowStr(x.r, "pedido_id")
		iy, oky := rowStr(y.r, "pedido_id")
		tx, _ := rowTime(x.r, "received_at")
		ty, _ := rowTime(y.r, "received_at")
		return cmp.Or(compareBool(okx, oky), strings.Compare(ix, iy),
			strings.Compare(fmt.Sprint(x.r["reason"]), fmt.Sprint(y.r["reason"])), tx.Compare(ty))
	})
	res := Result{Fields: fields("pedido_id", "STRING", "reason", "STRING", "event_time", "TIMESTAMP", "window_start", "TIMESTAMP",
		"received_at", "TIMESTAMP", "pais", "STRING", "importe", "NUMERIC", "unidades", "INTEGER"), Rows: [][]any{}}
	for _, d := range drops {
		id, idOK := rowStr(d.r, "pedido_id")
		et, etOK := rowTime(d.r, "event_time")
		ws, wsOK := rowTime(d.r, "window_start")
		rt, rtOK := rowTime(d.r, "received_at")
		row := []any{strCell(id, idOK), d.r["reason"], timeText(et, etOK), timeText(ws, wsOK), timeText(rt, rtOK), nil, nil, nil}
		if d.b != nil {
			row[5], row[6], row[7] = d.b.pais, cellText(d.b.importe), cellText(d.b.unidades)
		}
		res.Rows = append(res.Rows, row)
	}
	return res
}

// compareBool orders false (NULL) first, as BigQuery's ascending order.
func compareBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

func (f *Fake) panes(v warehouse.View, a readArgs) Result {
	agg := a.str("aggregation")
	var starts []time.Time
	for _, s := range a["starts"] {
		t, _ := parseTimestamp(s)
		starts = append(starts, t)
	}
	var rows []map[string]any
	if t, ok := f.tables[v.Panes]; ok {
		for _, r := range t.rows {
			ws, _ := rowTime(r, "window_start")
			if r["aggregation"] == agg && slices.ContainsFunc(starts, ws.Equal) {
				rows = append(rows, r)
			}
		}
	}
	slices.SortStableFunc(rows, func(x, y map[string]any) int {
		tx, _ := rowTime(x, "window_start")
		ty, _ := rowTime(y, "window_start")
		return cmp.Or(tx.Compare(ty), strings.Compare(fmt.Sprint(x[v.Key]), fmt.Sprint(y[v.Key])),
			cmp.Compare(rowInt(x, "pane_index"), rowInt(y, "pane_index")))
	})
	res := Result{Fields: fields("window_start", "TIMESTAMP", "pane_key", "STRING", "pane_index", "INTEGER", "timing", "STRING",
		"importe", "NUMERIC", "pedidos", "INTEGER", "unidades", "INTEGER"), Rows: [][]any{}}
	for _, r := range rows {
		ws, _ := rowTime(r, "window_start")
		res.Rows = append(res.Rows, []any{timeText(ws, true), r[v.Key], cellText(rowInt(r, "pane_index")), r["timing"],
			cellText(rowRat(r, "importe")), cellText(rowInt(r, "pedidos")), cellText(rowInt(r, "unidades"))})
	}
	return res
}

// listing lists a table, or a view's model, as a Listing says.
func (f *Fake) listing(l warehouse.Listing) (Result, error) {
	types, err := l.Types()
	if err != nil {
		return Result{}, err
	}
	var rows []map[string]any
	if i := slices.IndexFunc(warehouse.Views(), func(v warehouse.View) bool { return v.Name == l.From }); i >= 0 {
		view := warehouse.Views()[i]
		for _, v := range f.viewOf(view.Panes, view.Key) {
			rows = append(rows, map[string]any{"aggregation": v.agg, "window_start": timeText(v.start, true), "window_end": timeText(v.end, true),
				view.Key: v.pais, "importe": v.importe, "pedidos": v.pedidos, "unidades": v.unidades, "timing": v.timing, "pane_index": v.index})
		}
	} else if t, ok := f.tables[l.From]; ok {
		rows = slices.Clone(t.rows)
	}
	typeOf := map[string]warehouse.Type{}
	res := Result{Rows: [][]any{}}
	for i, c := range l.Columns {
		typeOf[c] = types[i]
		res.Fields = append(res.Fields, &bq.TableFieldSchema{Name: c, Type: wireType(types[i]), Mode: "NULLABLE"})
	}
	t, _ := warehouse.Lookup(l.From)
	for _, fl := range t.Schema {
		if _, ok := typeOf[fl.Name]; !ok {
			typeOf[fl.Name] = fl.Type
		}
	}
	typed := func(r map[string]any, c string) any {
		if typeOf[c] == warehouse.Timestamp {
			if ts, ok := rowTime(r, c); ok {
				return ts.UnixMicro()
			}
			return nil
		}
		return r[c]
	}
	slices.SortStableFunc(rows, func(x, y map[string]any) int {
		for _, c := range l.OrderBy {
			if d := compareCells(typed(x, c), typed(y, c)); d != 0 {
				return d
			}
		}
		return 0
	})
	for _, r := range rows {
		out := make([]any, len(l.Columns))
		for i, c := range l.Columns {
			if types[i] == warehouse.Timestamp {
				ts, ok := rowTime(r, c)
				out[i] = timeText(ts, ok)
				continue
			}
			out[i] = cellText(r[c])
		}
		res.Rows = append(res.Rows, out)
	}
	return res, nil
}
