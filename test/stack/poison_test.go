package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
)

// TestPoisonCellDoesNotStopTheTick: one (window, key)'s document in
// Firestore is corrupted behind the production binary's back. The
// scheduler's ticks still answer 200, report that cell with its error (in
// the answer and as a failing_cell log field), and the other windows get
// their ON_TIME panes and expire. Once the document is repaired, the cell
// emits the ON_TIME pane it owes, with its order, and expires.
func TestPoisonCellDoesNotStopTheTick(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.SetClock(storyStart.Add(5 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	fe := s.Frontends["AggregateOrders"]
	topic, err := s.ordersTopic()
	if err != nil {
		t.Fatal(err)
	}
	pub := s.PubSub.Publisher(topic)
	defer pub.Stop()
	for i, pais := range []string{"ES", "FR", "DE"} {
		body := fmt.Sprintf(`{"pedido_id":"P-POISON-%s","cliente_id":"C-1","pais":"%s","importe_total":"%d.50","lineas":[{"sku":"MOCH-40L-AZ","cantidad":%d,"precio_unitario":"%d.50"}]}`, pais, pais, 10*(i+1), i+1, 10*(i+1)/(i+1))
		id, err := pub.Publish(ctx, &pubsub.Message{
			Data:       []byte(body),
			Attributes: map[string]string{order.EventTimeAttribute: "2026-03-14T18:02:00+01:00"},
		}).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fe.Wait(ctx, waitTimeout, func(r Request) bool { m, _ := pushed(r.Body); return m == id && r.Acked() }); err != nil {
			t.Fatal(err)
		}
	}
	job, _ := s.Scheduler.JobFor("AdvanceWatermark")
	tickAt := func(minutes int) stream.AggregationTick {
		t.Helper()
		if err := s.SetClock(storyStart.Add(time.Duration(minutes) * time.Minute)); err != nil {
			t.Fatal(err)
		}
		c, err := s.Scheduler.Fire(ctx, job)
		if err != nil {
			t.Fatalf("tick at +%d min: %v; want 200 for the cells it could process", minutes, err)
		}
		var res stream.TickResult
		if err := json.Unmarshal(c.Body, &res); err != nil || len(res.Aggregations) == 0 || res.Aggregations[0].Aggregation != "ventas_hora_pais" {
			t.Fatalf("tick answer %s: %v", c.Body, err)
		}
		a := res.Aggregations[0]
		t.Logf("tick %s: HTTP %d, watermark %s, %d panes, %d expired, failing %v", s.Now().Format("15:04"), c.Status, hhmm(a.Watermark), len(a.Panes), a.Expired, a.Failing)
		return a
	}
	tickAt(10) // EARLY panes: the cells exist in Firestore now

	store, err := fsstore.New(s.Firestore)
	if err != nil {
		t.Fatal(err)
	}
	const coll = "aggregations/ventas_hora_pais/windows"
	path, original := cellDocument(ctx, t, store, coll, "ES")
	putDocument(ctx, t, store, path, []byte(`{"layout":1,"state":"garbage"}`))

	wantFailing := func(at stream.AggregationTick) {
		t.Helper()
		if len(at.Failing) != 1 || at.Failing[0].Key != "ES" || at.Failing[0].Path != path || !strings.Contains(at.Failing[0].Error, "decode "+path) {
			t.Errorf("failing cells %+v; want the ES cell %s with its decode error", at.Failing, path)
		}
	}
	at := tickAt(75) // W = 18:05 >= 18:00: ON_TIME for FR and DE
	wantFailing(at)
	at = tickAt(195) // W = 20:05 >= 18:00 + 2 h: FR and DE expire
	wantFailing(at)
	if at.Expired != 2 {
		t.Errorf("expired %d windows, want 2 (FR and DE; ES kept)", at.Expired)
	}
	logged := false
	for _, line := range strings.Split(s.Processes["AdvanceWatermark"].Output(), "\n") {
		var l struct {
			FailingCell string `json:"failing_cell"`
			Key         string `json:"key"`
			Error       string `json:"error"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.FailingCell == path && l.Key == "ES" && l.Error != "" {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no log line with failing_cell=%s, key and error: the log-based metric counts nothing", path)
	}

	// Repaired: the next tick emits the ON_TIME pane ES owes and expires it.
	putDocument(ctx, t, store, path, original)
	at = tickAt(200)
	if len(at.Failing) != 0 || at.Expired != 1 {
		t.Errorf("after the repair: failing %+v, expired %d; want none failing and ES expired", at.Failing, at.Expired)
	}
	var got []string
	for _, p := range s.BigQuery.Rows("ventas_hora_pais_paneles") {
		got = append(got, fmt.Sprintf("%s #%s %s pedidos=%s", cell(p["pais"]), cell(p["pane_index"]), cell(p["timing"]), cell(p["pedidos"])))
	}
	sort.Strings(got)
	t.Logf("panes: %s", strings.Join(got, ", "))
	want := []string{
		"DE #0 EARLY pedidos=1", "DE #1 ON_TIME pedidos=1",
		"ES #0 EARLY pedidos=1", "ES #1 ON_TIME pedidos=1",
		"FR #0 EARLY pedidos=1", "FR #1 ON_TIME pedidos=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("panes in BigQuery (-want +got):\n%s", diff)
	}
	if docs, err := store.List(ctx, coll); err != nil || len(docs) != 0 {
		t.Errorf("cells left after every window expired: %d, %v", len(docs), err)
	}
}

// cellDocument finds the document of key in coll and its bytes.
func cellDocument(ctx context.Context, t *testing.T, store docstore.Store, coll, key string) (string, []byte) {
	t.Helper()
	docs, err := store.List(ctx, coll)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		var k struct{ Key string }
		if json.Unmarshal(d.Data, &k) == nil && k.Key == key {
			return d.Path, d.Data
		}
	}
	t.Fatalf("no %s document in %s (%d documents)", key, coll, len(docs))
	return "", nil
}

// putDocument writes data at path through the store port, as a bad hand
// edit or another binary would.
func putDocument(ctx context.Context, t *testing.T, store docstore.Store, path string, data []byte) {
	t.Helper()
	err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(docstore.Doc{Path: path, Data: data})
	})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}
