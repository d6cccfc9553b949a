package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

const (
	testdata = "../../testdata"
	story    = testdata + "/pedidos/historia.jsonl"
	// dedupRecords holds an order's one dedup record for every aggregation
	// (see package stream).
	dedupRecords = "stream/dedup/orders"
	// handleTimeout bounds the wait for one message: a push takes ~0.1 s
	// and a redelivery ~1 s on the emulator.
	handleTimeout = 15 * time.Second
)

// storyFaults are the push failures the orders story meets (see tap). The
// final tables, equal to the embedded demo's, then show each order counted
// once.
var storyFaults = []struct {
	name     string
	pedidoID string
	fault    fault
	want     []string // the message's deliveries, up to its acknowledgement
}{
	{
		name:     "handled but the answer is lost: the redelivery of the same message finds the dedup record",
		pedidoID: "P-001002",
		fault:    loseAnswer,
		want: []string{
			"emulator got 503, function answered accepted",
			"emulator got 200, function answered duplicate",
		},
	},
	{
		name:     "refused before the function: the redelivery is the first handling",
		pedidoID: "P-001004",
		fault:    refuse,
		want: []string{
			"emulator got 503, function not called",
			"emulator got 200, function answered accepted",
		},
	},
}

// finalTables are the embedded demo's closing queries
// (internal/local/demo_orders.go), by the table each shows.
var finalTables = []struct{ table, sql string }{
	{"ventas_hora_pais_paneles", "SELECT window_start, pais, pane_index, timing, importe, pedidos, unidades, watermark, emitted_at FROM ventas_hora_pais_paneles ORDER BY window_start, pais, pane_index"},
	{"ventas_hora_pais", "SELECT window_start, window_end, pais, importe, pedidos, unidades, timing, pane_index FROM ventas_hora_pais ORDER BY window_start, pais"},
	// The view of the sliding aggregation (internal/aggregation/declarations), keyed by sku.
	{"ventas_sku_hora_movil", "SELECT window_start, window_end, sku, importe, pedidos, unidades, timing, pane_index FROM ventas_sku_hora_movil ORDER BY window_start, sku"},
	{"pedidos_descartados", "SELECT pedido_id, aggregation, reason, event_time, window_start, watermark, received_at FROM pedidos_descartados ORDER BY received_at, aggregation, window_start"},
}

// storyPlayed is set once TestDemoStories has started in this process.
var storyPlayed bool

// TestDemoStories plays the embedded demo's two stories through the real
// parts: files land on the fake GCS and reach IngestCSV with the Firestore
// ledger; orders are published to the Pub/Sub emulator, which pushes them to
// AggregateOrders, whose window state is in Firestore; the clock is virtual
// and ticks are called as Cloud Scheduler calls them. What a person sees
// must be what the embedded demo shows.
func TestDemoStories(t *testing.T) {
	s := need(t)
	if storyPlayed {
		t.Skip("the stories play once per process: their state stays in the server, which cannot be restarted (-count=1)")
	}
	storyPlayed = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := readGolden(t)

	for _, st := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"push subscription", func(t *testing.T) { s.checkSubscription(ctx, t) }},
		{"file drops", func(t *testing.T) { s.playFiles(ctx, t, g) }},
		{"orders", func(t *testing.T) { s.playOrders(ctx, t, g) }},
		{"final tables", func(t *testing.T) { s.checkTables(ctx, t, g) }},
	} {
		// Each part builds on the state the previous one left.
		if !t.Run(st.name, st.run) {
			t.FailNow()
		}
	}
}

// checkSubscription checks what the emulator holds: a push (not pull)
// subscription of pedidos-nuevos to AggregateOrders.
func (s *system) checkSubscription(ctx context.Context, t *testing.T) {
	sub, err := s.ps.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: s.sub})
	if err != nil {
		t.Fatal(err)
	}
	type summary struct{ Topic, PushEndpoint string }
	want := summary{Topic: "projects/" + s.project + "/topics/pedidos-nuevos", PushEndpoint: s.pushEndpoint()}
	got := summary{Topic: sub.GetTopic(), PushEndpoint: sub.GetPushConfig().GetPushEndpoint()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscription %s (-want +got):\n%s", s.sub, diff)
	}
	if !strings.HasSuffix(got.PushEndpoint, "/AggregateOrders") {
		t.Errorf("push endpoint %s is not AggregateOrders", got.PushEndpoint)
	}
}

// playFiles drops the demo files and compares the outcome, then checks that
// the ledger records are in Firestore.
func (s *system) playFiles(ctx context.Context, t *testing.T, g golden) {
	var out bytes.Buffer
	if err := s.srv.DemoFiles(ctx, &out, testdata); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(g.fileDrops(t), mask(out.String())); diff != "" {
		t.Errorf("file drops (-want +got):\n%s", diff)
	}

	files, err := local.DemoFiles(testdata)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, f[1]+" "+string(ledger.Done))
	}
	// The demo re-uploads the first file under another name: same content.
	want = append(want, strings.TrimSuffix(files[0][1], ".csv")+"-copia.csv "+string(ledger.Duplicate))
	sort.Strings(want)
	docs, err := s.store.List(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		var rec ledger.Record
		if err := json.Unmarshal(d.Data, &rec); err != nil {
			t.Fatalf("%s: %v", d.Path, err)
		}
		got = append(got, rec.Key.Object+" "+string(rec.State))
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ledger records in Firestore (-want +got):\n%s", diff)
	}
}

