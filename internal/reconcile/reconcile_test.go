package reconcile

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/window"
)

func ms(importe string, pedidos, unidades int64) window.Measures {
	d, err := numeric.Parse(importe, false)
	if err != nil {
		panic(err)
	}
	return window.Measures{Importe: d, Pedidos: pedidos, Unidades: unidades}
}

var (
	day0 = time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	day1 = day0.Add(24 * time.Hour)
)

func at(h int) time.Time { return day0.Add(time.Duration(h) * time.Hour) }

func hourRow(h int, pais string, timing window.Timing, m window.Measures) warehouse.HourlySale {
	return warehouse.HourlySale{WindowStart: at(h), WindowEnd: at(h + 1), Pais: pais,
		Timing: string(timing), Importe: m.Importe, Pedidos: m.Pedidos, Unidades: m.Unidades}
}

func total(pais string, m window.Measures) warehouse.CountryTotal {
	return warehouse.CountryTotal{Pais: pais, Importe: m.Importe, Pedidos: m.Pedidos,
		Unidades: m.Unidades}
}

func TestCompareCountries(t *testing.T) {
	type verdict struct {
		Countries   []Country
		Unexplained []string
	}
	tests := []struct {
		name string
		in   Input
		want verdict
	}{
		{
			name: "both sides agree",
			in: Input{
				Batch: []warehouse.CountryTotal{total("ES", ms("300.5", 3, 7))},
				Hours: []warehouse.HourlySale{
					hourRow(10, "ES", window.TimingOnTime, ms("100.25", 1, 2)),
					hourRow(18, "ES", window.TimingLate, ms("200.25", 2, 5)),
				},
			},
			want: verdict{[]Country{{Pais: "ES", Batch: ms("300.5", 3, 7), RealTime: ms("300.5", 3, 7), Status: Match}}, []string{}},
		},
		{
			name: "difference is a too-late drop and an invalid message",
			in: Input{
				Batch: []warehouse.CountryTotal{total("ES", ms("179.8", 3, 6))},
				Hours: []warehouse.HourlySale{hourRow(9, "ES", window.TimingOnTime, ms("89.9", 1, 1))},
				Drops: []Drop{
					{PedidoID: "P-2", Reason: "too_late", WindowStart: at(8), Matched: true, Pais: "ES", Batch: ms("50", 1, 2)},
					{PedidoID: "P-3", Reason: "invalid: pais \"XX\" is not an ISO 3166-1 alpha-2 code", Matched: true, Pais: "ES", Batch: ms("39.9", 1, 3)},
				},
			},
			want: verdict{Countries: []Country{{
				Pais: "ES", Batch: ms("179.8", 3, 6), RealTime: ms("89.9", 1, 1),
				Difference: ms("89.9", 2, 5), TooLate: ms("50", 1, 2), Invalid: ms("39.9", 1, 3),
				Status: Explained,
			}}, Unexplained: []string{}},
		},
		{
			name: "an order missing from the stream without a drop is unexplained",
			in: Input{
				Batch: []warehouse.CountryTotal{total("FR", ms("10", 2, 2)), total("PT", ms("5", 1, 1))},
				Hours: []warehouse.HourlySale{
					hourRow(9, "FR", window.TimingOnTime, ms("4", 1, 1)),
					hourRow(9, "PT", window.TimingOnTime, ms("5", 1, 1)),
				},
			},
			want: verdict{[]Country{
				{Pais: "FR", Batch: ms("10", 2, 2), RealTime: ms("4", 1, 1), Difference: ms("6", 1, 1), Residual: ms("6", 1, 1), Status: Unexplained},
				{Pais: "PT", Batch: ms("5", 1, 1), RealTime: ms("5", 1, 1), Status: Match},
			}, []string{"FR"}},
		},
		{
			name: "real time without batch lines (file not loaded yet) is unexplained",
			in: Input{Hours: []warehouse.HourlySale{
				hourRow(23, "DE", window.TimingEarly, ms("12.5", 1, 4)),
			}},
			want: verdict{Countries: []Country{{
				Pais: "DE", RealTime: ms("12.5", 1, 4), Difference: ms("-12.5", -1, -4), Residual: ms("-12.5", -1, -4),
				Status: Unexplained, OpenWindows: 1,
			}}, Unexplained: []string{"DE"}},
		},
		{
			name: "an order dropped several times explains once",
			in: Input{Batch: []warehouse.CountryTotal{total("IT", ms("20", 1, 1))}, Drops: []Drop{
				{PedidoID: "P-9", Matched: true, Pais: "IT", Batch: ms("20", 1, 1), Reason: "invalid: body is not an order", ReceivedAt: at(9)},
				{PedidoID: "P-9", Matched: true, Pais: "IT", Batch: ms("20", 1, 1), Reason: "too_late", ReceivedAt: at(20)},
				{PedidoID: "P-9", Matched: true, Pais: "IT", Batch: ms("20", 1, 1), Reason: "invalid: body is not an order", ReceivedAt: at(8)},
			}},
			want: verdict{[]Country{{Pais: "IT", Batch: ms("20", 1, 1), Difference: ms("20", 1, 1), TooLate: ms("20", 1, 1), Status: Explained}}, []string{}},
		},
		{
			name: "a drop of an order that was accepted later leaves a negative residual",
			in: Input{
				Batch: []warehouse.CountryTotal{total("ES", ms("20", 1, 1))},
				Hours: []warehouse.HourlySale{hourRow(9, "ES", window.TimingOnTime, ms("20", 1, 1))},
				Drops: []Drop{{PedidoID: "P-1", Reason: "invalid: body is not an order", Matched: true, Pais: "ES", Batch: ms("20", 1, 1)}},
			},
			want: verdict{Countries: []Country{{
				Pais: "ES", Batch: ms("20", 1, 1), RealTime: ms("20", 1, 1), Invalid: ms("20", 1, 1),
				Residual: ms("-20", -1, -1), Status: Unexplained,
			}}, Unexplained: []string{"ES"}},
		},
		{
			name: "windows outside the day and unmatched drops count for nothing",
			in: Input{
				Batch: []warehouse.CountryTotal{total("ES", ms("1", 1, 1))},
				Hours: []warehouse.HourlySale{
					hourRow(0, "ES", window.TimingOnTime, ms("1", 1, 1)),
					hourRow(24, "ES", window.TimingOnTime, ms("7", 1, 1)), // next day
				},
				Drops: []Drop{{PedidoID: "P-404", Reason: "too_late", WindowStart: at(3)}},
			},
			want: verdict{[]Country{{Pais: "ES", Batch: ms("1", 1, 1), RealTime: ms("1", 1, 1), Status: Match}}, []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.DayStart, in.DayEnd = day0, day1
			r, err := Compare(in)
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			got := verdict{Countries: r.Countries, Unexplained: r.Unexplained}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if r.OK() != (len(got.Unexplained) == 0) {
				t.Errorf("OK() = %v with unexplained %v", r.OK(), got.Unexplained)
			}
		})
	}
}

