package streamtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// testDeadLetters checks the pedidos_descartados rows of invalid messages,
// undecodable requests and too-late orders, and that redeliveries add none.
func testDeadLetters(t *testing.T, en env) {
	spec := window.Defaults()
	r := newRig(t, en, spec)
	ctx := t.Context()
	now := at("18:30")
	msg := func(id, body string, attrs map[string]string) order.Delivery {
		return order.Delivery{Message: order.Message{MessageID: id, Data: []byte(body), Attributes: attrs}, Format: "push"}
	}
	evt := map[string]string{order.EventTimeAttribute: "2026-03-14T18:29:00+01:00"}
	huge := `{"pedido_id":"P-big","pais":"ES","importe_total":"1","cliente_id":"` + strings.Repeat("é", 3*stream.MaxRawBytes) + `","x":1}`

	tests := []struct {
		name       string
		d          order.Delivery
		wantReason string // prefix
		wantPedido string
		wantEvent  bool
	}{
		{"bad JSON", msg("m-json", `{"pedido_id": "P-1", "pais": `, evt), "invalid: body is not an order", "", true},
		{"missing momento_evento", msg("m-noevt", `{"pedido_id":"P-2","pais":"ES","importe_total":"1"}`, nil), "invalid: missing attribute momento_evento", "P-2", false},
		{"bad country", msg("m-pais", `{"pedido_id":"P-3","pais":"XX","importe_total":"1"}`, evt), "invalid: pais", "P-3", true},
		{"body of 3x the raw limit", msg("m-big", huge, evt), "invalid: body is not an order", "P-big", true},
		{"event time in year 9999", msg("m-9999", `{"pedido_id":"P-4","pais":"ES","importe_total":"1"}`,
			map[string]string{order.EventTimeAttribute: "9999-12-31T23:59:59Z"}), "invalid: momento_evento 9999-12-31T23:59:59Z is outside the years", "P-4", false},
		{"event time in year 0", msg("m-0000", `{"pedido_id":"P-5","pais":"ES","importe_total":"1"}`,
			map[string]string{order.EventTimeAttribute: "0000-01-01T00:00:00Z"}), "invalid: momento_evento", "P-5", false},
		{"event time far in the future", msg("m-2300", `{"pedido_id":"P-6","pais":"ES","importe_total":"1"}`,
			map[string]string{order.EventTimeAttribute: "2300-01-01T00:00:00Z"}),
			"invalid: momento_evento 2300-01-01T00:00:00Z is more than 24h0m0s ahead of processing time", "P-6", true},
		{"pedido_id too long", msg("m-longid", `{"pedido_id":"`+strings.Repeat("P", order.MaxPedidoIDBytes+1)+`","pais":"ES","importe_total":"1"}`, evt),
			"invalid: pedido_id longer than 256 bytes", strings.Repeat("P", order.MaxPedidoIDBytes+1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := discardCount(r.sink)
			res, err := r.p.Handle(ctx, tt.d, now)
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if !strings.HasPrefix(res.Invalid, tt.wantReason) || res.Duplicate || res.Fate() != stream.Invalid {
				t.Errorf("result %+v, want invalid %q", res, tt.wantReason)
			}
			d := newDiscard(t, r.sink, before)
			if d.ID != "invalid|"+tt.d.Message.MessageID || d.MessageID != tt.d.Message.MessageID ||
				!strings.HasPrefix(d.Reason, tt.wantReason) || d.PedidoID != tt.wantPedido ||
				d.Aggregation != "" || !d.ReceivedAt.Equal(now) || d.EventTime.IsZero() == tt.wantEvent ||
				!d.WindowStart.IsZero() || !d.Watermark.IsZero() {
				t.Errorf("row %+v", d)
			}
			if len(d.Raw) > 2*stream.MaxRawBytes+1024 || !strings.Contains(d.Raw, `pedido_id`) ||
				(tt.wantEvent && !strings.Contains(d.Raw, order.EventTimeAttribute)) {
				t.Errorf("raw %d bytes does not hold the body and attributes: %.300s", len(d.Raw), d.Raw)
			}

			mark := r.store.Writes()
			res, err = r.p.Handle(ctx, tt.d, now.Add(time.Minute))
			if err != nil || !res.Duplicate {
				t.Errorf("redelivery: %+v, %v; want a duplicate", res, err)
			}
			if n := discardCount(r.sink); n != before+1 || len(r.store.WritesSince(mark)) > 0 {
				t.Errorf("redelivery wrote %v and left %d rows", r.store.WritesSince(mark), n)
			}
		})
	}

	t.Run("event times far from now are orders", func(t *testing.T) {
		for i, ts := range []string{"1969-12-31T23:59:59.999Z", "1900-01-01T00:00:00Z", now.Add(24 * time.Hour).Format(time.RFC3339Nano)} {
			d := msg(fmt.Sprintf("m-far-%d", i), fmt.Sprintf(`{"pedido_id":"P-far-%d","pais":"ES","importe_total":"1"}`, i),
				map[string]string{order.EventTimeAttribute: ts})
			res, err := r.p.Handle(ctx, d, now)
			if err != nil || res.Fate() != stream.Accepted {
				t.Errorf("event time %s: %+v, %v; want accepted", ts, res, err)
			}
		}
	})

	t.Run("oversized identities are cut to fit a document", func(t *testing.T) {
		before := discardCount(r.sink)
		id := strings.Repeat("m", 2<<20)
		pedido := strings.Repeat("P", 2<<20)
		d := msg(id, `{"pedido_id":"`+pedido+`","pais":"ES","importe_total":"1"}`, evt)
		for range 2 {
			res, err := r.p.Handle(ctx, d, now)
			if err != nil || res.Fate() != stream.Invalid {
				t.Fatalf("Handle: %v, %v; want the message dead-lettered", res.Invalid, err)
			}
		}
		row := newDiscard(t, r.sink, before)
		if !strings.HasPrefix(row.ID, "invalid|sha256:") || len(row.ID) > 100 || len(row.MessageID) != 1024 || len(row.PedidoID) != 1024 ||
			row.Reason != "invalid: pedido_id longer than 256 bytes" {
			t.Errorf("row id %.80s, message id %d bytes, pedido_id %d bytes, reason %q", row.ID, len(row.MessageID), len(row.PedidoID), row.Reason)
		}
	})

	t.Run("undecodable request", func(t *testing.T) {
		before := discardCount(r.sink)
		body := []byte("POST garbage \xff\xfe")
		for range 2 {
			if err := r.p.HandleUndecodable(ctx, body, "not a push body: invalid character", now); err != nil {
				t.Fatalf("HandleUndecodable: %v", err)
			}
		}
		d := newDiscard(t, r.sink, before)
		if !strings.HasPrefix(d.ID, "undecodable|") || d.Reason != "invalid: not a push body: invalid character" ||
			d.MessageID != "" || d.PedidoID != "" || d.Raw == "" {
			t.Errorf("row %+v", d)
		}
	})

	t.Run("too-late order", func(t *testing.T) {
		// One order, the source idle until W passes 19:00 + 2 h, then a
		// redelivery (a duplicate) and a new order for 18:00 (too late).
		s := &windowtest.Story{}
		first := s.Deliver("18:30", "P-10", "ES", "18:25", "10", 1)
		lateOne := s.Deliver("21:20", "P-11", "FR", "18:59:59", "12.5", 3)
		lateOne.MessageID = "m-late"
		if errs := r.play(t, nil, first, tick("21:15")); errs[0] != nil {
			t.Fatal(errs[0])
		}
		for range 2 {
			res, err := r.p.Handle(ctx, Delivery(lateOne), lateOne.Now)
			if err != nil {
				t.Fatal(err)
			}
			if f := res.Fate(); f != stream.TooLate && f != stream.Duplicate {
				t.Errorf("fate %s", f)
			}
		}
		ds, err := r.sink.Discards()
		if err != nil {
			t.Fatal(err)
		}
		var got []Discard
		for _, d := range ds {
			if d.Reason == stream.ReasonTooLate {
				d.Raw = ""
				got = append(got, d)
			}
		}
		want := []Discard{{
			ID: "too_late|ventas_hora_pais|P-11", PedidoID: "P-11", Aggregation: "ventas_hora_pais", Reason: "too_late",
			EventTime: at("18:59:59"), WindowStart: at("18:00"), Watermark: at("21:05"), ReceivedAt: at("21:20"), MessageID: "m-late",
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("too-late rows (-want +got):\n%s", diff)
		}
	})
	r.clean()
}

// newDiscard returns the one pedidos_descartados row appended after the
// first before.
func newDiscard(t *testing.T, s *Sink, before int) Discard {
	t.Helper()
	ds, err := s.Discards()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != before+1 {
		t.Fatalf("%d rows, want %d", len(ds), before+1)
	}
	return ds[before]
}
