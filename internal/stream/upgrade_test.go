package stream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
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
// fate is what a delivery did in both shipped aggregations, and what their
// records said for a duplicate.
type fate struct{ Hora, HoraRecorded, SKU, SKURecorded stream.Fate }

func fates(res []stream.Result) []fate {
	var got []fate
	for _, r := range res {
		got = append(got, fate{r.Aggregations[0].Fate, r.Aggregations[0].Recorded, r.Aggregations[1].Fate, r.Aggregations[1].Recorded})
	}
	return got
}

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

// legacyCollections are the previous layouts' window state, which the
// first tick of layout 3 moves into window documents (migrate.go).
var legacyCollections = []string{"windows", "deltas", "agenda"}

// legacyDocs counts the previous layouts' window-state documents of agg.
func legacyDocs(t *testing.T, st docstore.Store, agg string) int {
	t.Helper()
	n := 0
	for _, c := range legacyCollections {
		ds, err := st.List(context.Background(), "aggregations/"+agg+"/"+c)
		if err != nil {
			t.Fatal(err)
		}
		n += len(ds)
	}
	return n
}

// TestUpgradeFromLayout1 starts from the state the layout-1 binary (commit
// 81dffb3, a dedup record per order and aggregation, window state in
// cells, deltas and an agenda) left mid-window —
// testdata/upgrade/layout1.json, made by
// testdata/upgrade/generate_test.go.txt: ES and FR had their EARLY panes,
// an ES order waited in a delta, an FR order was dropped as too late. This
// version, with both shipped aggregations, must fence the previous binary
// (re-stamp its watermark document), see every order the previous one
// handled as a duplicate (in both aggregations), count a new order once in
// each, move the cells and deltas into window state on its first tick
// without losing or doubling anything, and emit panes that continue the
// pane indexes with every order in them.
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
	redelivered := []stream.Push{
		{Delivery: upgradeDelivery("P-1", "ES", "10.00", at(17, 5)), Now: at(17, 24)},
		{Delivery: upgradeDelivery("P-4", "ES", "7.00", at(17, 18)), Now: at(17, 24)},
		{Delivery: upgradeDelivery("P-5", "FR", "3.00", at(14, 30)), Now: at(17, 24)},
	}
	pushes := append(slices.Clone(redelivered), stream.Push{Delivery: upgradeDelivery("P-6", "ES", "1.00", at(17, 19)), Now: at(17, 24)})
	res, err := p.HandleBatch(ctx, pushes)
	if err != nil {
		t.Fatal(err)
	}
	old := []fate{
		{stream.Duplicate, stream.Accepted, stream.Duplicate, ""},
		{stream.Duplicate, stream.Accepted, stream.Duplicate, ""},
		{stream.Duplicate, stream.TooLate, stream.Duplicate, ""},
	}
	want := append(slices.Clone(old), fate{stream.Accepted, "", stream.Accepted, ""})
	if diff := cmp.Diff(want, fates(res)); diff != "" {
		t.Fatalf("fates (-want +got):\n%s", diff)
	}
	// The fence: the previous version reads its watermark document in
	// every order transaction and refuses layout 3.
	const wmPath = "aggregations/ventas_hora_pais/control/watermark"
	if w := docData(t, st, wmPath); !strings.Contains(w, `"layout":3`) || !strings.Contains(w, `"watermark":"2026-03-14T17:05:00Z"`) {
		t.Errorf("watermark document after the first order of layout 3: %s, want its W stamped layout 3", w)
	}
	type aggCtl struct {
		Watermark time.Time `json:"watermark"`
		Since     int64     `json:"since"`
	}
	type control struct {
		Layout      int               `json:"layout"`
		Gen         int64             `json:"gen"`
		Aggs        map[string]aggCtl `json:"aggs"`
		Since       time.Time         `json:"since"`
		LegacyUntil time.Time         `json:"legacy_until"`
		Legacy      []string          `json:"legacy"`
	}
	var ctl control
	if err := json.Unmarshal([]byte(docData(t, st, "stream/control")), &ctl); err != nil {
		t.Fatal(err)
	}
	wantCtl := control{Layout: 3, Gen: 1, Aggs: map[string]aggCtl{
		hora.Name: {Watermark: at(17, 5), Since: 1}, // W carried over
		sku.Name:  {Since: 1},                       // new: W at minus infinity
	}, Since: at(17, 24), LegacyUntil: at(17, 24).Add(stream.DedupRetention + stream.LegacyDedupMargin), Legacy: []string{hora.Name}}
	if diff := cmp.Diff(wantCtl, ctl); diff != "" {
		t.Errorf("control document (-want +got):\n%s", diff)
	}
	// Orders write only their dedup records: the previous layout's state
	// (2 cells, 1 delta, 1 agenda) waits for the first tick.
	if n := legacyDocs(t, st, hora.Name); n != 4 {
		t.Errorf("%d documents of the previous layout before the first tick, want 4", n)
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
	panesOf := func(ps []window.Pane) []pane {
		var out []pane
		for _, p := range ps {
			out = append(out, pane{p.Key, p.Index, p.Timing, p.Measures})
		}
		return out
	}
	// ES: P-1, P-3 (in the cell), P-4 (in the delta) and P-6; index 1
	// follows the EARLY pane the previous version emitted.
	wantPanes := []pane{
		{"ES", 1, window.TimingOnTime, window.Measures{Importe: dec("23.00"), Pedidos: 4, Unidades: 4}},
		{"FR", 1, window.TimingOnTime, window.Measures{Importe: dec("20.00"), Pedidos: 1, Unidades: 1}},
	}
	if diff := cmp.Diff(wantPanes, panesOf(tr.Aggregations[0].Panes)); diff != "" {
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
	if n := legacyDocs(t, st, hora.Name); n != 0 {
		t.Errorf("%d documents of the previous layout left after the first tick, want none", n)
	}
	if w := docData(t, st, wmPath); !strings.Contains(w, `"layout":3`) {
		t.Errorf("watermark document after the first tick: %s, want it still stamped layout 3", w)
	}
	if fd := docData(t, st, "aggregations/ventas_hora_pais/control/fold"); strings.Contains(fd, "migrating") {
		t.Errorf("fold document after the first tick: %s, want the migration done", fd)
	}

	// Every order again (the previous version's and this one's) is a
	// duplicate; a late ES order continues the panes at index 2 with every
	// order in it (Ld = 0: it emits its LATE pane itself).
	again := append(slices.Clone(redelivered), stream.Push{Delivery: upgradeDelivery("P-6", "ES", "1.00", at(17, 19)), Now: at(18, 16)},
		stream.Push{Delivery: upgradeDelivery("P-7", "ES", "2.00", at(17, 30)), Now: at(18, 16)})
	for i := range again {
		again[i].Now = at(18, 16)
	}
	res, err = p.HandleBatch(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	want = append(slices.Clone(old), fate{stream.Duplicate, stream.Accepted, stream.Duplicate, stream.Accepted},
		fate{stream.Accepted, "", stream.Accepted, ""})
	if diff := cmp.Diff(want, fates(res)); diff != "" {
		t.Fatalf("fates of the redeliveries (-want +got):\n%s", diff)
	}
	wantLate := []pane{{"ES", 2, window.TimingLate, window.Measures{Importe: dec("25.00"), Pedidos: 5, Unidades: 5}}}
	if diff := cmp.Diff(wantLate, panesOf(res[len(res)-1].Aggregations[0].Panes)); diff != "" {
		t.Errorf("late ES pane after the upgrade (-want +got):\n%s", diff)
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

// errCut is the failure of a store whose process died.
var errCut = errors.New("store gone: the process died")

// cutStore fails every transaction and listing once armed and a
// transaction that wrote window state (state/...) has committed: the
// process died right after the first migration transaction.
type cutStore struct {
	docstore.Store
	mu          sync.Mutex
	armed, down bool
}

func (s *cutStore) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

func (s *cutStore) restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down, s.armed = false, false
}

func (s *cutStore) RunTx(ctx context.Context, fn func(context.Context, docstore.Tx) error) error {
	if s.isDown() {
		return errCut
	}
	var wrote bool
	err := s.Store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		wrote = false
		return fn(ctx, stateWriteTx{Tx: tx, wrote: &wrote})
	})
	if err == nil && wrote {
		s.mu.Lock()
		s.down = s.down || s.armed
		s.mu.Unlock()
	}
	return err
}

func (s *cutStore) List(ctx context.Context, collection string) ([]docstore.Doc, error) {
	if s.isDown() {
		return nil, errCut
	}
	return s.Store.List(ctx, collection)
}

func (s *cutStore) ListTag(ctx context.Context, collection, tag string, limit int) ([]docstore.Doc, error) {
	if s.isDown() {
		return nil, errCut
	}
	return s.Store.ListTag(ctx, collection, tag, limit)
}

type stateWriteTx struct {
	docstore.Tx
	wrote *bool
}

func (t stateWriteTx) Set(d docstore.Doc) error {
	if strings.Contains(d.Path, "/state/") {
		*t.wrote = true
	}
	return t.Tx.Set(d)
}

// manyCells adds n cells of the window of 17:00, keys K000..., to the
// layout-1 fixture, each a copy of its ES cell (2 orders, 15.00, EARLY
// pane emitted) with a copy of its ES delta (1 order, 7.00): enough that
// the migration takes more than one transaction (migrateDocsPerTx).
func manyCells(t *testing.T, st docstore.Store, n int) {
	t.Helper()
	const agg = "aggregations/ventas_hora_pais/"
	compact := func(path string) string {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(docData(t, st, path))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return b.String()
	}
	cell, delta := compact(agg+"windows/20260314T170000Z_ES"), compact(agg+"deltas/20260314T170000Z_ES_5")
	err := st.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
		for i := range n {
			k := fmt.Sprintf("K%03d", i)
			docs := []docstore.Doc{
				{Path: agg + "windows/20260314T170000Z_" + k, Data: []byte(strings.Replace(cell, `"key":"ES"`, `"key":"`+k+`"`, 1))},
				{Path: agg + "deltas/20260314T170000Z_" + k + "_5", Data: []byte(strings.Replace(delta, `"key":"ES"`, `"key":"`+k+`"`, 1))},
			}
			for _, d := range docs {
				if !strings.Contains(string(d.Data), k) {
					return fmt.Errorf("no key field in %s", d.Data)
				}
				if err := tx.Set(d); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeMigrationCutShort: the process dies after the first migration
// transaction of the layout-1 state (cells and deltas of 202 keys). The
// fold document says the migration is under way, so nothing folds; an
// order accepted meanwhile waits in its dedup record; the next process's
// tick resumes the migration where it stopped, and the ON_TIME panes hold
// every order exactly once, continuing the previous version's pane index.
func TestUpgradeMigrationCutShort(t *testing.T) {
	ctx := context.Background()
	bolt := newBoltStore(t)
	loadFixture(t, bolt, "testdata/upgrade/layout1.json")
	const extra = 200
	manyCells(t, bolt, extra)
	const agg = "ventas_hora_pais"
	before := legacyDocs(t, bolt, agg)
	if before != 2*extra+4 {
		t.Fatalf("%d layout-1 documents, want %d", before, 2*extra+4)
	}
	st := &cutStore{Store: bolt}
	sink := streamtest.NewSink()
	hora := window.Defaults()
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	handle := func(p *stream.Processor, d order.Delivery, now time.Time, want stream.Fate) {
		t.Helper()
		res, err := p.Handle(ctx, d, now)
		if err != nil || res.Fate() != want {
			t.Fatalf("%s: %+v %v, want %s", d.Message.MessageID, res, err, want)
		}
	}
	p1, err := stream.New(st, sink, []window.Spec{hora}, streamtest.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	handle(p1, upgradeDelivery("P-6", "ES", "1.00", at(17, 19)), at(17, 24), stream.Accepted)

	st.mu.Lock()
	st.armed = true
	st.mu.Unlock()
	if _, err := p1.Tick(ctx, at(18, 15)); !errors.Is(err, errCut) {
		t.Fatalf("tick that died mid-migration: %v, want the store failure", err)
	}
	st.restore()
	left := legacyDocs(t, bolt, agg)
	if left == 0 || left >= before {
		t.Fatalf("%d of %d layout-1 documents left after the first migration transaction, want some moved and some left", left, before)
	}
	if fd := docData(t, bolt, "aggregations/"+agg+"/control/fold"); !strings.Contains(fd, `"migrating":true`) {
		t.Fatalf("fold document after the cut: %s, want the migration under way", fd)
	}
	if n := sink.Count(stream.PanesTable(agg)); n != 0 {
		t.Fatalf("%d panes from a migration cut short, want none", n)
	}

	// The next process: an order while the migration is pending (W did
	// not move: on time), then its tick once the dead tick's lease ran out
	// and the source is idle (W = now - D, past the window's end).
	p2, err := stream.New(st, sink, []window.Spec{hora}, streamtest.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	handle(p2, upgradeDelivery("P-9", "ES", "9.00", at(17, 50)), at(18, 16), stream.Accepted)
	next := at(18, 16).Add(hora.IdleTimeout + time.Minute)
	if lease := at(18, 15).Add(stream.TickLease); !next.After(lease) {
		t.Fatalf("tick at %s within the dead tick's lease (until %s)", next, lease)
	}
	tr, err := p2.Tick(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if n := legacyDocs(t, bolt, agg); n != 0 {
		t.Errorf("%d layout-1 documents left after the resumed migration, want none", n)
	}
	if fd := docData(t, bolt, "aggregations/"+agg+"/control/fold"); strings.Contains(fd, "migrating") {
		t.Errorf("fold document after the resumed migration: %s, want it done", fd)
	}
	type pane struct {
		Index   int64
		Timing  window.Timing
		Importe string
		Pedidos int64
	}
	got := map[string]pane{}
	for _, p := range tr.Aggregations[0].Panes {
		if _, ok := got[p.Key]; ok {
			t.Errorf("two panes of %s: %+v", p.Key, p)
		}
		got[p.Key] = pane{p.Index, p.Timing, p.Measures.Importe.String(), p.Measures.Pedidos}
	}
	// Every key: its cell (2 orders, 15.00) and its delta (1, 7.00) once;
	// ES also P-6 and P-9, handled by this version.
	want := map[string]pane{
		"ES": {1, window.TimingOnTime, "32", 5},
		"FR": {1, window.TimingOnTime, "20", 1},
	}
	for i := range extra {
		want[fmt.Sprintf("K%03d", i)] = pane{1, window.TimingOnTime, "22", 3}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ON_TIME panes after the resumed migration (-want +got):\n%s", diff)
	}
	if n := sink.Count(stream.PanesTable(agg)); n != len(want) {
		t.Errorf("%d panes in the warehouse, want %d", n, len(want))
	}
	// The previous version's orders and this one's are duplicates.
	for _, id := range []string{"P-1", "P-4", "P-6", "P-9"} {
		handle(p2, upgradeDelivery(id, "ES", "1.00", at(17, 19)), at(18, 20), stream.Duplicate)
	}
}

// TestUpgradeFromLayout2 starts from the state the layout-2 binary (commit
// 242660c: one dedup record per order for every aggregation, window state
// in cells, deltas and agendas, both shipped aggregations) left mid-window
// — testdata/upgrade/layout2.json, made by
// testdata/upgrade/generate_layout2_test.go.txt, the same story as
// layout1.json's but in both aggregations; P-5 was too late for the hour
// and late, with its LATE panes, in two sliding windows. This is the
// upgrade production takes. Every order the previous version handled is a
// duplicate (its dedup records stay where they are), its cells and deltas
// move into window state on the first tick, and the panes continue with
// every order once.
func TestUpgradeFromLayout2(t *testing.T) {
	ctx := context.Background()
	st := newBoltStore(t)
	loadFixture(t, st, "testdata/upgrade/layout2.json")
	sink := streamtest.NewSink()
	hora, sku := window.Defaults(), skuSpec()
	p, err := stream.New(st, sink, []window.Spec{hora, sku}, streamtest.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 14, h, m, 0, 0, time.UTC) }
	olds := []stream.Push{
		{Delivery: upgradeDelivery("P-1", "ES", "10.00", at(17, 5))},
		{Delivery: upgradeDelivery("P-4", "ES", "7.00", at(17, 18))},
		{Delivery: upgradeDelivery("P-5", "FR", "3.00", at(14, 30))},
	}
	oldFates := []fate{
		{stream.Duplicate, stream.Accepted, stream.Duplicate, stream.Accepted},
		{stream.Duplicate, stream.Accepted, stream.Duplicate, stream.Accepted},
		{stream.Duplicate, stream.TooLate, stream.Duplicate, stream.Accepted},
	}
	batch := func(now time.Time, ps ...stream.Push) []stream.Push {
		out := slices.Clone(ps)
		for i := range out {
			out[i].Now = now
		}
		return out
	}
	p6 := stream.Push{Delivery: upgradeDelivery("P-6", "ES", "1.00", at(17, 19))}
	res, err := p.HandleBatch(ctx, batch(at(17, 24), append(slices.Clone(olds), p6)...))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(slices.Clone(oldFates), fate{stream.Accepted, "", stream.Accepted, ""}), fates(res)); diff != "" {
		t.Fatalf("fates (-want +got):\n%s", diff)
	}
	for _, s := range []window.Spec{hora, sku} {
		path := "aggregations/" + s.Name + "/control/watermark"
		if w := docData(t, st, path); !strings.Contains(w, `"layout":3`) || !strings.Contains(w, `"watermark":"2026-03-14T17:05:00Z"`) {
			t.Errorf("%s after the first order of layout 3: %s, want its W stamped layout 3", path, w)
		}
	}
	var ctl struct {
		Gen         int64                                 `json:"gen"`
		Aggs        map[string]struct{ Watermark string } `json:"aggs"`
		Since       time.Time                             `json:"since"`
		LegacyUntil time.Time                             `json:"legacy_until"`
		Legacy      []string                              `json:"legacy"`
	}
	if err := json.Unmarshal([]byte(docData(t, st, "stream/control")), &ctl); err != nil {
		t.Fatal(err)
	}
	// Layout 2's upgrade window (from layout 1) carries on as it started:
	// since and legacy_until are copied from stream/dedup.
	if !ctl.Since.Equal(at(17, 20)) || !ctl.LegacyUntil.Equal(at(17, 20).Add(stream.DedupRetention+stream.LegacyDedupMargin)) ||
		len(ctl.Legacy) != 0 || ctl.Gen != 1 || len(ctl.Aggs) != 2 {
		t.Errorf("control document %+v, want layout 2's since and legacy_until, no legacy aggregation, generation 1, both aggregations", ctl)
	}

	tr, err := p.Tick(ctx, at(18, 15))
	if err != nil {
		t.Fatal(err)
	}
	type pane struct {
		Key     string
		Index   int64
		Timing  window.Timing
		Importe string
		Pedidos int64
	}
	panesOf := func(ps []window.Pane) []pane {
		var out []pane
		for _, p := range ps {
			out = append(out, pane{p.Key + "@" + p.WindowStart.Format("15:04"), p.Index, p.Timing, p.Measures.Importe.String(), p.Measures.Pedidos})
		}
		return out
	}
	wantHora := []pane{
		{"ES@17:00", 1, window.TimingOnTime, "23", 4}, // P-1, P-3 (cell), P-4 (delta), P-6
		{"FR@17:00", 1, window.TimingOnTime, "20", 1},
	}
	if diff := cmp.Diff(wantHora, panesOf(tr.Aggregations[0].Panes)); diff != "" {
		t.Errorf("ventas_hora_pais panes after the upgrade (-want +got):\n%s", diff)
	}
	// Every order of the story but P-5 (14:30) is in the windows of
	// 16:15..17:15 that hold its event time; index 1 follows the EARLY
	// panes of the previous version.
	wantSKU := []pane{
		{"MOCH-40L-AZ@16:15", 1, window.TimingOnTime, "30", 2}, // P-1, P-2
		{"MOCH-40L-AZ@16:30", 1, window.TimingOnTime, "43", 5}, // P-1, P-2, P-3, P-4, P-6
		{"MOCH-40L-AZ@16:45", 1, window.TimingOnTime, "43", 5}, // the same
		{"MOCH-40L-AZ@17:00", 1, window.TimingOnTime, "43", 5}, // the same
		{"MOCH-40L-AZ@17:15", 1, window.TimingEarly, "13", 3},  // P-3, P-4, P-6: still open
	}
	if diff := cmp.Diff(wantSKU, panesOf(tr.Aggregations[1].Panes)); diff != "" {
		t.Errorf("ventas_sku_hora_movil panes after the upgrade (-want +got):\n%s", diff)
	}
	// P-5's late windows (14:15, 14:30) expire at W = 18:05, their LATE
	// panes already emitted by the previous version.
	if n := tr.Aggregations[1].Expired; n != 2 {
		t.Errorf("%d keys expired in %s, want P-5's two late windows", n, sku.Name)
	}
	for _, s := range []window.Spec{hora, sku} {
		if n := legacyDocs(t, st, s.Name); n != 0 {
			t.Errorf("%s: %d documents of the previous layout after the first tick, want none", s.Name, n)
		}
	}

	p7 := stream.Push{Delivery: upgradeDelivery("P-7", "ES", "2.00", at(17, 30))}
	res, err = p.HandleBatch(ctx, batch(at(18, 16), append(slices.Clone(olds), p6, p7)...))
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(oldFates), fate{stream.Duplicate, stream.Accepted, stream.Duplicate, stream.Accepted},
		fate{stream.Accepted, "", stream.Accepted, ""})
	if diff := cmp.Diff(want, fates(res)); diff != "" {
		t.Fatalf("fates of the redeliveries (-want +got):\n%s", diff)
	}
	wantLate := []pane{{"ES@17:00", 2, window.TimingLate, "25", 5}}
	if diff := cmp.Diff(wantLate, panesOf(res[len(res)-1].Aggregations[0].Panes)); diff != "" {
		t.Errorf("late ES pane after the upgrade (-want +got):\n%s", diff)
	}
	// In the SKU's sliding windows P-7 (17:30) is late in those of 16:45
	// and 17:00 (ended), on time in 17:15 and 17:30.
	wantLateSKU := []pane{
		{"MOCH-40L-AZ@16:45", 2, window.TimingLate, "45", 6},
		{"MOCH-40L-AZ@17:00", 2, window.TimingLate, "45", 6},
	}
	if diff := cmp.Diff(wantLateSKU, panesOf(res[len(res)-1].Aggregations[1].Panes)); diff != "" {
		t.Errorf("late SKU panes after the upgrade (-want +got):\n%s", diff)
	}
}

// TestUpgradeKeepsDeltaTimesInW: the previous layout's watermark document
// had not yet observed the orders waiting in deltas (its tick observed
// them when it listed the deltas): in the fixture, P-4 (event 17:18,
// accepted 17:23) is only in deltas. The upgrade must not forget their
// times: at 17:26 the source is not idle (P-4 came 3 minutes ago), so W =
// 17:18 - D = 17:08 in both aggregations, as the previous version's tick
// would have made it, not the idle now - D = 17:16.
func TestUpgradeKeepsDeltaTimesInW(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		specs   []window.Spec
	}{
		{name: "layout 1", fixture: "testdata/upgrade/layout1.json", specs: []window.Spec{window.Defaults()}},
		{name: "layout 2", fixture: "testdata/upgrade/layout2.json", specs: []window.Spec{window.Defaults(), skuSpec()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newBoltStore(t)
			loadFixture(t, st, tt.fixture)
			p, err := stream.New(st, streamtest.NewSink(), tt.specs, streamtest.IsCountry, logging.Discard())
			if err != nil {
				t.Fatal(err)
			}
			tr, err := p.Tick(context.Background(), time.Date(2026, 3, 14, 17, 26, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			want := time.Date(2026, 3, 14, 17, 8, 0, 0, time.UTC)
			for _, a := range tr.Aggregations {
				if !a.Watermark.Equal(want) {
					t.Errorf("%s: W %s after the first tick of layout 3, want %s (P-4's event time - D)", a.Aggregation, a.Watermark.Format("15:04"), want.Format("15:04"))
				}
			}
		})
	}
}
