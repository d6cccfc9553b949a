package stack

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/order"
)

// twoSKUOrder is one order with lines of two SKUs (one of them in two
// lines, one written in lower case), made at 17:02 UTC.
const twoSKUOrder = `{"pedido_id":"P-DOS","cliente_id":"C-2","pais":"ES","importe_total":"204.75","lineas":[` +
	`{"sku":"MOCH-40L-AZ","cantidad":2,"precio_unitario":"89.90"},` +
	`{"sku":"gorro-lana","cantidad":1,"precio_unitario":"12.50"},` +
	`{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"12.45"}]}`

// TestRedeliveryStormCountsOnceInBothAggregations: the production binary
// runs both shipped aggregations. An order with lines of two SKUs arrives
// in several messages at once (the web app published it five times) and
// one of them is delivered three times (its answers lost after handling).
// It yields panes in both panes tables, each counting it once: in its
// country's hour, and per SKU in each of the four sliding windows of its
// event time, each with the amounts of that SKU's lines.
func TestRedeliveryStormCountsOnceInBothAggregations(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	setClock(t, s, storyStart.Add(5*time.Minute))
	fe := s.Frontends["AggregateOrders"]
	const copies, lost = 5, 2
	// The answers to the deliveries of the first copy pushed are lost
	// twice. The fault is in place before anything is published: the first
	// delivery may come before Publish returns.
	var firstMu sync.Mutex
	first := ""
	fe.Inject(func(b []byte) bool {
		m, p := Pushed(b)
		if p != "P-DOS" {
			return false
		}
		firstMu.Lock()
		defer firstMu.Unlock()
		if first == "" {
			first = m
		}
		return m == first
	}, LoseAnswer, lost)
	topic, err := s.ordersTopic()
	if err != nil {
		t.Fatal(err)
	}
	pub := s.PubSub.Publisher(topic)
	defer pub.Stop()
	var results []*pubsub.PublishResult
	for range copies { // at once
		results = append(results, pub.Publish(ctx, &pubsub.Message{
			Data: []byte(twoSKUOrder), Attributes: map[string]string{order.EventTimeAttribute: orderTime},
		}))
	}
	for _, r := range results {
		id, err := r.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		acked(ctx, t, s, id)
	}
	handled := 0
	for _, r := range fe.Requests() {
		if _, p := Pushed(r.Body); p == "P-DOS" && r.Called {
			handled++
		}
	}
	if handled < copies+lost {
		t.Errorf("the function handled the order %d times, want at least %d (every copy and every redelivery)", handled, copies+lost)
	}

	// W = 18:05 (idle source): every window of 17:02 has closed.
	setClock(t, s, storyStart.Add(75*time.Minute))
	fireTick(ctx, t, s)

	latest := func(table, key string) []string {
		last := map[string]map[string]any{}
		for _, p := range s.BigQuery.Rows(table) {
			k := cell(p["window_start"]) + " " + cell(p[key])
			if cur, ok := last[k]; !ok || cell(cur["pane_index"]) < cell(p["pane_index"]) {
				last[k] = p
			}
			if got := cell(p["pedidos"]); got != "1" {
				t.Errorf("%s: pane %v holds %s orders, want 1 (the order once)", table, p, got)
			}
		}
		var out []string
		for k, p := range last {
			out = append(out, fmt.Sprintf("%s %s importe=%s unidades=%s", k, cell(p["timing"]), cell(p["importe"]), cell(p["unidades"])))
		}
		sort.Strings(out)
		return out
	}
	if diff := cmp.Diff([]string{
		"2026-03-14T17:00:00Z ES ON_TIME importe=204.75 unidades=4",
	}, latest("ventas_hora_pais_paneles", "pais")); diff != "" {
		t.Errorf("ventas_hora_pais (-want +got):\n%s", diff)
	}
	var want []string
	for _, start := range []string{"16:15", "16:30", "16:45", "17:00"} {
		want = append(want,
			"2026-03-14T"+start+":00Z GORRO-LANA ON_TIME importe=12.50 unidades=1",
			"2026-03-14T"+start+":00Z MOCH-40L-AZ ON_TIME importe=192.25 unidades=3")
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, latest("ventas_sku_hora_movil_paneles", "sku")); diff != "" {
		t.Errorf("ventas_sku_hora_movil (-want +got):\n%s", diff)
	}
}
