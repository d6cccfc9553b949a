package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/stack"
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

// storyFaults are the push failures the orders story meets at the front
// end (stack.Frontend). The final tables, equal to the embedded demo's, then
// show each order counted once.
var storyFaults = []struct {
	name     string
	pedidoID string
	fault    stack.Fault
	want     []string // the message's deliveries, up to its acknowledgement
}{
	{
		name:     "handled but the answer is lost: the redelivery of the same message finds the dedup record",
		pedidoID: "P-001002",
		fault:    stack.LoseAnswer,
		want: []string{
			"emulator got 503, function answered accepted",
			"emulator got 200, function answered duplicate",
		},
	},
	{
		name:     "refused before the function: the redelivery is the first handling",
		pedidoID: "P-001004",
		fault:    stack.Refuse,
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

// TestDemoStories plays the embedded demo's two stories through the real
// parts: files land on the fake GCS and reach IngestCSV with the Firestore
// ledger; orders are published to the Pub/Sub emulator, which pushes them to
// AggregateOrders, whose window state is in Firestore; the clock is virtual
// and ticks are called as Cloud Scheduler calls them. What a person sees
// must be what the embedded demo shows.
func TestDemoStories(t *testing.T) {
	s := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := stack.ReadGolden(t)

	for _, st := range []struct {
		name string
		run  func(t *testing.T)
	}{
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

// playFiles drops the demo files and compares the outcome, then checks that
// the ledger records are in Firestore.
func (s *system) playFiles(ctx context.Context, t *testing.T, g stack.Golden) {
	var out bytes.Buffer
	if err := s.srv.DemoFiles(ctx, &out, testdata); err != nil {
		t.Fatal(err)
	}
	// What local.Server.DemoFiles prints is everything before the orders story.
	fileDrops, _, ok := strings.Cut(g.Text, "\n== Orders in real time")
	if !ok {
		t.Fatalf("%s has no orders section", stack.GoldenPath)
	}
	if diff := cmp.Diff(fileDrops, stack.Mask(out.String())); diff != "" {
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
func (s *system) playOrders(ctx context.Context, t *testing.T, g stack.Golden) {
	steps, err := client.ReadStepsFile(story)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range storyFaults {
		s.front.Inject(func(body []byte) bool { _, p := stack.Pushed(body); return p == f.pedidoID }, f.fault, 1)
	}
	pub := s.ps.Publisher(s.topic)
	defer pub.Stop()

	var outline []string
	firstID := map[string]string{} // pedido_id -> its first message
	deliveries := map[string][]string{}
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
				line := stream.TickLine(now, a, len(res.Aggregations) > 1)
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
		res, dels := s.delivered(ctx, t, id)
		line := fmt.Sprintf("%s order %s: %s", now, res.PedidoID, fateText(res))
		t.Logf("%s (message %s, %d deliveries)", line, id, len(dels))
		outline = append(outline, line)
		aggs := local.Headlined(res.Aggregations)
		for _, o := range aggs[min(1, len(aggs)):] {
			outline = append(outline, fmt.Sprintf("%s order %s %s: %s", now, res.PedidoID, o.Aggregation, o.Fate))
		}
		deliveries[res.PedidoID] = dels
		if _, seen := firstID[res.PedidoID]; !seen {
			firstID[res.PedidoID] = id
		}
		if res.Invalid == "" {
			s.checkDedupRecord(ctx, t, res.PedidoID, firstID[res.PedidoID])
		}
	}

	if diff := cmp.Diff(g.Outline(t), outline); diff != "" {
		t.Errorf("what each step did (-want +got):\n%s", diff)
	}
	for _, f := range storyFaults {
		if diff := cmp.Diff(f.want, deliveries[f.pedidoID]); diff != "" {
			t.Errorf("%s: deliveries of %s's message (-want +got):\n%s", f.name, f.pedidoID, diff)
		}
	}
}

// delivered waits until the front end acknowledged message id to the
// emulator, and returns the function's first 200 answer (what the demo
// prints: a lost answer does not change what handling did) and the
// message's deliveries up to the acknowledged one, as the assertions compare
// them. Later ones (a redelivery Pub/Sub is allowed to make anyway) are
// left out, so that what the test compares does not depend on timing.
func (s *system) delivered(ctx context.Context, t *testing.T, id string) (stream.Result, []string) {
	t.Helper()
	isID := func(r stack.Request) bool { m, _ := stack.Pushed(r.Body); return m == id }
	if _, err := s.front.Wait(ctx, handleTimeout, func(r stack.Request) bool { return isID(r) && r.Acked() }); err != nil {
		t.Fatal(err)
	}
	var first *stream.Result
	var dels []string
	for _, r := range slices.DeleteFunc(s.front.Requests(), func(r stack.Request) bool { return !isID(r) }) {
		fn := "not called"
		if r.Called {
			fn = fmt.Sprintf("answered HTTP %d", r.FnStatus)
		}
		if r.Called && r.FnStatus == http.StatusOK {
			var res stream.Result
			if err := json.Unmarshal(r.Answer, &res); err != nil {
				t.Fatalf("message %s: %v: %s", id, err, r.Answer)
			}
			fn = "answered " + fateText(res)
			if first == nil {
				first = &res
			}
		}
		dels = append(dels, fmt.Sprintf("emulator got %d, function %s", r.Status, fn))
		if r.Acked() {
			break
		}
	}
	if first == nil {
		t.Fatalf("message %s: no answer from the function in %v", id, dels)
	}
	return *first, dels
}

// fateText is how the demo prints what handling did with an order.
func fateText(r stream.Result) string {
	if r.Invalid != "" {
		return r.Invalid
	}
	return string(r.Fate())
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
func (s *system) checkTables(ctx context.Context, t *testing.T, g stack.Golden) {
	for _, q := range finalTables {
		var got bytes.Buffer
		if err := printTable(ctx, &got, s.srv.URL, q.sql); err != nil {
			t.Fatalf("%s: %v", q.table, err)
		}
		if diff := cmp.Diff(g.Section(t, "("+q.table+")"), got.String()); diff != "" {
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
