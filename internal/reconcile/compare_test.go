package reconcile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

func ms(t *testing.T, importe string, pedidos, unidades int64) window.Measures {
	t.Helper()
	d, err := numeric.Parse(importe, false)
	if err != nil {
		t.Fatalf("importe %q: %v", importe, err)
	}
	return window.Measures{Importe: d, Pedidos: pedidos, Unidades: unidades}
}

var (
	day0 = time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	day1 = day0.Add(24 * time.Hour)
)

func at(h int) time.Time { return day0.Add(time.Duration(h) * time.Hour) }

func hourRow(h int, pais string, timing window.Timing, m window.Measures) Hour {
	return Hour{WindowStart: at(h), WindowEnd: at(h + 1), Pais: pais, Measures: m, Timing: timing}
}

func TestCompareCountries(t *testing.T) {
	type verdict struct {
		Countries   []Country
		Unexplained []string
	}
	tests := []struct {
		name string
		in   func(t *testing.T) Input
		want func(t *testing.T) verdict
	}{
		{
			name: "both sides agree",
			in: func(t *testing.T) Input {
				return Input{
					Batch: []Total{{Pais: "ES", Measures: ms(t, "300.5", 3, 7)}},
					Hours: []Hour{
						hourRow(10, "ES", window.TimingOnTime, ms(t, "100.25", 1, 2)),
						hourRow(18, "ES", window.TimingLate, ms(t, "200.25", 2, 5)),
					},
				}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{{
					Pais: "ES", Batch: ms(t, "300.5", 3, 7), RealTime: ms(t, "300.5", 3, 7), Status: Match,
				}}, Unexplained: []string{}}
			},
		},
		{
			name: "difference is a too-late drop and an invalid message",
			in: func(t *testing.T) Input {
				return Input{
					Batch: []Total{{Pais: "ES", Measures: ms(t, "179.8", 3, 6)}},
					Hours: []Hour{hourRow(9, "ES", window.TimingOnTime, ms(t, "89.9", 1, 1))},
					Drops: []Drop{
						{PedidoID: "P-2", Reason: "too_late", WindowStart: at(8), Matched: true, Pais: "ES", Batch: ms(t, "50", 1, 2)},
						{PedidoID: "P-3", Reason: "invalid: pais \"XX\" is not an ISO 3166-1 alpha-2 code", Matched: true, Pais: "ES", Batch: ms(t, "39.9", 1, 3)},
					},
				}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{{
					Pais: "ES", Batch: ms(t, "179.8", 3, 6), RealTime: ms(t, "89.9", 1, 1),
					Difference: ms(t, "89.9", 2, 5), TooLate: ms(t, "50", 1, 2), Invalid: ms(t, "39.9", 1, 3),
					Status: Explained,
				}}, Unexplained: []string{}}
			},
		},
		{
			name: "an order missing from the stream without a drop is unexplained",
			in: func(t *testing.T) Input {
				return Input{
					Batch: []Total{{Pais: "FR", Measures: ms(t, "10", 2, 2)}, {Pais: "PT", Measures: ms(t, "5", 1, 1)}},
					Hours: []Hour{
						hourRow(9, "FR", window.TimingOnTime, ms(t, "4", 1, 1)),
						hourRow(9, "PT", window.TimingOnTime, ms(t, "5", 1, 1)),
					},
				}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{
					{Pais: "FR", Batch: ms(t, "10", 2, 2), RealTime: ms(t, "4", 1, 1), Difference: ms(t, "6", 1, 1), Residual: ms(t, "6", 1, 1), Status: Unexplained},
					{Pais: "PT", Batch: ms(t, "5", 1, 1), RealTime: ms(t, "5", 1, 1), Status: Match},
				}, Unexplained: []string{"FR"}}
			},
		},
		{
			name: "real time without batch lines (file not loaded yet) is unexplained",
			in: func(t *testing.T) Input {
				return Input{Hours: []Hour{hourRow(23, "DE", window.TimingEarly, ms(t, "12.5", 1, 4))}}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{{
					Pais: "DE", RealTime: ms(t, "12.5", 1, 4), Difference: ms(t, "-12.5", -1, -4), Residual: ms(t, "-12.5", -1, -4),
					Status: Unexplained, OpenWindows: 1,
				}}, Unexplained: []string{"DE"}}
			},
		},
		{
			name: "an order dropped several times explains once",
			in: func(t *testing.T) Input {
				drop := Drop{PedidoID: "P-9", Matched: true, Pais: "IT", Batch: ms(t, "20", 1, 1)}
				a, b, c := drop, drop, drop
				a.Reason, a.ReceivedAt = "invalid: body is not an order", at(9)
				b.Reason, b.ReceivedAt = "too_late", at(20)
				c.Reason, c.ReceivedAt = "invalid: body is not an order", at(8)
				return Input{Batch: []Total{{Pais: "IT", Measures: ms(t, "20", 1, 1)}}, Drops: []Drop{a, b, c}}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{{
					Pais: "IT", Batch: ms(t, "20", 1, 1), Difference: ms(t, "20", 1, 1), TooLate: ms(t, "20", 1, 1), Status: Explained,
				}}, Unexplained: []string{}}
			},
		},
		{
			name: "a drop of an order that was accepted later leaves a negative residual",
			in: func(t *testing.T) Input {
				return Input{
					Batch: []Total{{Pais: "ES", Measures: ms(t, "20", 1, 1)}},
					Hours: []Hour{hourRow(9, "ES", window.TimingOnTime, ms(t, "20", 1, 1))},
					Drops: []Drop{{PedidoID: "P-1", Reason: "invalid: body is not an order", Matched: true, Pais: "ES", Batch: ms(t, "20", 1, 1)}},
				}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{{
					Pais: "ES", Batch: ms(t, "20", 1, 1), RealTime: ms(t, "20", 1, 1), Invalid: ms(t, "20", 1, 1),
					Residual: ms(t, "-20", -1, -1), Status: Unexplained,
				}}, Unexplained: []string{"ES"}}
			},
		},
		{
			name: "windows outside the day and unmatched drops count for nothing",
			in: func(t *testing.T) Input {
				return Input{
					Batch: []Total{{Pais: "ES", Measures: ms(t, "1", 1, 1)}},
					Hours: []Hour{
						hourRow(0, "ES", window.TimingOnTime, ms(t, "1", 1, 1)),
						hourRow(24, "ES", window.TimingOnTime, ms(t, "7", 1, 1)), // next day
					},
					Drops: []Drop{{PedidoID: "P-404", Reason: "too_late", WindowStart: at(3)}},
				}
			},
			want: func(t *testing.T) verdict {
				return verdict{Countries: []Country{{
					Pais: "ES", Batch: ms(t, "1", 1, 1), RealTime: ms(t, "1", 1, 1), Status: Match,
				}}, Unexplained: []string{}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in(t)
			in.DayStart, in.DayEnd = day0, day1
			r, err := Compare(in)
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			got := verdict{Countries: r.Countries, Unexplained: r.Unexplained}
			if diff := cmp.Diff(tt.want(t), got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if r.OK() != (len(got.Unexplained) == 0) {
				t.Errorf("OK() = %v with unexplained %v", r.OK(), got.Unexplained)
			}
		})
	}
}