func TestCompareHoursAndExplanations(t *testing.T) {
	p2 := Drop{PedidoID: "P-2", Reason: "too_late", WindowStart: at(8), ReceivedAt: at(12), Matched: true, Pais: "ES", Batch: ms("50", 1, 2)}
	p3 := Drop{PedidoID: "P-3", Reason: "invalid: body is not an order", EventTime: at(9).Add(42 * time.Minute), Matched: true, Pais: "ES", Batch: ms("39.9", 1, 3)}
	late := hourRow(9, "ES", window.TimingLate, ms("89.9", 1, 1))
	late.PaneIndex = 2
	in := Input{
		DayStart: day0, DayEnd: day1,
		Batch: []warehouse.CountryTotal{total("ES", ms("179.8", 3, 6))},
		Hours: []warehouse.HourlySale{late},
		Drops: []Drop{
			p3, p2,
			{PedidoID: "P-404", Reason: "too_late", WindowStart: at(9)},                                         // no lines today
			{Reason: "invalid: missing attribute momento_evento", ReceivedAt: at(11)},                           // no hour
			{PedidoID: "P-405", Reason: "invalid: body is not an order", EventTime: at(30), ReceivedAt: at(30)}, // another day
		},
	}
	r, err := Compare(in)
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	wantHours := []HourLine{
		{WindowStart: at(8), Pais: "ES", TooLate: 1},
		{WindowStart: at(9), Pais: "", TooLate: 1},
		{WindowStart: at(9), Pais: "ES", HasPane: true, RealTime: ms("89.9", 1, 1), Timing: window.TimingLate, PaneIndex: 2, Invalid: 1},
	}
	if diff := cmp.Diff(wantHours, r.Hours); diff != "" {
		t.Errorf("hours (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Drop{p2, p3}, r.Explanations); diff != "" {
		t.Errorf("explanations (-want +got):\n%s", diff)
	}
	if r.UnmatchedTooLate != 1 || r.UnmatchedInvalid != 0 {
		t.Errorf("unmatched = %d too late, %d invalid; want 1, 0", r.UnmatchedTooLate, r.UnmatchedInvalid)
	}
	if !r.OK() {
		t.Errorf("unexplained %v, want every difference explained", r.Unexplained)
	}
}

func TestCompareOverflowIsAnError(t *testing.T) {
	big := window.Measures{Pedidos: 1 << 62}
	batch := []warehouse.CountryTotal{total("ES", big), total("ES", big)}
	_, err := Compare(Input{DayStart: day0, DayEnd: day1, Batch: batch})
	if err == nil {
		t.Fatal("Compare of totals beyond INT64 succeeded, want an error")
	}
}

// line is one lineas_pedido row of a fixture: pedido, pais, fecha,
// cantidad, precio.
type line replaytest.Line

// pane is a ventas_hora_pais pane of an hourly window starting at start.
func pane(agg, pais, start, timing, importe string, index, pedidos, unidades int64) window.Pane {
	st, err := time.Parse(time.RFC3339, start)
	if err != nil {
		panic(err)
	}
	return window.Pane{Aggregation: agg, Key: pais, WindowStart: st, WindowEnd: st.Add(time.Hour), Index: index,
		Timing: window.Timing(timing), Accumulation: window.Accumulating, Measures: ms(importe, pedidos, unidades)}
}

type discarded struct {
	pedido, agg, reason, eventTime, windowStart string
}

func appendDrops(t *testing.T, w *duckdb.Warehouse, drops ...discarded) {
	t.Helper()
	ts := func(s string) warehouse.Value {
		if s == "" {
			return warehouse.NullValue()
		}
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return warehouse.TimeValue(v)
	}
	str := func(s string) warehouse.Value {
		if s == "" {
			return warehouse.NullValue()
		}
		return warehouse.StringValue(s)
	}
	var rows []warehouse.Row
	for i, d := range drops {
		rows = append(rows, warehouse.Row{ID: "drop-" + strconv.Itoa(i), Values: replaytest.Values(t, warehouse.PedidosDescartados, map[string]warehouse.Value{
			"pedido_id": str(d.pedido), "aggregation": str(d.agg), "reason": warehouse.StringValue(d.reason),
			"event_time": ts(d.eventTime), "window_start": ts(d.windowStart),
			"received_at": ts("2026-03-14T21:00:00Z"), "message_id": warehouse.StringValue("m-" + strconv.Itoa(i)),
		})})
	}
	if err := w.Append(context.Background(), warehouse.PedidosDescartados, rows); err != nil {
		t.Fatal(err)
	}
}

// fixture is a day (2026-03-14) whose differences are all explained, and a
// next day whose ERP lines never reached the stream.
func fixture(t *testing.T) *duckdb.Warehouse {
	w := replaytest.OpenWarehouse(t)
	const obj = "gs://alpinashop-catalogo/exportaciones/2026/03/15/pedidos.csv"
	// Generation 1 had P-1 wrong; the corrected generation 2 replaces it.
	replaytest.LoadLines(t, w, obj, 1, line{"P-1", "ES", "2026-03-14", 2, "99.90"})
	replaytest.LoadLines(t, w, obj, 2,
		line{"P-1", "ES", "2026-03-14", 2, "89.90"}, line{"P-1", "ES", "2026-03-14", 1, "10"},
		line{"P-2", "ES", "2026-03-14", 1, "50"},
		line{"P-3", "FR", "2026-03-14", 3, "13.30"},
		line{"P-4", "FR", "2026-03-14", 1, "5"},
		line{"P-6", "ES", "2026-03-15", 1, "7.5"},
	)
	replaytest.LoadLines(t, w, "gs://alpinashop-catalogo/exportaciones/2026/03/15/pt.csv", 7, line{"P-5", "PT", "2026-03-14", 1, "20"})
	replaytest.AppendPanes(t, w,
		pane("ventas_hora_pais", "ES", "2026-03-14T10:00:00Z", "EARLY", "179.8", 0, 1, 2),
		pane("ventas_hora_pais", "ES", "2026-03-14T10:00:00Z", "ON_TIME", "189.8", 1, 1, 3),
		pane("ventas_hora_pais", "FR", "2026-03-14T11:00:00Z", "ON_TIME", "39.9", 0, 1, 3),
		pane("otra", "ES", "2026-03-14T10:00:00Z", "ON_TIME", "1000", 0, 9, 9),
		pane("ventas_hora_pais", "DE", "2026-03-15T00:00:00Z", "EARLY", "12", 0, 1, 1),
	)
	appendDrops(t, w,
		discarded{"P-2", "ventas_hora_pais", "too_late", "2026-03-14T09:30:00Z", "2026-03-14T09:00:00Z"},
		discarded{"P-5", "ventas_hora_pais", "too_late", "2026-03-14T07:10:00Z", "2026-03-14T07:00:00Z"},
		discarded{"P-4", "", `invalid: pais "XX" is not an ISO 3166-1 alpha-2 code`, "2026-03-14T11:30:00Z", ""},
		discarded{"P-7", "otra", "too_late", "2026-03-14T08:00:00Z", "2026-03-14T08:00:00Z"},
		discarded{"P-999", "", "invalid: body is not an order: unexpected EOF", "2026-03-14T13:05:00Z", ""},
	)
	return w
}

// TestRun reconciles the days of one fixture: one explained, one not, and
// one in another zone.
func TestRun(t *testing.T) {
	w := fixture(t)
	t.Run("explains a day", func(t *testing.T) {
		r, err := Run(context.Background(), w, Request{Date: "2026-03-14"})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		want := []Country{
			{Pais: "ES", Batch: ms("239.8", 2, 4), RealTime: ms("189.8", 1, 3), Difference: ms("50", 1, 1),
				TooLate: ms("50", 1, 1), Status: Explained},
			{Pais: "FR", Batch: ms("44.9", 2, 4), RealTime: ms("39.9", 1, 3), Difference: ms("5", 1, 1),
				Invalid: ms("5", 1, 1), Status: Explained},
			{Pais: "PT", Batch: ms("20", 1, 1), Difference: ms("20", 1, 1), TooLate: ms("20", 1, 1), Status: Explained},
		}
		if diff := cmp.Diff(want, r.Countries); diff != "" {
			t.Errorf("countries (-want +got):\n%s", diff)
		}
		if !r.OK() || r.UnmatchedInvalid != 1 || r.UnmatchedTooLate != 0 {
			t.Errorf("OK=%v unmatched invalid=%d too late=%d; want true, 1, 0", r.OK(), r.UnmatchedInvalid, r.UnmatchedTooLate)
		}
		var buf bytes.Buffer
		if err := r.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		replaytest.Golden(t, "testdata/explained.golden", buf.Bytes())
	})
	// The next day is unexplained; in UTC+1 too, where the 15th starts at
	// 23:00 UTC on the 14th: no window of the fixture starts in it but DE's,
	// and the batch lines of the 15th.
	for _, tt := range []struct {
		loc   *time.Location // nil: UTC
		start time.Time
	}{{nil, day1}, {time.FixedZone("CET", 3600), day1.Add(-time.Hour)}} {
		r, err := Run(context.Background(), w, Request{Date: "2026-03-15", Location: tt.loc})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !r.DayStart.Equal(tt.start) || !r.DayEnd.Equal(tt.start.Add(24*time.Hour)) {
			t.Errorf("day = [%s, %s), want to start at %s", r.DayStart, r.DayEnd, tt.start)
		}
		if diff := cmp.Diff([]string{"DE", "ES"}, r.Unexplained); diff != "" {
			t.Errorf("unexplained in %v (-want +got):\n%s", tt.loc, diff)
		}
	}
}

func TestLoadRejectsBadRequests(t *testing.T) {
	w := replaytest.OpenWarehouse(t)
	for _, req := range []Request{
		{Date: "14/03/2026"},
		{Date: "2026-03-14", Aggregation: "x'; DROP TABLE lineas_pedido; --"},
	} {
		if _, err := Load(context.Background(), w, req); err == nil {
			t.Errorf("Load(%+v) succeeded, want an error", req)
		}
	}
}