// playOrders publishes each order of the story to the topic at its arrival
// time and waits until the push is acknowledged before the next step, so
// that the clock never moves under a handling order; ticks are called at
// their times. Then it compares each step's outcome with the demo's and
// checks the injected failures were redelivered.
func (s *system) playOrders(ctx context.Context, t *testing.T, g golden) {
	steps, err := client.ReadStepsFile(story)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range storyFaults {
		s.tap.inject(f.pedidoID, f.fault)
	}
	pub := s.ps.Publisher(s.topic)
	defer pub.Stop()

	var outline []string
	firstID := map[string]string{} // pedido_id -> its first message
	attempts := map[string][]attempt{}
	for _, st := range steps {
		at := st.Arrival
		if !st.Tick.IsZero() {
			at = st.Tick
		}
		s.srv.Clock.Set(at)
		now := s.srv.Clock.Now().Format("15:04:05")
		if !st.Tick.IsZero() {
			res, err := client.Server{URL: s.srv.URL}.Tick(ctx)
			if err != nil {
				t.Fatalf("tick at %s: %v", now, err)
			}
			for _, a := range res.Aggregations {
				line := render.TickLine(now, a, len(res.Aggregations) > 1)
				t.Log(line)
				outline = append(outline, line)
			}
			continue
		}
		msg := &pubsub.Message{Data: st.Order, Attributes: map[string]string{}}
		if st.EventTime != "" {
			msg.Attributes[order.EventTimeAttribute] = st.EventTime
		}
		id, err := pub.Publish(ctx, msg).Get(ctx)
		if err != nil {
			t.Fatalf("publish at %s: %v", now, err)
		}
		atts, err := s.tap.waitHandled(ctx, id, handleTimeout)
		if err != nil {
			t.Fatalf("at %s: %v", now, err)
		}
		// The function's first answer is what the demo prints: a lost answer
		// does not change what handling did.
		first, ok := firstAnswer(atts)
		if !ok {
			t.Fatalf("message %s: no answer from the function in %v", id, atts)
		}
		res := first.Answer
		line := fmt.Sprintf("%s order %s: %s", now, res.PedidoID, fateText(res))
		t.Logf("%s (message %s, %d deliveries)", line, id, len(atts))
		outline = append(outline, line)
		aggs := local.Headlined(res.Aggregations)
		for _, o := range aggs[min(1, len(aggs)):] {
			outline = append(outline, fmt.Sprintf("%s order %s %s: %s", now, res.PedidoID, o.Aggregation, o.Fate))
		}
		attempts[res.PedidoID] = atts
		if _, seen := firstID[res.PedidoID]; !seen {
			firstID[res.PedidoID] = id
		}
		if res.Invalid == "" {
			s.checkDedupRecord(ctx, t, res.PedidoID, firstID[res.PedidoID])
		}
	}

	if diff := cmp.Diff(g.outline(t), outline); diff != "" {
		t.Errorf("what each step did (-want +got):\n%s", diff)
	}
	for _, f := range storyFaults {
		var got []string
		for _, a := range attempts[f.pedidoID] {
			got = append(got, a.String())
		}
		if diff := cmp.Diff(f.want, got); diff != "" {
			t.Errorf("%s: deliveries of %s's message (-want +got):\n%s", f.name, f.pedidoID, diff)
		}
	}
}

// firstAnswer is the first attempt the function answered 200.
func firstAnswer(atts []attempt) (attempt, bool) {
	for _, a := range atts {
		if a.Called && a.FnStatus == 200 {
			return a, true
		}
	}
	return attempt{}, false
}

// checkDedupRecord checks that the order's dedup record is in Firestore
// (stream/dedup/orders/<hash>_<pedido_id>, see package stream) and
// names the first message that carried it: a duplicate or a redelivery
// must not have replaced it.
func (s *system) checkDedupRecord(ctx context.Context, t *testing.T, pedidoID, messageID string) {
	t.Helper()
	docs, err := s.store.List(ctx, dedupRecords)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if !strings.HasSuffix(d.Path, "_"+docstore.ID(pedidoID)) {
			continue
		}
		var rec struct {
			MessageID string `json:"message_id"`
		}
		if err := json.Unmarshal(d.Data, &rec); err != nil {
			t.Fatalf("%s: %v", d.Path, err)
		}
		if rec.MessageID != messageID {
			t.Errorf("%s names message %s, want %s (its first delivery)", d.Path, rec.MessageID, messageID)
		}
		return
	}
	t.Errorf("no dedup record of %s in Firestore among %d", pedidoID, len(docs))
}

// checkTables compares the demo's closing tables.
func (s *system) checkTables(ctx context.Context, t *testing.T, g golden) {
	for _, q := range finalTables {
		var got bytes.Buffer
		if err := printTable(ctx, &got, s.srv.URL, q.sql); err != nil {
			t.Fatalf("%s: %v", q.table, err)
		}
		if diff := cmp.Diff(g.table(t, q.table), got.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", q.table, diff)
		}
	}
}

// printTable runs sql on the server as `alpipe query` does and prints its
// whole answer as the demo shows tables: render's "text" table, money with
// its scale.
func printTable(ctx context.Context, w io.Writer, url, sql string) error {
	var c warehouse.Collect
	var kinds []render.Kind
	_, err := client.Server{URL: url}.QueryTyped(ctx, sql, 0, func(names, types []string) warehouse.RowSink {
		c, kinds = warehouse.Collect{}, render.Kinds(names, types)
		return &c
	})
	if err != nil {
		return err
	}
	return render.Result(w, c.Result, kinds, "text")
}