func TestCompareHoursAndExplanations(t *testing.T) {
	p2 := Drop{PedidoID: "P-2", Reason: "too_late", WindowStart: at(8), ReceivedAt: at(12), Matched: true, Pais: "ES", Batch: ms(t, "50", 1, 2)}
	p3 := Drop{PedidoID: "P-3", Reason: "invalid: body is not an order", EventTime: at(9).Add(42 * time.Minute), Matched: true, Pais: "ES", Batch: ms(t, "39.9", 1, 3)}
	in := Input{
		DayStart: day0, DayEnd: day1,
		Batch: []Total{{Pais: "ES", Measures: ms(t, "179.8", 3, 6)}},
		Hours: []Hour{{WindowStart: at(9), WindowEnd: at(10), Pais: "ES", Measures: ms(t, "89.9", 1, 1), Timing: window.TimingLate, PaneIndex: 2}},
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
		{WindowStart: at(9), Pais: "ES", HasPane: true, RealTime: ms(t, "89.9", 1, 1), Timing: window.TimingLate, PaneIndex: 2, Invalid: 1},
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
	_, err := Compare(Input{DayStart: day0, DayEnd: day1, Batch: []Total{{Pais: "ES", Measures: big}, {Pais: "ES", Measures: big}}})
	if err == nil {
		t.Fatal("Compare of totals beyond INT64 succeeded, want an error")
	}
}
