package stream

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestPlanOrders drives the pure step of the order transaction over what
// a transaction could have read: the fast and exact headroom paths, the
// refusal of the order that would leave the range, and duplicates.
func TestPlanOrders(t *testing.T) {
	s := window.Defaults()
	rows, err := newRowMapper([]window.Spec{s})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	w := window.Window{Start: start, End: start.Add(time.Hour)}
	wk := window.WindowKey{Window: w, Key: "ES"}
	now := start.Add(30 * time.Minute)
	dec := func(v string) numeric.Dec {
		d, err := numeric.Parse(v, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ms := func(v string, n int64) window.Measures {
		return window.Measures{Importe: dec(v), Pedidos: n, Unidades: n}
	}
	const own = "aggregations/x/deltas/own_0"
	type cellState struct {
		folded, delta string
		exact         bool
		unreadable    bool
		// full: the cell as read in full, with other deltas' importe.
		full   bool
		others []string
	}
	tests := []struct {
		name    string
		cell    cellState
		amounts []string
		dup     int // index of an item whose dedup record exists; -1 none
		// want: per item "accepted", "duplicate" or "invalid"; wants: the
		// plan asks for the cell in full first.
		want      []string
		wants     bool
		wantDelta string
		wantExact bool
		wantErr   string
	}{
		{name: "small orders take the fast path", cell: cellState{folded: "100", delta: "5"}, amounts: []string{"9000000000", "9000000000"}, dup: -1,
			want: []string{"accepted", "accepted"}, wantDelta: "18000000005"},
		{name: "a duplicate stops at its dedup record", cell: cellState{}, amounts: []string{"1", "2"}, dup: 0,
			want: []string{"duplicate", "accepted"}, wantDelta: "2"},
		{name: "a delta past its share asks for the cell in full", cell: cellState{}, amounts: []string{"1000000000000000000000000000"}, dup: -1,
			wants: true},
		{name: "a cell past half its range asks for the cell in full", cell: cellState{folded: "50000000000000000000000000001"}, amounts: []string{"1"}, dup: -1,
			wants: true},
		{name: "a cell marked exact asks for the cell in full", cell: cellState{exact: true}, amounts: []string{"1"}, dup: -1,
			wants: true},
		{name: "exact: within range, accepted and the cell marked", cell: cellState{folded: "60000000000000000000000000000", full: true, others: []string{"1"}},
			amounts: []string{"30000000000000000000000000000"}, dup: -1,
			want: []string{"accepted"}, wantDelta: "30000000000000000000000000000", wantExact: true},
		{name: "exact: the order that would leave NUMERIC is refused, the others counted",
			cell:    cellState{folded: "90000000000000000000000000000", delta: "0", full: true, others: []string{"1000000000000000000000000000"}},
			amounts: []string{"5000000000000000000000000000", "10000000000000000000000000000", "3999999999999999999999999999.999999999"}, dup: -1,
			want: []string{"accepted", "invalid", "accepted"}, wantDelta: "8999999999999999999999999999.999999999", wantExact: true},
		{name: "exact: the bound itself is in range", cell: cellState{folded: "99999999999999999999999999999", full: true},
			amounts: []string{"0.999999999", "0.000000001"}, dup: -1,
			want: []string{"accepted", "invalid"}, wantDelta: "0.999999999", wantExact: true},
		{name: "an unreadable cell: small orders wait in the delta", cell: cellState{unreadable: true}, amounts: []string{"1"}, dup: -1,
			want: []string{"accepted"}, wantDelta: "1"},
		{name: "an unreadable cell: beyond the share the order fails, to be redelivered", cell: cellState{unreadable: true},
			amounts: []string{"1000000000000000000000000000"}, dup: -1, wantErr: "garbage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &cellGroup{wk: wk, n: 0, deltaPath: own, orders: len(tt.amounts),
				cell: cellDoc{WindowStart: w.Start, WindowEnd: w.End, Key: "ES", Shards: s.Shards, Exact: tt.cell.exact}}
			if tt.cell.folded != "" {
				g.cell.Folded.Measures = ms(tt.cell.folded, 1)
			}
			if tt.cell.delta != "" {
				g.delta.Measures = ms(tt.cell.delta, 1)
			}
			if tt.cell.unreadable {
				g.cellErr = unreadable(errString("decode: garbage"))
			}
			rd := orderRead{stored: map[string]map[string]Fate{}, aggs: []aggRead{{wm: start.Add(-time.Minute), groups: []*cellGroup{g}, full: map[window.WindowKey]cellView{}}}}
			if tt.cell.full {
				v := cellView{wk: wk, cell: g.cell, deltas: []string{own}, parts: []window.Shard{g.delta}}
				for i, o := range tt.cell.others {
					v.deltas = append(v.deltas, own+string(rune('a'+i)))
					v.parts = append(v.parts, window.Shard{Measures: ms(o, 1)})
				}
				rd.aggs[0].full[wk] = v
			}
			var items []*item
			for i, a := range tt.amounts {
				id := "P-" + string(rune('1'+i))
				m := ms(a, 1)
				items = append(items, &item{
					push: Push{Delivery: order.Delivery{Message: order.Message{MessageID: "m" + id, Data: []byte("{}")}}},
					now:  now, o: order.Order{PedidoID: id, EventTime: start.Add(10 * time.Minute)}, ms: m,
					elems: [][]element{{{wk: wk, ms: m}}}, missing: [][]int{nil}})
			}
			if tt.dup >= 0 {
				rd.stored[items[tt.dup].o.PedidoID] = map[string]Fate{s.Name: Accepted}
			}
			before := *g
			bad := map[int]string{}
			tp := planTx([]window.Spec{s}, rows, items, rd, bad)
			if after := rd.aggs[0].groups[0]; after.delta != before.delta || after.exact != before.exact || after.touched != before.touched || len(rd.stored) != countDup(tt.dup) {
				t.Fatalf("planTx changed what was read: delta %v exact %v touched %v records %d", after.delta.Measures, after.exact, after.touched, len(rd.stored))
			}
			pl := tp.plans[0]
			pl.err = tp.err
			if tt.wantErr != "" {
				if pl.err == nil || !strings.Contains(pl.err.Error(), tt.wantErr) {
					t.Fatalf("plan error %v, want one containing %q", pl.err, tt.wantErr)
				}
				return
			}
			if pl.err != nil {
				t.Fatalf("plan error %v", pl.err)
			}
			if tt.wants {
				if diff := cmp.Diff([]want{{agg: 0, wk: wk}}, tp.wants, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("wants (-want +got):\n%s", diff)
				}
				return
			}
			if len(tp.wants) != 0 {
				t.Fatalf("plan wants %v, want none", tp.wants)
			}
			var got []string
			for i := range tp.n {
				switch {
				case bad[i] != "":
					got = append(got, "invalid")
					if !strings.Contains(bad[i], "would leave the range BigQuery stores") || pl.recs[i].Fate != "" {
						t.Errorf("item %d: reason %q, record %+v", i, bad[i], pl.recs[i])
					}
				case tp.skip[i]:
					got = append(got, "duplicate")
				default:
					got = append(got, string(pl.outs[i].Fate))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fates (-want +got):\n%s", diff)
			}
			pg := pl.groups[0]
			if d := pg.delta.Measures.Importe.String(); d != tt.wantDelta {
				t.Errorf("delta importe %s, want %s", d, tt.wantDelta)
			}
			if pg.exact != tt.wantExact {
				t.Errorf("exact %v, want %v", pg.exact, tt.wantExact)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func countDup(i int) int {
	if i >= 0 {
		return 1
	}
	return 0
}
