package window_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

func order(id, key, eventTime, importe string, unidades int64) window.Order {
	return window.Order{ID: id, Key: key, EventTime: clk(eventTime),
		Measures: window.Measures{Importe: dec(importe), Pedidos: 1, Unidades: unidades}}
}

// part is a Partial with times read by clk.
func part(m window.Measures, onTime bool, epoch int64, pending, maxEvent, last string) window.Partial {
	return window.Partial{Measures: m, OnTime: onTime, Epoch: epoch, PendingSince: clk(pending),
		MaxEventTime: clk(maxEvent), LastAccepted: clk(last)}
}

func TestAccept(t *testing.T) {
	// The window is 17:00-18:00Z (18:00-19:00 in Spain), L = 2 h; sliding
	// windows are 1 h every 15 min.
	const h = time.Hour
	o := order("P-1", "ES", "2026-03-14T17:42:00Z", "179.80", 2)
	in := func(start string, size time.Duration) window.Order {
		o := o
		o.Window = window.Window{Start: clk(start), End: clk(start).Add(size)}
		return o
	}
	pending := part(ms("10", 1, 1), true, 2, "17:45", "17:44", "17:45")
	m1, m2 := ms("179.8", 1, 2), ms("189.8", 2, 3)
	at1955 := func(onTime bool) window.Partial {
		return part(m1, onTime, 0, "19:55", "17:42", "19:55")
	}
	tests := []struct {
		name    string
		sliding bool
		sh      window.Partial
		st      window.PaneState
		o       window.Order
		wm, now string
		want    window.Partial
		wantErr string
	}{
		{name: "first order of a window, no watermark yet", o: o, now: "17:51",
			want: part(m1, true, 0, "17:51", "17:42", "17:51")},
		{name: "a second un-emitted change keeps the first one's time", sh: pending, st: state(2, window.Measures{}, ""), o: o,
			wm: "17:30", now: "17:51", want: part(m2, true, 2, "17:45", "17:44", "17:51")},
		{name: "after a pane covered the shard, a new run of changes starts", sh: pending, st: state(3, window.Measures{}, ""), o: o,
			wm: "17:30", now: "17:51", want: part(m2, true, 3, "17:51", "17:44", "17:51")},
		{name: "an instance with a slower clock moves the pending time back", sh: pending, st: state(2, window.Measures{}, ""), o: o,
			wm: "17:30", now: "17:44:30", want: part(m2, true, 2, "17:44:30", "17:44", "17:45")},
		{name: "a late order does not mark the window on time", o: o, st: state(0, window.Measures{}, window.OnTimeNever),
			wm: "19:30", now: "19:41", want: part(m1, false, 0, "19:41", "17:42", "19:41")},
		{name: "a late order keeps the flag of earlier on-time orders", sh: pending, o: o, st: state(3, window.Measures{}, window.OnTimeDone),
			wm: "19:30", now: "19:41", want: part(m2, true, 3, "19:41", "17:44", "19:41")},
		{name: "a future-dated order raises the max event time", o: order("P-2", "ES", "2026-03-14T17:59:00Z", "1", 1),
			wm: "16:30", now: "17:20", want: part(ms("1", 1, 1), true, 0, "17:20", "17:59", "17:20")},
		{name: "too late is refused", sh: pending, o: o, wm: "20:00", now: "20:10", want: pending,
			wantErr: "accept order P-1: window 2026-03-14T17:00:00Z is too late at watermark 2026-03-14T20:00:00Z"},
		{name: "overflow is refused", o: o, now: "17:51",
			sh:      window.Partial{Measures: window.Measures{Importe: numeric.Max()}},
			want:    window.Partial{Measures: window.Measures{Importe: numeric.Max()}},
			wantErr: "accept order P-1: importe"},

		// Order.Window names one of the windows of the event time.
		{name: "fixed, its window given", o: in("2026-03-14T17:00:00Z", h), wm: "17:30", now: "19:55",
			want: at1955(true)},
		{name: "sliding, the oldest window", sliding: true, o: in("2026-03-14T16:45:00Z", h),
			wm: "17:30", now: "19:55", want: at1955(true)},
		{name: "sliding, a window given in another zone", sliding: true,
			o: in("2026-03-14T18:00:00+01:00", h), wm: "17:30", now: "19:55", want: at1955(true)},
		{name: "sliding, zero window is the newest", sliding: true, o: o, wm: "18:15", now: "19:55",
			want: at1955(true)},
		{name: "sliding, a newer window is on time while an older one is late", sliding: true,
			o: in("2026-03-14T17:30:00Z", h), wm: "18:00", now: "19:55", want: at1955(true)},
		{name: "sliding, the oldest window is late", sliding: true, o: in("2026-03-14T16:45:00Z", h),
			wm: "18:00", now: "19:55", want: at1955(false)},
		{name: "sliding, the oldest window is too late while the newest counts", sliding: true,
			o: in("2026-03-14T16:45:00Z", h), wm: "19:45", now: "19:55",
			wantErr: "accept order P-1: window 2026-03-14T16:45:00Z is too late at watermark " +
				"2026-03-14T19:45:00Z"},
		{name: "sliding, the newest window at the same watermark is late but counts", sliding: true,
			o: in("2026-03-14T17:30:00Z", h), wm: "19:45", now: "19:55", want: at1955(false)},
		{name: "a window not holding the event time is refused", sliding: true,
			o: in("2026-03-14T17:45:00Z", h), wm: "17:30", now: "19:55",
			wantErr: "accept order P-1: window [2026-03-14T17:45:00Z, 2026-03-14T18:45:00Z) " +
				"is not a window of ventas_hora_pais event time 2026-03-14T17:42:00Z"},
		{name: "a window ending before the event time is refused", sliding: true,
			o: in("2026-03-14T16:30:00Z", h), wm: "17:30", now: "19:55", wantErr: "is not a window of"},
		{name: "a window with a sub-second start is refused", sliding: true,
			o: in("2026-03-14T17:30:00.5Z", h), wm: "17:30", now: "19:55", wantErr: "is not a window of"},
		{name: "a window off the period grid is refused", sliding: true, o: in("2026-03-14T17:05:00Z", h),
			wm: "17:30", now: "19:55", wantErr: "is not a window of"},
		{name: "a sliding window under a fixed spec is refused", o: in("2026-03-14T17:30:00Z", h),
			wm: "17:30", now: "19:55", wantErr: "is not a window of"},
		{name: "a window of the wrong size is refused", sliding: true,
			o: in("2026-03-14T17:30:00Z", 15*time.Minute), wm: "17:30", now: "19:55", wantErr: "is not a window of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := window.Defaults()
			if tt.sliding {
				s.Period = 15 * time.Minute
			}
			got, err := s.Accept(tt.sh, tt.st, tt.o, clk(tt.wm), clk(tt.now))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Accept: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Accept error = %v, want %q", err, tt.wantErr)
			}
			// A refused order leaves the partial sum as it was.
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Accept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCombine(t *testing.T) {
	tests := []struct {
		name    string
		st      window.PaneState
		shards  []window.Partial
		want    window.Partial
		wantErr error
	}{
		{name: "no shards", want: window.Partial{}},
		{name: "empty shards", shards: make([]window.Partial, 8), want: window.Partial{}},
		{name: "sums, earliest pending, any on time, maxima", st: window.PaneState{NextIndex: 1},
			shards: []window.Partial{
				part(ms("1.5", 1, 2), false, 1, "17:50", "17:40", "17:50"),
				{},
				part(ms("2.25", 2, 1), true, 1, "17:45", "17:44", "17:49"),
			},
			want: window.Partial{Measures: ms("3.75", 3, 3), Epoch: 1, PendingSince: clk("17:45"), OnTime: true,
				MaxEventTime: clk("17:44"), LastAccepted: clk("17:50")}},
		{name: "changes of an earlier epoch were emitted", st: state(2, ms("3.75", 3, 3), ""),
			shards: []window.Partial{
				part(ms("1.5", 1, 2), false, 1, "17:45", "17:40", "17:45"),
				part(ms("2.25", 2, 1), false, 0, "17:05", "17:04", "17:05"),
			},
			want: window.Partial{Measures: ms("3.75", 3, 3), Epoch: 2, MaxEventTime: clk("17:40"), LastAccepted: clk("17:45")}},
		{name: "overflow", shards: []window.Partial{{Measures: window.Measures{Pedidos: math.MaxInt64}}, {Measures: window.Measures{Pedidos: 1}}},
			wantErr: window.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := window.Combine(tt.st, tt.shards)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Combine error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Combine (-want +got):\n%s", diff)
			}
		})
	}
}

