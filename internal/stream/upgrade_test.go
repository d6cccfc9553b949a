package stream_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
	"github.com/alpinashop/alpipe/internal/window"
)

// skuSpec is the shipped ventas_sku_hora_movil: sliding windows of an hour
// every 15 minutes, keyed by the line's SKU, the defaults otherwise.
func skuSpec() window.Spec {
	s := window.Defaults()
	s.Name, s.KeyField, s.Period = "ventas_sku_hora_movil", stream.KeySKU, 15*time.Minute
	return s
}

type fixtureDoc struct {
	Path     string          `json:"path"`
	Data     json.RawMessage `json:"data"`
	ExpireAt time.Time       `json:"expire_at,omitzero"`
}

// loadFixture writes the documents of a dump into st.
func loadFixture(t *testing.T, st docstore.Store, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var docs []fixtureDoc
	if err := json.Unmarshal(b, &docs); err != nil {
		t.Fatal(err)
	}
	err = st.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
		for _, d := range docs {
			if err := tx.Set(docstore.Doc{Path: d.Path, Data: d.Data, ExpireAt: d.ExpireAt}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func upgradeDelivery(id, pais, importe string, event time.Time) order.Delivery {
	return order.Delivery{Format: "push", Message: order.Message{MessageID: "m-" + id,
		Data:       []byte(`{"pedido_id":"` + id + `","pais":"` + pais + `","importe_total":"` + importe + `","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"` + importe + `"}]}`),
		Attributes: map[string]string{order.EventTimeAttribute: event.Format(time.RFC3339Nano)}}}
}

// TestUpgradeFromLayout1 starts from the state the previous version
// (commit 81dffb3, state layout 1, a dedup record per order and
// aggregation) left mid-window — testdata/upgrade/layout1.json, made by
// testdata/upgrade/generate_test.go.txt: ES and FR had their EARLY panes,
// an ES order waited in a delta, an FR order was dropped as too late. This
// version, with both shipped aggregations, must see every order the
// previous one handled as a duplicate (in both aggregations), count a new
// order once in each, and emit ON_TIME panes that continue the pane
// indexes with every order in them.
func TestUpgradeFromLayout1(t *testing.T) {
	ctx := context.Background()
	st := streamtest.NewRecorder(newBoltStore(t))
	loadFixture(t, st, "testdata/upgrade/layout1.json")
	sink := streamtest.NewSink()
	hora, sku := window.Defaults(), skuSpec()
	p, err := stream.New(st, sink, []window.Spec{hora, sku}, streamtest.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	pushes := []stream.Push{
		{Delivery: upgradeDelivery("P-1", "ES", "10.00", at(17, 5)), Now: at(17, 24)},
		{Delivery: upgradeDelivery("P-4", "ES", "7.00", at(17, 18)), Now: at(17, 24)},
		{Delivery: upgradeDelivery("P-5", "FR", "3.00", at(14, 30)), Now: at(17, 24)},
		{Delivery: upgradeDelivery("P-6", "ES", "1.00", at(17, 19)), Now: at(17, 24)},
	}
	res, err := p.HandleBatch(ctx, pushes)
	if err != nil {
		t.Fatal(err)
	}
	type fate struct{ Hora, HoraRecorded, SKU, SKURecorded stream.Fate }
	var got []fate
	for _, r := range res {
		got = append(got, fate{r.Aggregations[0].Fate, r.Aggregations[0].Recorded, r.Aggregations[1].Fate, r.Aggregations[1].Recorded})
	}
	want := []fate{
		{stream.Duplicate, stream.Accepted, stream.Duplicate, ""},
		{stream.Duplicate, stream.Accepted, stream.Duplicate, ""},
		{stream.Duplicate, stream.TooLate, stream.Duplicate, ""},
		{stream.Accepted, "", stream.Accepted, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("fates (-want +got):\n%s", diff)
	}
	// The fence: the previous version reads the watermark in every order
	// transaction and refuses layout 2.
	if w := docData(t, st, "aggregations/ventas_hora_pais/control/watermark"); !strings.Contains(w, `"layout":2`) {
		t.Errorf("watermark after the first order of layout 2: %s, want it stamped layout 2", w)
	}
	var ctl struct {
		Since       time.Time `json:"since"`
		LegacyUntil time.Time `json:"legacy_until"`
		Legacy      []string  `json:"legacy"`
	}
	if err := json.Unmarshal([]byte(docData(t, st, "stream/dedup")), &ctl); err != nil {
		t.Fatal(err)
	}
	wantCtl := ctl
	wantCtl.Since, wantCtl.LegacyUntil, wantCtl.Legacy = at(17, 24), at(17, 24).Add(stream.DedupRetention+stream.LegacyDedupMargin), []string{"ventas_hora_pais"}
	if diff := cmp.Diff(wantCtl, ctl); diff != "" {
		t.Errorf("control document (-want +got):\n%s", diff)
	}

	// The window closes: idle source, W = now - D.
	tr, err := p.Tick(ctx, at(18, 15))
	if err != nil {
		t.Fatal(err)
	}
	dec := func(v string) numeric.Dec {
		d, err := numeric.Parse(v, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	type pane struct {
		Key     string
		Index   int64
		Timing  window.Timing
		Measure window.Measures
	}
	var gotPanes []pane
	for _, ps := range tr.Aggregations[0].Panes {
		gotPanes = append(gotPanes, pane{ps.Key, ps.Index, ps.Timing, ps.Measures})
	}
	wantPanes := []pane{
		{"ES", 1, window.TimingOnTime, window.Measures{Importe: dec("23.00"), Pedidos: 4, Unidades: 4}},
		{"FR", 1, window.TimingOnTime, window.Measures{Importe: dec("20.00"), Pedidos: 1, Unidades: 1}},
	}
	if diff := cmp.Diff(wantPanes, gotPanes); diff != "" {
		t.Errorf("ventas_hora_pais panes after the upgrade (-want +got):\n%s", diff)
	}
	// The new aggregation counts only what this version handled: P-6, in
	// the windows of 17:19 (the last still open: EARLY).
	var skuPanes []pane
	for _, ps := range tr.Aggregations[1].Panes {
		skuPanes = append(skuPanes, pane{ps.Key + "@" + ps.WindowStart.Format("15:04"), ps.Index, ps.Timing, ps.Measures})
	}
	one := window.Measures{Importe: dec("1.00"), Pedidos: 1, Unidades: 1}
	wantSKU := []pane{
		{"MOCH-40L-AZ@16:30", 0, window.TimingOnTime, one},
		{"MOCH-40L-AZ@16:45", 0, window.TimingOnTime, one},
		{"MOCH-40L-AZ@17:00", 0, window.TimingOnTime, one},
		{"MOCH-40L-AZ@17:15", 0, window.TimingEarly, one},
	}
	if diff := cmp.Diff(wantSKU, skuPanes); diff != "" {
		t.Errorf("ventas_sku_hora_movil panes (-want +got):\n%s", diff)
	}

}

func docData(t *testing.T, st docstore.Store, path string) string {
	t.Helper()
	var out string
	err := st.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
		ds, err := tx.Get(path)
		if err != nil {
			return err
		}
		out = string(ds[0].Data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
