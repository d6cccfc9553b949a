package stack

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/stream"
)

// TestPoisonCellDoesNotStopTheTick: one window's state document in
// Firestore is corrupted behind the production binary's back. The
// scheduler's ticks still answer 200 and report that window with its error
// (in the answer and as a failing_cell log field); another window gets its
// panes and expires; an order for the poisoned window that arrives
// meanwhile is accepted and parked, and the window is kept past its expiry.
// Once the document is repaired, the window emits the ON_TIME pane it owes,
// with every order, and expires.
func TestPoisonCellDoesNotStopTheTick(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock := func(minutes int) {
		t.Helper()
		setClock(t, s, storyStart.Add(time.Duration(minutes)*time.Minute))
	}
	publishAcked := func(id, pais, eventTime string) {
		t.Helper()
		body := fmt.Sprintf(`{"pedido_id":"%s","cliente_id":"C-1","pais":"%s","importe_total":"10.50","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"10.50"}]}`, id, pais)
		acked(ctx, t, s, publish(ctx, t, s, []byte(body), eventTime))
	}
	clock(5)
	publishAcked("P-POISON-ES", "ES", orderTime)
	publishAcked("P-POISON-FR", "FR", "2026-03-14T18:03:00+01:00")
	tickAt := func(minutes int) stream.AggregationTick {
		t.Helper()
		clock(minutes)
		res := fireTick(ctx, t, s) // 200 for the windows it could process
		i := slices.IndexFunc(res.Aggregations, func(a stream.AggregationTick) bool { return a.Aggregation == "ventas_hora_pais" })
		if i < 0 {
			t.Fatalf("tick answer %+v has no ventas_hora_pais", res)
		}
		a := res.Aggregations[i]
		t.Logf("%s, failing %v", stream.TickLine(s.Now().Format("15:04"), a, true), a.Failing)
		return a
	}
	tickAt(10) // EARLY panes: the window's state document exists in Firestore now

	store, err := fsstore.New(s.Firestore)
	if err != nil {
		t.Fatal(err)
	}
	// The window 17:00-18:00 UTC of both orders: one state document. Times
	// below are UTC, as the tick log lines print them.
	const (
		agg  = "aggregations/ventas_hora_pais"
		path = agg + "/state/20260314T170000Z_0"
	)
	original := getDocument(ctx, t, store, path)
	putDocument(ctx, t, store, path, []byte(`{"layout":3,"keys":"garbage"}`))

	wantFailing := func(at stream.AggregationTick) {
		t.Helper()
		if len(at.Failing) != 1 || at.Failing[0].Key != "" || at.Failing[0].Path != path || !strings.Contains(at.Failing[0].Error, "decode "+path) {
			t.Errorf("failing %+v; want the window %s with its decode error", at.Failing, path)
		}
	}
	// An order for the poisoned window (on time: parked by the fold) and
	// one for the next window (18:00-19:00), which goes on.
	clock(65)
	publishAcked("P-POISON-ES-2", "ES", "2026-03-14T18:50:00+01:00")
	publishAcked("P-POISON-DE", "DE", "2026-03-14T19:02:00+01:00")
	at := tickAt(70) // DE's EARLY pane; 17:00 failing
	wantFailing(at)
	at = tickAt(135) // W = 19:05 >= 19:00: DE's ON_TIME pane
	wantFailing(at)
	at = tickAt(195) // W = 20:05 >= 17:00's expiry (20:00): kept, as it fails
	wantFailing(at)
	if at.Expired != 0 {
		t.Errorf("expired %d keys at +195 min, want 0 (17:00 is failing; 18:00 expires at 21:00)", at.Expired)
	}
	logged := logEntries(t, s.Processes["AdvanceWatermark"].Output(), func(m map[string]any) bool {
		return m["failing_cell"] == path && m["error"] != nil && m["error"] != ""
	})
	if len(logged) == 0 {
		t.Errorf("no log line with failing_cell=%s and error: the log-based metric counts nothing", path)
	}

	// Repaired: the next tick folds the parked order, emits the ON_TIME
	// panes 17:00 owes and expires it; then 18:00 expires on time.
	putDocument(ctx, t, store, path, original)
	at = tickAt(200)
	if len(at.Failing) != 0 || at.Expired != 2 {
		t.Errorf("after the repair: failing %+v, expired %d; want none failing and ES and FR of 17:00 expired", at.Failing, at.Expired)
	}
	at = tickAt(255) // W = 21:05 >= 21:00: DE's window expires
	if at.Expired != 1 {
		t.Errorf("expired %d keys at +255 min, want 1 (DE)", at.Expired)
	}
	var got []string
	for _, p := range s.BigQuery.Rows("ventas_hora_pais_paneles") {
		got = append(got, fmt.Sprintf("%s #%s %s pedidos=%s", cell(p["pais"]), cell(p["pane_index"]), cell(p["timing"]), cell(p["pedidos"])))
	}
	sort.Strings(got)
	t.Logf("panes: %s", strings.Join(got, ", "))
	want := []string{
		"DE #0 EARLY pedidos=1", "DE #1 ON_TIME pedidos=1",
		"ES #0 EARLY pedidos=1", "ES #1 ON_TIME pedidos=2",
		"FR #0 EARLY pedidos=1", "FR #1 ON_TIME pedidos=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("panes in BigQuery (-want +got):\n%s", diff)
	}
	for _, coll := range []string{agg + "/state", agg + "/parked"} {
		if docs, err := store.List(ctx, coll); err != nil || len(docs) != 0 {
			t.Errorf("%s: %d documents left after every window expired, %v", coll, len(docs), err)
		}
	}
}

// getDocument returns the bytes of the document at path, which must exist.
func getDocument(ctx context.Context, t *testing.T, store docstore.Store, path string) []byte {
	t.Helper()
	var d docstore.Doc
	err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path)
		if err != nil {
			return err
		}
		d = docs[0]
		return nil
	})
	if err != nil || !d.Exists {
		t.Fatalf("read %s: exists %v, %v", path, d.Exists, err)
	}
	return d.Data
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