var dec = windowtest.Dec

func ms(importe string, pedidos, unidades int64) window.Measures {
	return window.Measures{Importe: dec(importe), Pedidos: pedidos, Unidades: unidades}
}

func TestOrderMeasures(t *testing.T) {
	tests := []struct {
		name       string
		importe    string
		quantities []int64
		want       window.Measures
		wantErr    error
	}{
		{name: "seed order", importe: "179.80", quantities: []int64{2}, want: ms("179.8", 1, 2)},
		{name: "several lines", importe: "0.01", quantities: []int64{1, 3, 5}, want: ms("0.01", 1, 9)},
		{name: "no lines", importe: "10", want: ms("10", 1, 0)},
		{name: "quantities overflow", importe: "1", quantities: []int64{math.MaxInt64, 1}, wantErr: window.ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := window.OrderMeasures(dec(tt.importe), tt.quantities...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMeasuresAddSub(t *testing.T) {
	big := window.Measures{Importe: numeric.Max(), Pedidos: math.MaxInt64, Unidades: math.MaxInt64}
	tests := []struct {
		name   string
		a, b   window.Measures
		add    window.Measures
		sub    window.Measures
		addErr string
		subErr string
	}{
		{name: "exact decimals", a: ms("89.90", 1, 2), b: ms("0.10", 1, 1), add: ms("90", 2, 3), sub: ms("89.8", 0, 1)},
		{name: "zero", a: ms("0", 0, 0), b: ms("0", 0, 0), add: ms("0", 0, 0), sub: ms("0", 0, 0)},
		{name: "sub below zero is allowed", a: ms("1", 1, 1), b: ms("2", 2, 2), add: ms("3", 3, 3), sub: ms("-1", -1, -1)},
		{name: "importe overflows", a: window.Measures{Importe: numeric.Max()}, b: ms("0.000000001", 0, 0),
			sub:    ms("99999999999999999999999999999.999999998", 0, 0),
			addErr: "importe 99999999999999999999999999999.999999999 + 0.000000001: measure out of range: outside NUMERIC's range"},
		{name: "importe underflows on sub", a: window.Measures{Importe: numeric.Min()}, b: ms("0.000000001", 0, 0),
			add:    ms("-99999999999999999999999999999.999999998", 0, 0),
			subErr: "importe -99999999999999999999999999999.999999999 - 0.000000001: measure out of range: outside NUMERIC's range"},
		{name: "importe past the old int64 range", a: ms("9000000000", 1, 0), b: ms("9000000000", 1, 0),
			add: ms("18000000000", 2, 0), sub: ms("0", 0, 0)},
		{name: "pedidos overflow", a: window.Measures{Pedidos: math.MaxInt64}, b: ms("0", 1, 0),
			sub: window.Measures{Pedidos: math.MaxInt64 - 1}, addErr: "pedidos 9223372036854775807 + 1: measure out of range"},
		{name: "unidades overflow", a: window.Measures{Unidades: math.MaxInt64}, b: ms("0", 0, 1),
			sub: window.Measures{Unidades: math.MaxInt64 - 1}, addErr: "unidades 9223372036854775807 + 1: measure out of range"},
		{name: "sub of the minimum cannot negate", a: ms("0", 0, 0), b: window.Measures{Pedidos: math.MinInt64},
			add: window.Measures{Pedidos: math.MinInt64}, subErr: "pedidos 0 - -9223372036854775808: measure out of range"},
		{name: "pedidos underflow on sub", a: window.Measures{Pedidos: -2}, b: big,
			addErr: "", add: window.Measures{Importe: numeric.Max(), Pedidos: math.MaxInt64 - 2, Unidades: math.MaxInt64},
			subErr: "pedidos -2 - 9223372036854775807: measure out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, op := range []struct {
				name, wantErr string
				f             func(window.Measures, window.Measures) (window.Measures, error)
				want          window.Measures
			}{{"Add", tt.addErr, window.Measures.Add, tt.add}, {"Sub", tt.subErr, window.Measures.Sub, tt.sub}} {
				got, err := op.f(tt.a, tt.b)
				switch {
				case op.wantErr == "" && err != nil:
					t.Errorf("%s: unexpected error %v", op.name, err)
				case op.wantErr != "" && (!errors.Is(err, window.ErrOverflow) || !strings.Contains(err.Error(), op.wantErr)):
					t.Errorf("%s: error %v, want an ErrOverflow containing %q", op.name, err, op.wantErr)
				case err == nil:
					if diff := cmp.Diff(op.want, got); diff != "" {
						t.Errorf("%s (-want +got):\n%s", op.name, diff)
					}
				}
			}
		})
	}
}

// TestStoredJSON pins the documents a processor stores: the shape is a
// contract with data already at rest, so a change here needs a migration.
func TestStoredJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{name: "empty shard", v: window.Partial{},
			want: `{"measures":{"importe":"0","pedidos":0,"unidades":0},"epoch":0}`},
		{name: "shard", v: window.Partial{Measures: ms("179.80", 1, 2), OnTime: true, Epoch: 2,
			PendingSince: clk("17:51"), MaxEventTime: clk("17:42:00.5"), LastAccepted: clk("17:51")},
			want: `{"measures":{"importe":"179.8","pedidos":1,"unidades":2},"on_time":true,"epoch":2,` +
				`"pending_since":"2026-03-14T17:51:00Z","max_event_time":"2026-03-14T17:42:00.5Z","last_accepted":"2026-03-14T17:51:00Z"}`},
		{name: "new pane state", v: window.PaneState{},
			want: `{"next_index":0,"emitted":{"importe":"0","pedidos":0,"unidades":0}}`},
		{name: "pane state", v: window.PaneState{NextIndex: 3, Emitted: ms("269.7", 2, 3), OnTime: window.OnTimeDone},
			want: `{"next_index":3,"emitted":{"importe":"269.7","pedidos":2,"unidades":3},"on_time":"DONE"}`},
		{name: "no watermark yet", v: window.WatermarkState{}, want: `{}`},
		{name: "watermark", v: window.WatermarkState{Watermark: clk("2026-03-14T17:32:00Z"),
			MaxEventTime: clk("2026-03-14T17:42:00Z"), LastAccepted: clk("2026-03-14T17:51:00Z")},
			want: `{"watermark":"2026-03-14T17:32:00Z","max_event_time":"2026-03-14T17:42:00Z","last_accepted":"2026-03-14T17:51:00Z"}`},
		{name: "pane", v: *pane(2, window.TimingLate, window.Accumulating, total2, "2026-03-14T19:30:00Z", "2026-03-14T19:41:00Z"),
			want: `{"aggregation":"ventas_hora_pais","key":"ES","window_start":"2026-03-14T17:00:00Z","window_end":"2026-03-14T18:00:00Z",` +
				`"pane_index":2,"timing":"LATE","accumulation":"ACCUMULATING","measures":{"importe":"269.7","pedidos":2,"unidades":3},` +
				`"watermark":"2026-03-14T19:30:00Z","emitted_at":"2026-03-14T19:41:00Z"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			back := reflect.New(reflect.TypeOf(tt.v))
			if err := json.Unmarshal(b, back.Interface()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.v, back.Elem().Interface()); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
